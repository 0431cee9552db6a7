import { agentJobs } from './modules/agents/jobs.ts';
import { gistJobs } from './modules/ai/jobs.ts';
import { aiJobLoops } from './modules/ai-jobs/jobs.ts';
import { callJobs } from './modules/calls/jobs.ts';
import { knowledgeJobs } from './modules/knowledge/jobs.ts';
import { messagingJobs } from './modules/messaging/jobs.ts';
import { sdrJobs } from './modules/sdr/jobs.ts';
import { sequenceJobs } from './modules/sequences/jobs.ts';
import { sendDueSoonReminders, TASK_REMINDERS_TASK } from './modules/tasks/reminders.ts';
import { userJobs } from './modules/users/jobs.ts';
import { walletIndexJobs } from './modules/wallet-feed/jobs.ts';
import { webhookJobs } from './modules/webhooks/jobs.ts';
import type { Platform } from './platform/context.ts';
import { type AnyEventConsumer, relayEvents } from './platform/events/outbox-relay.ts';
import { deleteExpiredIdempotencyKeys } from './platform/http/idempotency.ts';
import type { JobRegistry } from './platform/jobs/runner.ts';

/**
 * Every background task and cron entry of the service, in one place. A module adds its own here.
 * Each task and loop is the edge of its use case: it opens its own transactions with `inTransaction`.
 */
export function jobRegistry(platform: Platform): JobRegistry {
  const { db, config } = platform;
  const webhooks = webhookJobs(platform);
  const eventConsumers: AnyEventConsumer[] = [webhooks.consumer];
  const walletIndex = walletIndexJobs(platform);
  const agents = agentJobs(platform);
  const calls = callJobs(platform);
  const messaging = messagingJobs(platform);
  const sequences = sequenceJobs(platform);
  const gists = gistJobs(platform);
  const knowledge = knowledgeJobs(platform);
  const sdr = sdrJobs(platform);
  const users = userJobs(platform);
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
      ...agents.tasks,
      ...calls.tasks,
      ...knowledge.tasks,
      ...sdr.tasks,
      ...users.tasks,
    },
    crontab: [
      '17 * * * * idempotency_cleanup',
      `* * * * * ${TASK_REMINDERS_TASK}`,
      ...webhooks.crontab,
      ...agents.crontab,
      ...knowledge.crontab,
      ...users.crontab,
    ],
    loops: [
      {
        name: 'events_outbox',
        intervalMs: config.outboxPollMs,
        run: () =>
          relayEvents(db, eventConsumers, {
            maxAttempts: config.outboxMaxAttempts,
            retryBaseMs: config.outboxRetryBaseMs,
            retryMaxMs: config.outboxRetryMaxMs,
            log: platform.log,
          }),
      },
      ...webhooks.loops,
      ...walletIndex.loops,
      ...calls.loops,
      ...messaging.loops,
      ...sequences.loops,
      ...gists.loops,
      ...knowledge.loops,
      ...aiJobLoops(platform),
      ...sdr.loops,
    ],
    startup: [...walletIndex.startup],
  };
}
