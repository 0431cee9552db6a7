import type { Db } from '../../platform/db/pool.ts';
import { inTransaction } from '../../platform/db/transaction.ts';
import { enqueueJob } from '../../platform/jobs/queue.ts';
import type { VoiceProgress, VoiceProgressSink } from '../../providers/voice/index.ts';
import { applyProgress, type CallProgressHook } from './progress.ts';

export const CALL_PROGRESS_TASK = 'call_progress';

/**
 * Where the voice provider reports: a report now is applied in a transaction of its own; a report
 * for later is a job that applies it then, keyed by the report's id, so it survives the process.
 */
export function callProgressSink(db: Db, progressed: CallProgressHook): VoiceProgressSink {
  return {
    report: (progress) => applyReport(db, progressed, progress),
    reportLater: (progress, afterMs) =>
      enqueueJob(db, CALL_PROGRESS_TASK, progress as unknown as Record<string, unknown>, {
        runAt: new Date(Date.now() + afterMs),
        jobKey: progress.id,
      }),
  };
}

/** The edge of a progress report (provider webhook, delayed report job, the simulator): one transaction. */
export async function applyReport(
  db: Db,
  progressed: CallProgressHook,
  progress: VoiceProgress,
): Promise<void> {
  await inTransaction(db, (trx) => applyProgress(trx, progressed, progress));
}
