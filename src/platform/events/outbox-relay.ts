import { sql } from 'kysely';
import type { Logger } from 'pino';
import type { Db, Trx } from '../db/pool.ts';
import { inTransaction } from '../db/transaction.ts';
import { isDatabaseUnavailable } from '../db/unavailable.ts';
import { metrics } from '../metrics.ts';
import type { EventScope } from './emit.ts';
import { type EventEnvelope, toEnvelope } from './emit.ts';

const BATCH = 200;
/** Events of one batch handed to the consumers at once. */
const PARALLEL = 16;
/** Characters of a consumer's error kept on the event. */
const ERROR_CHARS = 1000;

const dispatched = metrics.counter(
  'events_dispatched_total',
  'Events the outbox relay handed to every consumer.',
);
const relayFailures = metrics.counter(
  'events_relay_failures_total',
  'Hand-overs of an event in which a consumer threw, by outcome: retry (it will be handed over again) or dead (no attempt left).',
  ['outcome'],
);

/**
 * Something that reacts to every committed event (webhook delivery is one). It must be quick (record
 * what is to be done, do slow work elsewhere) and safe to run twice for one event.
 */
export type EventConsumer = (db: Db, event: EventEnvelope, scope: EventScope) => Promise<void>;

/** What the relay does with an event a consumer threw on. */
export interface RelayPolicy {
  /** Hand-overs before the event is left dead. */
  maxAttempts: number;
  /** Wait before the first retry, doubled each attempt up to `retryMaxMs`. */
  retryBaseMs: number;
  retryMaxMs: number;
  log?: Logger;
}

export const DEFAULT_RELAY_POLICY: RelayPolicy = { maxAttempts: 10, retryBaseMs: 1000, retryMaxMs: 600_000 };

/** The wait after failed attempt number `attempt` (1-based). */
export function relayBackoffMs(policy: RelayPolicy, attempt: number): number {
  return Math.min(policy.retryMaxMs, policy.retryBaseMs * 2 ** Math.min(attempt - 1, 30));
}

/**
 * The outbox relay, run by every worker process: claims a batch of committed, undispatched events
 * (FOR NO KEY UPDATE SKIP LOCKED, so workers never share an event), hands each to every consumer, and marks
 * them dispatched in the claiming transaction. A worker that dies mid-batch rolls the claim back and
 * another worker runs the batch again; consumers are idempotent, so nothing is lost or doubled.
 *
 * A consumer that throws fails its own event only: the event is handed over again after a backoff
 * and, after `maxAttempts`, left dead (`relay_dead_at`) with its last error, while the rest of the
 * batch, and every other tenant's events, go on. A failure that means the database is unreachable
 * counts against no event: the batch rolls back and is claimed again. Returns true when the batch was full.
 */
export async function relayEvents(
  db: Db,
  consumers: EventConsumer[],
  policy: RelayPolicy = DEFAULT_RELAY_POLICY,
): Promise<boolean> {
  const count = await inTransaction(db, async (trx) => {
    const rows = await trx
      .selectFrom('events')
      .selectAll()
      .where('dispatched_at', 'is', null)
      .where('relay_dead_at', 'is', null)
      .where((eb) => eb.or([eb('relay_retry_at', 'is', null), eb('relay_retry_at', '<=', sql<Date>`now()`)]))
      .orderBy('id')
      .limit(BATCH)
      // NO KEY UPDATE, not UPDATE: a consumer may insert rows referencing the event from another
      // connection, and their foreign-key checks must not wait on this claim.
      .forNoKeyUpdate()
      .skipLocked()
      .execute();
    if (rows.length === 0) return 0;

    const done: { org_id: string; id: string }[] = [];
    const failed: { row: (typeof rows)[number]; error: unknown }[] = [];
    for (let start = 0; start < rows.length; start += PARALLEL) {
      await Promise.all(
        rows.slice(start, start + PARALLEL).map(async (row) => {
          const event = toEnvelope(row);
          try {
            for (const consume of consumers)
              await consume(db, event, { orgId: row.org_id, clientId: row.client_id });
            done.push(row);
          } catch (error) {
            failed.push({ row, error });
          }
        }),
      );
    }
    // The database going away is no fault of the event: the whole batch is rolled back and claimed
    // again after the outage, with no attempt counted (the loop logs the failure once).
    const outage = failed.find(({ error }) => isDatabaseUnavailable(error));
    if (outage) throw outage.error;
    if (done.length > 0)
      await trx
        .updateTable('events')
        .set({ dispatched_at: new Date() })
        // Two arrays, not (org_id, id) pairs: one scan of the primary key, and ids are unique across orgs.
        .where('org_id', 'in', [...new Set(done.map((row) => row.org_id))])
        .where(
          'id',
          'in',
          done.map((row) => row.id),
        )
        .execute();
    for (const { row, error } of failed) await recordFailure(trx, row, error, policy);
    return rows.length;
  });
  dispatched.inc(count);
  return count === BATCH;
}

async function recordFailure(
  trx: Trx,
  row: { id: string; type: string; org_id: string; relay_attempts: number },
  error: unknown,
  policy: RelayPolicy,
): Promise<void> {
  const attempt = row.relay_attempts + 1;
  const dead = attempt >= policy.maxAttempts;
  const message = (error instanceof Error ? error.message : String(error)).slice(0, ERROR_CHARS);
  await trx
    .updateTable('events')
    .set({
      relay_attempts: attempt,
      relay_error: message.replace(/\0/g, ''),
      relay_retry_at: dead
        ? null
        : sql<Date>`now() + ${`${relayBackoffMs(policy, attempt)} milliseconds`}::interval`,
      relay_dead_at: dead ? new Date() : null,
    })
    .where('org_id', '=', row.org_id)
    .where('id', '=', row.id)
    .execute();
  relayFailures.inc({ outcome: dead ? 'dead' : 'retry' });
  const fields = { eventId: row.id, type: row.type, orgId: row.org_id, attempt, err: error };
  if (dead) policy.log?.error(fields, 'event consumer failed; no attempt left, the event is dead');
  else policy.log?.warn(fields, 'event consumer failed; the event will be handed over again');
}
