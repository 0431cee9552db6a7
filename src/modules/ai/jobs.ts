import type { Platform } from '../../platform/context.ts';
import type { Db } from '../../platform/db/pool.ts';
import type { Loop } from '../../platform/jobs/runner.ts';
import { generations, giveUpClaim, SWEEP_BATCH } from './service.ts';

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

/**
 * One round of the sweep: gives up, and refunds, claims whose lease ran out (their process died); how many.
 * Each is taken under the sweep's lease and given up in a transaction of its own (the lease's). Giving up
 * is the end of a dead claim either way, so there is no attempt to count: one that fails is taken again by
 * a later sweep once this sweep's lease is over.
 */
export async function sweepExpiredClaims(db: Db): Promise<number> {
  let released = 0;
  for (const lease of await generations.claim(db, SWEEP_BATCH)) {
    const givenUp = await lease.inTransaction(async (trx, row) => {
      await giveUpClaim(trx, row);
      return true;
    });
    if (givenUp) released++;
  }
  return released;
}
