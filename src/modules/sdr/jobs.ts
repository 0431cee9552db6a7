import type { Platform } from '../../platform/context.ts';
import type { JobHandler, Loop } from '../../platform/jobs/runner.ts';
import { dialerLoop } from './dialer.ts';
import { POST_CALL_EMAIL_TASK, sendPostCallEmail } from './outcomes.ts';

/** The SDR dialer's tick (a loop every `SDR_TICK_MS`) and the post-call summary emails. */
export function sdrJobs(platform: Platform): { tasks: Record<string, JobHandler>; loops: Loop[] } {
  const { db, config, log, providers } = platform;
  return {
    tasks: {
      [POST_CALL_EMAIL_TASK]: async (payload) => {
        await sendPostCallEmail(db, providers.email, log, payload);
      },
    },
    loops: [
      dialerLoop(
        { db, log, briefs: { fuelCost: config.aiJobFuelCost, waitMs: config.sdrPrecallBriefWaitMs } },
        config.sdrTickMs,
      ),
    ],
  };
}
