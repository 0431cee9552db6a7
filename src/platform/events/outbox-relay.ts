import type { Db } from '../db/pool.ts';
import { inTransaction } from '../db/transaction.ts';
import { metrics } from '../metrics.ts';
import type { EventScope } from './emit.ts';
import { type EventEnvelope, toEnvelope } from './emit.ts';

const BATCH = 200;
/** Events of one batch handed to the consumers at once. */
const PARALLEL = 16;

const dispatched = metrics.counter(
  'events_dispatched_total',
  'Events the outbox relay handed to every consumer.',
);

/**
 * Something that reacts to every committed event (webhook delivery is one). It must be quick (record
 * what is to be done, do slow work elsewhere) and safe to run twice for one event.
 */
export type EventConsumer = (db: Db, event: EventEnvelope, scope: EventScope) => Promise<void>;

/**
 * The outbox relay, run by every worker process: claims a batch of committed, undispatched events
 * (FOR NO KEY UPDATE SKIP LOCKED, so workers never share an event), hands each to every consumer, and marks
 * them dispatched in the claiming transaction. A worker that dies mid-batch rolls the claim back and
 * another worker runs the batch again; consumers are idempotent, so nothing is lost or doubled.
 * Returns true when the batch was full (there may be more right away).
 */
export async function relayEvents(db: Db, consumers: EventConsumer[]): Promise<boolean> {
  const count = await inTransaction(db, async (trx) => {
    const rows = await trx
      .selectFrom('events')
      .selectAll()
      .where('dispatched_at', 'is', null)
      .orderBy('id')
      .limit(BATCH)
      // NO KEY UPDATE, not UPDATE: a consumer may insert rows referencing the event from another
      // connection, and their foreign-key checks must not wait on this claim.
      .forNoKeyUpdate()
      .skipLocked()
      .execute();
    if (rows.length === 0) return 0;

    for (let start = 0; start < rows.length; start += PARALLEL) {
      await Promise.all(
        rows.slice(start, start + PARALLEL).map(async (row) => {
          const event = toEnvelope(row);
          for (const consume of consumers)
            await consume(db, event, { orgId: row.org_id, clientId: row.client_id });
        }),
      );
    }
    await trx
      .updateTable('events')
      .set({ dispatched_at: new Date() })
      .where(
        'id',
        'in',
        rows.map((row) => row.id),
      )
      .execute();
    return rows.length;
  });
  dispatched.inc(count);
  return count === BATCH;
}
