import type { Platform } from '../../platform/context.ts';
import type { JobHandler, Loop } from '../../platform/jobs/runner.ts';
import { ingestionLoop, purgeDeletedDocuments } from './ingest.ts';

export const KB_CLEANUP_TASK = 'kb_cleanup';

/** Knowledge-base background work: the ingestion loop and the clean-up of deleted documents. */
export function knowledgeJobs(platform: Platform): {
  tasks: Record<string, JobHandler>;
  crontab: string[];
  loops: Loop[];
} {
  const { db, config, log } = platform;
  const { storage } = platform.providers;
  return {
    tasks: {
      [KB_CLEANUP_TASK]: async () => {
        await purgeDeletedDocuments(db, storage, log);
      },
    },
    crontab: [`*/5 * * * * ${KB_CLEANUP_TASK}`],
    loops: [
      ingestionLoop({
        db,
        storage,
        fetch: {
          maxBytes: config.kbFetchMaxBytes,
          timeoutMs: config.kbFetchTimeoutMs,
          allowPrivate: config.outboundAllowPrivate,
        },
        leaseMs: config.kbIngestLeaseMs,
        pollMs: config.kbIngestPollMs,
        retrySchedule: config.kbIngestRetrySchedule,
        log,
      }),
    ],
  };
}
