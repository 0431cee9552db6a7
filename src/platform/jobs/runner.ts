import { EventEmitter } from 'node:events';
import {
  Logger as GraphileLogger,
  type Runner,
  run,
  type Task,
  type TaskList,
  type WorkerEvents,
} from 'graphile-worker';
import type { Logger } from 'pino';
import type { DatabaseHandle } from '../db/pool.ts';
import { metrics } from '../metrics.ts';
import { DEFAULT_STALE_AFTER_MS, heartbeatLoop } from './heartbeat.ts';

/** A loop that failed (the database went away, say) waits at least this long before it tries again. */
const FAILED_LOOP_PAUSE_MS = 1000;

const jobs = metrics.counter(
  'worker_jobs_total',
  'Job attempts run by this process, by task and outcome: succeeded, failed (every attempt that threw), failed_permanently (one with no attempt left).',
  ['task', 'outcome'],
);
const loopRuns = metrics.counter(
  'worker_loop_runs_total',
  'Iterations of the worker loops (outbox relay, webhook sweep, heartbeat, …) by loop and outcome.',
  ['loop', 'outcome'],
);

/** A background task: its payload is untrusted input, and it must be safe to run twice. */
export type JobHandler = (payload: unknown) => Promise<void>;

/**
 * Work a worker process repeats on its own: `run` returns true when there may be more right away,
 * false to sleep `intervalMs`. Every worker process runs every loop; they must claim work with
 * SKIP LOCKED so that several processes never do one piece twice.
 */
export interface Loop {
  name: string;
  intervalMs: number;
  run: () => Promise<boolean>;
}

export interface JobRegistry {
  tasks: Record<string, JobHandler>;
  /** graphile-worker crontab lines, e.g. `0 * * * * idempotency_cleanup`; task names use [a-z_]. */
  crontab: string[];
  loops: Loop[];
  /** Tasks queued each time a worker starts (job key = task name, so workers starting together queue one). */
  startup?: string[];
}

export interface WorkerOptions {
  concurrency: number;
  pollInterval?: number;
  /** `WORKER_STALE_AFTER`: a worker whose heartbeat is this old is dead, and its locked jobs are unlocked. */
  staleAfterMs?: number;
}

export interface Worker {
  runner: Runner;
  /** Stops taking work and waits for running jobs and loop iterations to finish. */
  stop(): Promise<void>;
}

/** Runs the job queue and the loops. Jobs are claimed with SKIP LOCKED, so several worker processes never run one job twice. */
export async function startWorker(
  database: DatabaseHandle,
  registry: JobRegistry,
  log: Logger,
  options: WorkerOptions,
): Promise<Worker> {
  const taskList: TaskList = {};
  for (const [name, handler] of Object.entries(registry.tasks)) {
    taskList[name] = ((payload: unknown) => handler(payload)) as Task;
  }
  // The ids graphile-worker locks jobs under, noted in the heartbeat so that a live worker can
  // unlock the jobs of this process if it dies (see heartbeat.ts).
  const events: WorkerEvents = new EventEmitter();
  const jobWorkerIds = new Set<string>();
  // graphile-worker 0.17 locks under its pool's id; older versions, and some paths, under a worker's.
  events.on('pool:create', ({ workerPool }) => jobWorkerIds.add(workerPool.id));
  events.on('worker:create', ({ worker }) => jobWorkerIds.add(worker.workerId));
  const runner = await run({
    pgPool: database.pool,
    events,
    taskList,
    crontab: registry.crontab.join('\n'),
    concurrency: options.concurrency,
    pollInterval: options.pollInterval ?? 2000,
    noHandleSignals: true,
    noPreparedStatements: false,
    logger: new GraphileLogger((scope) => (level, message, meta) => {
      const fields = { ...scope, ...meta, component: 'worker' };
      if (level === 'error') log.error(fields, message);
      else if (level === 'warning') log.warn(fields, message);
      else log.debug(fields, message);
    }),
  });
  // Cron restarts by itself after a database outage; say when it runs again.
  runner.events.on('cron:started', () => log.info({ component: 'worker' }, 'cron running'));
  runner.events.on('job:success', ({ job }) => jobs.inc({ task: job.task_identifier, outcome: 'succeeded' }));
  runner.events.on('job:error', ({ job }) => jobs.inc({ task: job.task_identifier, outcome: 'failed' }));
  runner.events.on('job:failed', ({ job }) =>
    jobs.inc({ task: job.task_identifier, outcome: 'failed_permanently' }),
  );
  for (const task of registry.startup ?? []) await runner.addJob(task, {}, { jobKey: `startup:${task}` });

  let stopping = false;
  const sleepers = new Set<() => void>();
  const pause = (ms: number) =>
    new Promise<void>((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        sleepers.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      sleepers.add(wake);
    });
  const heartbeat = heartbeatLoop(database.db, {
    jobWorkerIds: () => [...jobWorkerIds],
    staleAfterMs: options.staleAfterMs ?? DEFAULT_STALE_AFTER_MS,
    log,
  });
  const loops = [...registry.loops, heartbeat].map(async (loop) => {
    let failing = false;
    while (!stopping) {
      let more = false;
      try {
        more = await loop.run();
        loopRuns.inc({ loop: loop.name, outcome: 'succeeded' });
        if (failing) log.info({ loop: loop.name }, 'worker loop running again');
        failing = false;
      } catch (error) {
        loopRuns.inc({ loop: loop.name, outcome: 'failed' });
        // Once per outage, not once per tick.
        if (!failing) log.error({ err: error, loop: loop.name }, 'worker loop failed; retrying');
        failing = true;
      }
      if (!more && !stopping)
        await pause(failing ? Math.max(loop.intervalMs, FAILED_LOOP_PAUSE_MS) : loop.intervalMs);
    }
  });

  return {
    runner,
    stop: async () => {
      stopping = true;
      for (const wake of [...sleepers]) wake();
      await Promise.all(loops);
      await runner.stop();
      await heartbeat
        .stopped()
        .catch((error) => log.warn({ err: error }, 'could not note the worker stopped'));
    },
  };
}
