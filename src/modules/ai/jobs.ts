import type { Platform } from '../../platform/context.ts';
import type { Loop } from '../../platform/jobs/runner.ts';
import { SWEEP_BATCH, sweepExpiredClaims } from './service.ts';

/** How often each worker looks for gist generations whose process died. */
const SWEEP_MS = 60_000;

/** Gives up, and refunds, gist generations whose process died (each worker looks every minute). */
export function gistJobs(platform: Platform): { loops: Loop[] } {
  return {
    loops: [
      {
        name: 'gist_claims',
        intervalMs: SWEEP_MS,
        run: async () => (await sweepExpiredClaims(platform.db)) === SWEEP_BATCH,
      },
    ],
  };
}
