import { sql } from 'kysely';
import type { Executor } from '../db/pool.ts';

export interface JobOptions {
  /** When the job may run first; at once when omitted. */
  runAt?: Date;
  /** A job with this key already queued is not queued twice (see `jobKeyMode`). */
  jobKey?: string;
  /**
   * What a second job with the same key does: `replace` (graphile-worker's default) takes the new
   * payload and run time, `preserve_run_at` the new payload but the first run time, `unsafe_dedupe`
   * keeps the first job as it is.
   */
  jobKeyMode?: 'replace' | 'preserve_run_at' | 'unsafe_dedupe';
  maxAttempts?: number;
}

/**
 * Queues a background job (a graphile-worker task of `src/jobs.ts`), in the caller's transaction when
 * given one: the job exists if and only if the write that asked for it commits.
 *
 * Each queued job notifies the workers, and PostgreSQL serializes the commits of notifying
 * transactions (docs/decisions.md, "Outbox"). Queue a job for work that is not on a hot write path
 * (a delayed report, an ingestion); work caused by every write of a busy route is claimed by a worker
 * loop (`FOR UPDATE SKIP LOCKED`) instead, the way the outbox relay claims events.
 */
export async function enqueueJob(
  db: Executor,
  task: string,
  payload: Record<string, unknown>,
  options: JobOptions = {},
): Promise<void> {
  await sql`SELECT graphile_worker.add_job(
    ${task},
    payload => ${JSON.stringify(payload)}::json,
    run_at => ${options.runAt ?? null}::timestamptz,
    max_attempts => ${options.maxAttempts ?? null}::int,
    job_key => ${options.jobKey ?? null}::text,
    job_key_mode => ${options.jobKeyMode ?? 'replace'}::text
  )`.execute(db);
}
