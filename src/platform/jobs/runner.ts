import { Logger as GraphileLogger, type Runner, run, type Task, type TaskList } from 'graphile-worker';
import type { Logger } from 'pino';
import type { DatabaseHandle } from '../db/pool.ts';

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
  const runner = await run({
    pgPool: database.pool,
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
  for (const task of registry.startup ?? []) await runner.addJob(task, {}, { jobKey: `startup:${task}` });

  let stopping = false;
  const loops = registry.loops.map(async (loop) => {
    while (!stopping) {
      let more = false;
      try {
        more = await loop.run();
      } catch (error) {
        log.error({ err: error, loop: loop.name }, 'worker loop failed; retrying');
      }
      if (!more && !stopping) await new Promise((resolve) => setTimeout(resolve, loop.intervalMs));
    }
  });

  return {
    runner,
    stop: async () => {
      stopping = true;
      await Promise.all(loops);
      await runner.stop();
    },
  };
}
