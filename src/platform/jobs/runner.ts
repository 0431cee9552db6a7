import { Logger as GraphileLogger, type Runner, run, type Task, type TaskList } from 'graphile-worker';
import type { Logger } from 'pino';
import type { DatabaseHandle } from '../db/pool.ts';

/** A background task: its payload is untrusted input, and it must be safe to run twice. */
export type JobHandler = (payload: unknown) => Promise<void>;

export interface JobRegistry {
  tasks: Record<string, JobHandler>;
  /** graphile-worker crontab lines, e.g. `0 * * * * idempotency_cleanup`; task names use [a-z_]. */
  crontab: string[];
  /** Tasks queued each time a worker starts (job key = task name, so workers starting together queue one). */
  startup?: string[];
}

export interface WorkerOptions {
  concurrency: number;
  pollInterval?: number;
}

/** Runs the job queue. Jobs are claimed with SKIP LOCKED, so several worker processes never run one job twice. */
export async function startWorker(
  database: DatabaseHandle,
  registry: JobRegistry,
  log: Logger,
  options: WorkerOptions,
): Promise<Runner> {
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
  return runner;
}
