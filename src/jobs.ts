import { walletIndexJobs } from './modules/wallet-feed/jobs.ts';
import type { Platform } from './platform/context.ts';
import { FAN_OUT_TASK } from './platform/events/emit.ts';
import { type EventConsumer, fanOutTask } from './platform/events/fan-out.ts';
import { deleteExpiredIdempotencyKeys } from './platform/http/idempotency.ts';
import type { JobRegistry } from './platform/jobs/runner.ts';

/** Every background task and cron entry of the service, in one place. A module adds its own here. */
export function jobRegistry(platform: Platform): JobRegistry {
  const { db, config } = platform;
  const eventConsumers: EventConsumer[] = [];
  const walletIndex = walletIndexJobs(platform);
  return {
    tasks: {
      [FAN_OUT_TASK]: fanOutTask(db, eventConsumers),
      idempotency_cleanup: async () => {
        await deleteExpiredIdempotencyKeys(db, config.idempotencyTtlHours);
      },
      ...walletIndex.tasks,
    },
    crontab: ['17 * * * * idempotency_cleanup', ...walletIndex.crontab],
    startup: [...walletIndex.startup],
  };
}
