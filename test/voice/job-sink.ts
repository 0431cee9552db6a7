import { sql } from 'kysely';
import pino from 'pino';
import type { DatabaseHandle, Db } from '../../src/platform/db/pool.ts';
import { startWorker, type Worker } from '../../src/platform/jobs/runner.ts';
import type { VoiceProgress, VoiceProgressSink } from '../../src/providers/voice/types.ts';

const TASK = 'voice_report';

export interface Delivery {
  id: string;
  stage: VoiceProgress['stage'];
  progress: VoiceProgress;
  received_at: Date;
}

/**
 * A sink built the way the calls module is asked to build its own: `report` writes at once,
 * `reportLater` is a graphile-worker job with `run_at` and `job_key` = the report id. Every
 * delivery is recorded (duplicates included), in arrival order.
 */
export async function createJobSink(database: DatabaseHandle): Promise<{
  sink: VoiceProgressSink;
  deliveries(): Promise<Delivery[]>;
  /** A worker process that applies the queued reports. */
  startWorker(): Promise<Worker>;
}> {
  const db = database.db;
  await sql`CREATE TABLE IF NOT EXISTS test_voice_deliveries (
    seq bigserial PRIMARY KEY,
    id text NOT NULL,
    stage text NOT NULL,
    progress jsonb NOT NULL,
    received_at timestamptz NOT NULL DEFAULT clock_timestamp()
  )`.execute(db);

  const record = (progress: VoiceProgress) => insert(db, progress);
  return {
    sink: {
      report: record,
      reportLater: async (progress, afterMs) => {
        await sql`SELECT graphile_worker.add_job(${TASK}, payload => ${JSON.stringify(progress)}::json,
          run_at => now() + ${`${afterMs} milliseconds`}::interval, job_key => ${progress.id})`.execute(db);
      },
    },
    deliveries: async () =>
      (
        await sql<Delivery>`SELECT id, stage, progress, received_at FROM test_voice_deliveries ORDER BY seq`.execute(
          db,
        )
      ).rows,
    startWorker: () =>
      startWorker(
        database,
        { tasks: { [TASK]: async (payload) => record(payload as VoiceProgress) }, crontab: [], loops: [] },
        pino({ level: 'silent' }),
        { concurrency: 4, pollInterval: 100 },
      ),
  };
}

async function insert(db: Db, progress: VoiceProgress): Promise<void> {
  await sql`INSERT INTO test_voice_deliveries (id, stage, progress)
    VALUES (${progress.id}, ${progress.stage}, ${JSON.stringify(progress)}::jsonb)`.execute(db);
}
