import os from 'node:os';
import { sql } from 'kysely';
import { newId } from '../db/ids.ts';
import type { Db, Executor } from '../db/pool.ts';
import type { Loop } from './runner.ts';

interface WorkerHeartbeatsTable {
  worker_id: string;
  hostname: string;
  pid: number;
  started_at: Date;
  beat_at: Date;
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

/** The loop by which a worker process says it runs: one row per process, refreshed every few seconds. */
export function heartbeatLoop(db: Db): Loop {
  const worker = { worker_id: newId(), hostname: os.hostname(), pid: process.pid, started_at: new Date() };
  return {
    name: 'worker_heartbeat',
    intervalMs: HEARTBEAT_MS,
    run: async () => {
      await db
        .insertInto('worker_heartbeats')
        .values({ ...worker, beat_at: new Date() })
        .onConflict((oc) => oc.column('worker_id').doUpdateSet({ beat_at: new Date() }))
        .execute();
      await db
        .deleteFrom('worker_heartbeats')
        .where('beat_at', '<', sql<Date>`now() - ${FORGET_AFTER}::interval`)
        .execute();
      return false;
    },
  };
}

/** The newest beat of any worker process, or null when none ever beat. */
export async function lastHeartbeat(db: Executor): Promise<Date | null> {
  const row = await db
    .selectFrom('worker_heartbeats')
    .select((eb) => eb.fn.max('beat_at').as('beat_at'))
    .executeTakeFirst();
  return row?.beat_at ?? null;
}
