import type pg from 'pg';
import { eventually } from '../helpers.ts';
import { type Started, spawnService, stopProcess } from '../processes.ts';

/**
 * The harness of the kill tests: N worker processes (`src/main.ts worker`, as `npm start -- worker`
 * runs it) on one database; the one that `busy` says is in the middle of the work under test is
 * killed with SIGKILL; the test then waits for the others to take over. A new kind of work (KB
 * ingestion, a sequence tick, an SDR tick) is a `busy` and a `done` check:
 *
 *   const fleet = await startWorkers(2, env);
 *   await killMidWork(fleet, (worker) => holdsSomething(pool, worker));
 *   await fleet.tookOver(() => nothingStuck(pool), 30_000);
 *   await fleet.stop();
 */
export interface Fleet {
  /** The worker `killMidWork` killed (before the kill: the first worker). */
  victim: Started;
  /** The workers left to take over. */
  survivors: Started[];
  /** When the victim was killed (ms since the epoch), once it was. */
  killedAt: number | null;
  /** Waits until `done` holds; returns how long after the kill it did. */
  tookOver(done: () => Promise<boolean>, timeoutMs: number): Promise<number>;
  stop(): Promise<void>;
}

/** Starts `count` worker processes with `env` (a test's `testEnv(...)`), each ready when it returns. */
export async function startWorkers(count: number, env: Record<string, string>): Promise<Fleet> {
  const workers = await startProcesses('worker', count, env);
  const fleet: Fleet = {
    victim: workers[0],
    survivors: workers.slice(1),
    killedAt: null,
    tookOver: async (done, timeoutMs) => {
      await eventually(done, timeoutMs, 100);
      return Date.now() - (fleet.killedAt ?? Date.now());
    },
    stop: async () => {
      for (const worker of workers) if (worker.child.exitCode === null) worker.child.kill('SIGKILL');
      await Promise.all(workers.map((worker) => worker.exited));
    },
  };
  return fleet;
}

/**
 * Starts `count` processes of one role at once and waits until every one is ready (`/readyz` for the
 * API, the "worker running" log line for a worker); if one fails, all are killed.
 */
export async function startProcesses(
  role: 'api' | 'worker',
  count: number,
  env: Record<string, string>,
): Promise<Started[]> {
  // A worker says it runs at LOG_LEVEL=info.
  const roleEnv = role === 'worker' ? { ...env, LOG_LEVEL: 'info' } : env;
  const started = await Promise.all(Array.from({ length: count }, () => spawnService(role, roleEnv)));
  try {
    await eventually(
      async () => {
        for (const one of started) {
          if (one.child.exitCode !== null) throw new Error(`${role} exited early: ${one.output()}`);
          if (role === 'worker' && !one.output().includes('"worker running"')) return false;
          if (role === 'api') {
            const ready = await fetch(`http://127.0.0.1:${one.port}/readyz`).catch(() => null);
            if (!ready?.ok) return false;
          }
        }
        return true;
      },
      120_000,
      200,
    );
  } catch (error) {
    for (const one of started) one.child.kill('SIGKILL');
    throw error;
  }
  return started;
}

/**
 * Waits until `busy` holds for one of the fleet's workers, then kills that one with SIGKILL (it
 * becomes the victim; the rest are the survivors) and waits for it to be gone. Any worker may be the
 * one that picked the work up.
 */
export async function killMidWork(
  fleet: Fleet,
  busy: (worker: Started) => Promise<boolean>,
  timeoutMs = 60_000,
) {
  const workers = [fleet.victim, ...fleet.survivors];
  let victim: Started | undefined;
  await eventually(
    async () => {
      for (const worker of workers) {
        if (worker.child.exitCode !== null) throw new Error(`a worker exited: ${worker.output()}`);
        if (await busy(worker)) {
          victim = worker;
          return true;
        }
      }
      return false;
    },
    timeoutMs,
    50,
  );
  fleet.victim = victim!;
  fleet.survivors = workers.filter((worker) => worker !== victim);
  victim!.child.kill('SIGKILL');
  await victim!.exited;
  fleet.killedAt = Date.now();
}

/** The graphile-worker ids a worker process locks jobs under, from its heartbeat. */
export async function jobWorkerIds(pool: pg.Pool, worker: Started): Promise<string[]> {
  const { rows } = await pool.query('SELECT job_worker_ids FROM worker_heartbeats WHERE pid = $1', [
    worker.child.pid,
  ]);
  return rows.flatMap((row) => row.job_worker_ids);
}

/** graphile-worker jobs locked under any of `ids`, by task. */
export async function jobsLockedBy(pool: pg.Pool, ids: string[]): Promise<{ id: string; task: string }[]> {
  if (ids.length === 0) return [];
  const { rows } = await pool.query(
    `SELECT j.id::text, t.identifier AS task FROM graphile_worker._private_jobs j
     JOIN graphile_worker._private_tasks t ON t.id = j.task_id
     WHERE j.locked_by = ANY($1::text[])`,
    [ids],
  );
  return rows;
}

export { stopProcess };

/**
 * Whether one of `worker`'s database connections is inside a transaction that holds every one of
 * `locks` (table → lock mode, as `pg_locks` names it): each process names its connections
 * `agency-platform <role> <pid>`. A `FOR UPDATE` row lock shows as `RowShareLock` on its table, a
 * write as `RowExclusiveLock`.
 */
export async function inTransactionHolding(
  pool: pg.Pool,
  worker: Started,
  locks: Record<string, string>,
): Promise<boolean> {
  const tables = Object.keys(locks);
  const { rows } = await pool.query(
    `SELECT a.pid FROM pg_stat_activity a
     JOIN pg_locks l ON l.pid = a.pid AND l.locktype = 'relation' AND l.granted
     JOIN unnest($2::text[], $3::text[]) AS wanted(tbl, mode)
       ON l.relation = wanted.tbl::regclass AND l.mode = wanted.mode
     WHERE a.application_name = $1
     GROUP BY a.pid HAVING count(*) = cardinality($2::text[])`,
    [`agency-platform worker ${worker.child.pid}`, tables, tables.map((table) => locks[table])],
  );
  return rows.length > 0;
}
