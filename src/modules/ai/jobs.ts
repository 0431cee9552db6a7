import type { Platform } from '../../platform/context.ts';
import type { JobHandler } from '../../platform/jobs/runner.ts';
import { sweepExpiredClaims } from './service.ts';

export const GIST_CLAIMS_SWEEP_TASK = 'gist_claims_sweep';

/** Gives up, and refunds, gist generations whose process died (every minute). */
export function gistJobs(platform: Platform): { tasks: Record<string, JobHandler>; crontab: string[] } {
  return {
    tasks: {
      [GIST_CLAIMS_SWEEP_TASK]: async () => {
        await sweepExpiredClaims(platform.db);
      },
    },
    crontab: [`* * * * * ${GIST_CLAIMS_SWEEP_TASK}`],
  };
}
