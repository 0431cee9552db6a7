import { sql } from 'kysely';
import type { Db } from '../db/pool.ts';
import type { EventScope } from './emit.ts';
import { type EventEnvelope, toEnvelope } from './emit.ts';

export const FAN_OUT_TASK = 'events_fan_out';
const DISPATCH_BATCH = 500;

/** Something that reacts to every committed event (webhook delivery is one). Must be safe to run twice. */
export type EventConsumer = (db: Db, event: EventEnvelope, scope: EventScope) => Promise<void>;

/**
 * The outbox dispatcher: claims committed events not yet dispatched and queues one fan-out job per
 * event, in one transaction, so an event is queued exactly once whichever worker claims it. Returns
 * true when it found a full batch (there may be more right away).
 */
export async function dispatchEvents(db: Db): Promise<boolean> {
  const { rows } = await sql<{ n: number }>`
    WITH batch AS (
      SELECT id FROM events WHERE dispatched_at IS NULL ORDER BY id LIMIT ${DISPATCH_BATCH} FOR UPDATE SKIP LOCKED
    ), claimed AS (
      UPDATE events SET dispatched_at = now() FROM batch WHERE events.id = batch.id RETURNING events.id
    ), queued AS (
      SELECT graphile_worker.add_job(${FAN_OUT_TASK}, json_build_object('event_id', claimed.id)) FROM claimed
    )
    SELECT count(*)::int AS n FROM queued`.execute(db);
  return rows[0].n === DISPATCH_BATCH;
}

/** The fan-out task: loads the event named by the untrusted payload and hands it to every consumer. */
export function fanOutTask(db: Db, consumers: EventConsumer[]) {
  return async (payload: unknown): Promise<void> => {
    const eventId = (payload as { event_id?: unknown } | null)?.event_id;
    if (typeof eventId !== 'string') return;
    const row = await db.selectFrom('events').selectAll().where('id', '=', eventId).executeTakeFirst();
    if (!row) return;
    const event = toEnvelope(row);
    for (const consume of consumers) await consume(db, event, { orgId: row.org_id, clientId: row.client_id });
  };
}
