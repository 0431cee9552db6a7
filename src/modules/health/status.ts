import { sql } from 'kysely';
import type { Platform } from '../../platform/context.ts';
import type { Executor } from '../../platform/db/pool.ts';

/** How old the oldest event not yet handed to its consumers is, in seconds; 0 when none waits. */
export async function outboxLagSeconds(db: Executor): Promise<number> {
  const oldest = await db
    .selectFrom('events')
    .select('created_at')
    .where('dispatched_at', 'is', null)
    // A dead event waits for an operator, not for a worker (events_relay_failures_total counts it).
    .where('relay_dead_at', 'is', null)
    .orderBy('id')
    .limit(1)
    .executeTakeFirst();
  return oldest ? Math.max(0, (Date.now() - oldest.created_at.getTime()) / 1000) : 0;
}

/** Jobs of the queue that are due and waiting for a worker. */
export async function queueDepth(db: Executor): Promise<number> {
  const { rows } = await sql<{ depth: number }>`
    SELECT count(*)::int AS depth FROM graphile_worker.jobs
    WHERE locked_at IS NULL AND run_at <= now() AND attempts < max_attempts`.execute(db);
  return rows[0].depth;
}

export interface RateLimitState {
  /** Where the counters live. */
  store: 'in_process' | 'redis';
  reachable: boolean;
  /** False while Redis is unreachable and the limits fail open (`RATE_LIMIT_FAIL_OPEN`): nothing is limited. */
  enforced: boolean;
}

export function rateLimitState(platform: Platform): RateLimitState {
  if (!platform.redis) return { store: 'in_process', reachable: true, enforced: true };
  const reachable = platform.redis.status === 'ready';
  return { store: 'redis', reachable, enforced: reachable || !platform.config.rateLimitFailOpen };
}
