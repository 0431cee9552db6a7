import os from 'node:os';
import { sql } from 'kysely';
import type { Logger } from 'pino';
import { newId } from '../db/ids.ts';
import type { Db, Executor } from '../db/pool.ts';
import { inTransaction } from '../db/transaction.ts';
import { metrics } from '../metrics.ts';
import type { Loop } from './runner.ts';

interface WorkerHeartbeatsTable {
  worker_id: string;
  hostname: string;
  pid: number;
  started_at: Date;
  beat_at: Date;
  /** The graphile-worker ids this process locks jobs under. */
  job_worker_ids: string[];
  /** When a live worker unlocked the jobs of this one, taken for dead. */
  jobs_released_at: Date | null;
}

declare module '../db/schema.ts' {
  interface Database {
    worker_heartbeats: WorkerHeartbeatsTable;
  }
}

/** How often a worker process notes it is alive. */
export const HEARTBEAT_MS = 5000;
/** Beats of processes gone this long are dropped. */
const FORGET_AFTER = '1 day';
/** The default of `WORKER_STALE_AFTER`. */
export const DEFAULT_STALE_AFTER_MS = 60_000;

const takeovers = metrics.counter(
  'worker_takeovers_total',
  'Worker processes taken for dead (heartbeat older than WORKER_STALE_AFTER) whose locked jobs a live worker unlocked.',
);

export interface HeartbeatOptions {
  /** The graphile-worker ids of this process's job runners, as known now. */
  jobWorkerIds: () => string[];
  /** A heartbeat older than this is a dead worker's. */
  staleAfterMs: number;
  log?: Logger;
}

/**
 * The loop by which a worker process says it runs: one row per process, refreshed every few seconds.
 * It also takes over from dead workers: the jobs graphile-worker locked under the ids of a process
 * whose heartbeat is older than `staleAfterMs` are unlocked, so another worker runs them within about
 * `staleAfterMs + HEARTBEAT_MS` of the death rather than graphile-worker's 4 hours. Jobs must be safe
 * to run twice anyway (a worker only paused that long may still finish one).
 */
export function heartbeatLoop(db: Db, options: HeartbeatOptions): Loop & { stopped: () => Promise<void> } {
  const worker = { worker_id: newId(), hostname: os.hostname(), pid: process.pid, started_at: new Date() };
  return {
    name: 'worker_heartbeat',
    intervalMs: Math.min(HEARTBEAT_MS, Math.max(100, Math.floor(options.staleAfterMs / 3))),
    run: async () => {
      const ids = options.jobWorkerIds();
      await db
        .insertInto('worker_heartbeats')
        .values({ ...worker, beat_at: new Date(), job_worker_ids: ids })
        .onConflict((oc) =>
          oc
            .column('worker_id')
            .doUpdateSet({ beat_at: new Date(), job_worker_ids: ids, jobs_released_at: null }),
        )
        .execute();
      await releaseDeadWorkersJobs(db, options.staleAfterMs, options.log);
      await db
        .deleteFrom('worker_heartbeats')
        .where('beat_at', '<', sql<Date>`now() - ${FORGET_AFTER}::interval`)
        .execute();
      return false;
    },
    // A process that stopped cleanly left no job locked: nothing to take over.
    stopped: async () => {
      await db
        .updateTable('worker_heartbeats')
        .set({ jobs_released_at: sql<Date>`now()` })
        .where('worker_id', '=', worker.worker_id)
        .execute();
    },
  };
}

/** Unlocks the graphile-worker jobs of every worker process whose heartbeat is older than `staleAfterMs`. */
export async function releaseDeadWorkersJobs(db: Db, staleAfterMs: number, log?: Logger): Promise<number> {
  const released = await inTransaction(db, async (trx) => {
    const dead = await trx
      .updateTable('worker_heartbeats')
      .set({ jobs_released_at: sql<Date>`now()` })
      .where('jobs_released_at', 'is', null)
      .where('beat_at', '<', sql<Date>`now() - ${`${staleAfterMs} milliseconds`}::interval`)
      .returning(['worker_id', 'hostname', 'pid', 'beat_at', 'job_worker_ids'])
      .execute();
    const ids = dead.flatMap((row) => row.job_worker_ids);
    if (ids.length > 0) await sql`SELECT graphile_worker.force_unlock_workers(${ids}::text[])`.execute(trx);
    return dead;
  });
  for (const row of released)
    log?.warn(
      { workerId: row.worker_id, hostname: row.hostname, pid: row.pid, lastBeat: row.beat_at },
      'worker taken for dead; its locked jobs were unlocked for other workers',
    );
  takeovers.inc(released.length);
  return released.length;
}

/** The newest beat of any worker process, or null when none ever beat. */
export async function lastHeartbeat(db: Executor): Promise<Date | null> {
  const row = await db
    .selectFrom('worker_heartbeats')
    .select((eb) => eb.fn.max('beat_at').as('beat_at'))
    .executeTakeFirst();
  return row?.beat_at ?? null;
}
