import type { Db } from '../db/pool.ts';
import type { EventScope } from './emit.ts';
import { type EventEnvelope, toEnvelope } from './emit.ts';

/** Something that reacts to every committed event (webhook delivery is one). Must be safe to run twice. */
export type EventConsumer = (db: Db, event: EventEnvelope, scope: EventScope) => Promise<void>;

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
