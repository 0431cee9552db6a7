import { sendDueSoonReminders, TASK_REMINDERS_TASK } from './modules/tasks/reminders.ts';
import { walletIndexJobs } from './modules/wallet-feed/jobs.ts';
import { webhookJobs } from './modules/webhooks/jobs.ts';
import type { Platform } from './platform/context.ts';
import { dispatchEvents, type EventConsumer } from './platform/events/fan-out.ts';
import { deleteExpiredIdempotencyKeys } from './platform/http/idempotency.ts';
import type { JobRegistry } from './platform/jobs/runner.ts';

/** Every background task and cron entry of the service, in one place. A module adds its own here. */
export function jobRegistry(platform: Platform): JobRegistry {
  const { db, config } = platform;
  const webhooks = webhookJobs(platform);
  const eventConsumers: EventConsumer[] = [webhooks.consumer];
  const walletIndex = walletIndexJobs(platform);
  return {
    tasks: {
      idempotency_cleanup: async () => {
        await deleteExpiredIdempotencyKeys(db, config.idempotencyTtlHours);
      },
      [TASK_REMINDERS_TASK]: async () => {
        await sendDueSoonReminders(db, config.taskReminderMinutes);
      },
      ...walletIndex.tasks,
      ...webhooks.tasks,
    },
    crontab: [
      '17 * * * * idempotency_cleanup',
      `* * * * * ${TASK_REMINDERS_TASK}`,
      ...walletIndex.crontab,
      ...webhooks.crontab,
    ],
    loops: [
      {
        name: 'events_outbox',
        intervalMs: config.outboxPollMs,
        run: () => dispatchEvents(db, eventConsumers),
      },
      ...webhooks.loops,
    ],
    startup: [...walletIndex.startup],
  };
}
