import { sql } from 'kysely';
import type { Platform } from '../../platform/context.ts';
import type { Executor } from '../../platform/db/pool.ts';

/** How old the oldest event not yet handed to its consumers is, in seconds; 0 when none waits. */
export async function outboxLagSeconds(db: Executor): Promise<number> {
  // The first event past the relay's position, and the oldest failed one waiting for a retry (a dead
  // event waits for an operator, not for a worker: events_relay_failures_total counts it).
  const { rows } = await sql<{ oldest: Date | null }>`
    SELECT least(
      (SELECT e.created_at FROM event_log e, event_relay r WHERE e.seq > r.position ORDER BY e.seq LIMIT 1),
      (SELECT min(e.created_at) FROM event_relay_failures f
        JOIN event_log e ON e.org_id = f.org_id AND e.id = f.event_id WHERE f.dead_at IS NULL)
    ) AS oldest`.execute(db);
  const oldest = rows[0]?.oldest;
  return oldest ? Math.max(0, (Date.now() - oldest.getTime()) / 1000) : 0;
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
