import type { Platform } from '../../platform/context.ts';
import type { Db } from '../../platform/db/pool.ts';
import { inTransaction } from '../../platform/db/transaction.ts';
import { enqueueJob } from '../../platform/jobs/queue.ts';
import {
  createVoiceProvider,
  type VoiceProgress,
  type VoiceProgressSink,
  type VoiceProvider,
} from '../../providers/voice/index.ts';
import { applyProgress } from './progress.ts';

export const CALL_PROGRESS_TASK = 'call_progress';

/**
 * Where the voice provider reports: a report now is applied in a transaction of its own; a report
 * for later is a job that applies it then, keyed by the report's id, so it survives the process.
 */
export function callProgressSink(db: Db): VoiceProgressSink {
  return {
    report: (progress) => applyReport(db, progress),
    reportLater: (progress, afterMs) =>
      enqueueJob(db, CALL_PROGRESS_TASK, progress as unknown as Record<string, unknown>, {
        runAt: new Date(Date.now() + afterMs),
        jobKey: progress.id,
      }),
  };
}

export async function applyReport(db: Db, progress: VoiceProgress): Promise<void> {
  await inTransaction(db, (trx) => applyProgress(trx, progress));
}

/** The voice provider `VOICE_PROVIDER` names, reporting to the calls module. */
export function callsVoice(platform: Platform): VoiceProvider {
  return createVoiceProvider(platform.config, platform.db, callProgressSink(platform.db));
}
