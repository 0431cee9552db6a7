import { sql } from 'kysely';
import type { Executor } from '../../platform/db/pool.ts';

/**
 * The builtin model's failure switch, in the database so that every process (the API that sets it, the
 * worker that runs a job) sees one count: `POST /admin/v1/simulator/llm/failures {count}` sets it, and
 * each model call takes one failure while any are left.
 */
export interface SimulatedFailures {
  /** True when this call is to fail (one failure was taken). */
  take(): Promise<boolean>;
}

export function simulatedFailures(db: Executor): SimulatedFailures {
  return {
    take: async () => {
      const { rows } = await sql`UPDATE llm_simulated_failures SET remaining = remaining - 1
        WHERE remaining > 0 RETURNING remaining`.execute(db);
      return rows.length > 0;
    },
  };
}

/** Sets how many of the next model calls fail; 0 clears it. */
export async function setSimulatedFailures(db: Executor, count: number): Promise<void> {
  await sql`INSERT INTO llm_simulated_failures (singleton, remaining) VALUES (true, ${count})
    ON CONFLICT (singleton) DO UPDATE SET remaining = excluded.remaining`.execute(db);
}
