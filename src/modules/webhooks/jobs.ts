import type { Platform } from '../../platform/context.ts';
import type { EventBatchConsumer } from '../../platform/events/outbox-relay.ts';
import type { JobHandler, Loop } from '../../platform/jobs/runner.ts';
import { OutboundClient } from '../../platform/outbound/client.ts';
import { DISPATCH_TASK, deleteOldDeliveries } from './delivery-store.ts';
import { WebhookDispatcher } from './dispatcher.ts';
import { webhookConsumer } from './fan-out.ts';

export const USER_AGENT = 'AgencyPlatform-Webhooks/1.0';

/** The webhooks' background work for one worker process: the event consumer, its tasks, cron lines and loop. */
export function webhookJobs(platform: Platform): {
  consumer: EventBatchConsumer;
  tasks: Record<string, JobHandler>;
  crontab: string[];
  loops: Loop[];
} {
  const { config, db } = platform;
  const client = new OutboundClient({
    allowPrivate: config.outboundAllowPrivate,
    timeoutMs: config.webhookTimeoutMs,
    userAgent: USER_AGENT,
  });
  const dispatcher = new WebhookDispatcher({
    db,
    config,
    encryptionKey: platform.secrets.encryptionKey,
    client,
    log: platform.log,
  });
  return {
    consumer: webhookConsumer(dispatcher, config.webhookRetrySchedule),
    tasks: {
      [DISPATCH_TASK]: () => dispatcher.run(),
      webhook_log_cleanup: async () => {
        await deleteOldDeliveries(db, config.webhookLogRetentionDays);
      },
    },
    crontab: ['41 4 * * * webhook_log_cleanup'],
    // The sweep takes over deliveries whose lease a dead worker left behind, and anything a lost wake-up missed.
    loops: [dispatcher.loop('webhook_sweep')],
  };
}
