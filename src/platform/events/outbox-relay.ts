import { type RawBuilder, sql } from 'kysely';
import type { Logger } from 'pino';
import type { Db, Trx } from '../db/pool.ts';
import { inTransaction } from '../db/transaction.ts';
import { isDatabaseUnavailable } from '../db/unavailable.ts';
import { metrics } from '../metrics.ts';
import type { EventScope } from './emit.ts';
import { type EventEnvelope, toEnvelope } from './emit.ts';

const BATCH = 200;
/** Events of one batch handed to a per-event consumer at once. */
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
 * Something that reacts to every committed event, one event at a time. It must be quick (record
 * what is to be done, do slow work elsewhere) and safe to run twice for one event.
 */
export type EventConsumer = (db: Db, event: EventEnvelope, scope: EventScope) => Promise<void>;

/** An event as a batch consumer receives it. */
export interface HandedEvent {
  event: EventEnvelope;
  scope: EventScope;
  /** The event's time to the microsecond (`event.created` is in seconds). */
  createdAt: Date;
}

/**
 * A consumer that takes a batch of events (in the relay's order) at once, so it can do its part in
 * one statement (webhook fan-out is one). Safe to run twice for an event. When it throws, the relay
 * hands it the events one at a time to find the one that fails.
 */
export interface EventBatchConsumer {
  batch: (db: Db, events: HandedEvent[]) => Promise<void>;
}

export type AnyEventConsumer = EventConsumer | EventBatchConsumer;

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

interface EventRow {
  id: string;
  org_id: string;
  client_id: string;
  type: string;
  data: Record<string, unknown>;
  metadata: Record<string, unknown>;
  created_at: Date;
  seq: string;
  /** Failed hand-overs so far (retries only). */
  attempts: number;
}

/**
 * The outbox relay, run by every worker process (one at a time: the relay's row is taken with SKIP
 * LOCKED, and a worker that finds it taken leaves the pass to the other). Events are never written
 * to: the relay keeps a position in `event_log` (the last seq handed over) and reads the events
 * after it in seq order, up to the frontier below which every seq is final.
 *
 * The frontier. A transaction takes its transaction id before its event's seq (`eventInsert`), so
 * when the relay reads the sequence's value L and then takes a transaction id X of its own, every
 * transaction holding a seq <= L has an id below X. Once no transaction older than X that has written
 * an event (it holds a lock on event_log) still runs, nothing can appear at or below L any more: L
 * becomes the frontier. A transaction that commits late holds the frontier back (and its later
 * neighbours wait for it) rather than being skipped. The probe taken in a pass usually resolves in that pass; one that does not is kept and
 * resolves in a later pass.
 *
 * A consumer that throws fails its own event only: the event goes to `event_relay_failures`, is handed
 * over again after a backoff and, after `maxAttempts`, left dead with its last error, while the rest
 * of the batch, and every other tenant's events, go on. A failure that means the database is
 * unreachable counts against no event: the pass rolls back and runs again. A worker killed
 * mid-pass rolls its pass back the same way. Returns true when there is more to do right away.
 */
export async function relayEvents(
  db: Db,
  consumers: AnyEventConsumer[],
  policy: RelayPolicy = DEFAULT_RELAY_POLICY,
): Promise<boolean> {
  // The idle check, and the probe when the sequence is past the frontier: L (`last`) is read by the scan
  // of event_seq, before the projection takes a transaction id, in a statement that ends at once; that
  // id is above the id of every transaction holding a seq <= L. An idle relay takes no id and no lock.
  const { rows: peek } = await sql<{
    position: string;
    last: string;
    due: boolean;
    xid: string | null;
  }>`
    SELECT r.position::text, s.last::text,
      EXISTS (SELECT 1 FROM event_relay_failures WHERE dead_at IS NULL AND retry_at <= now()) AS due,
      CASE WHEN s.last > r.frontier THEN pg_current_xact_id()::text END AS xid
    FROM event_relay r, (SELECT CASE WHEN is_called THEN last_value ELSE 0 END AS last FROM event_seq) s`.execute(
    db,
  );
  const state = peek[0];
  if (!state) return false;
  const last = BigInt(state.last);
  if (last <= BigInt(state.position) && !state.due) return false;
  const fresh = state.xid === null ? null : { seq: last, xid: state.xid };

  const outcome = await inTransaction(db, (trx) => relayPass(trx, db, consumers, policy, fresh));
  dispatched.inc(outcome.handed);
  return outcome.more;
}

async function relayPass(
  trx: Trx,
  db: Db,
  consumers: AnyEventConsumer[],
  policy: RelayPolicy,
  fresh: { seq: bigint; xid: string } | null,
): Promise<{ handed: number; more: boolean }> {
  // A probe resolves when no transaction older than its id that has written an event still runs. Such a
  // transaction holds its RowExclusiveLock on event_log until it ends, taken before its seq: a
  // transaction of this database busy with anything else (a provider call, a long import) that has
  // written no event does not hold the relay back, nor does any transaction of another database.
  // First the cheap test: the cluster's oldest running transaction is younger than the probe.
  const resolvedSql = (xid: RawBuilder<unknown>) => sql<boolean>`CASE
    WHEN ${xid} IS NULL THEN false
    WHEN pg_snapshot_xmin(pg_current_snapshot()) > ${xid} THEN true
    ELSE NOT EXISTS (SELECT 1 FROM writing WHERE age >= age(xid(${xid}))) END`;
  // The relay's row, locked (one pass at a time), with its stored probe and the fresh one resolved.
  const { rows: locked } = await sql<{
    position: string;
    frontier: string;
    probe_seq: string | null;
    probe_xid: string | null;
    stored_resolved: boolean;
    fresh_resolved: boolean;
  }>`
    WITH writing AS (
      SELECT age(a.backend_xid) AS age
      FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
      WHERE l.locktype = 'relation' AND l.relation = 'event_log'::regclass AND l.mode = 'RowExclusiveLock'
        AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
        AND a.backend_xid IS NOT NULL
    )
    SELECT position::text, frontier::text, probe_seq::text, probe_xid::text,
      ${resolvedSql(sql`probe_xid`)} AS stored_resolved,
      ${resolvedSql(sql`${fresh?.xid ?? null}::xid8`)} AS fresh_resolved
    FROM event_relay WHERE id = 1 FOR UPDATE SKIP LOCKED`.execute(trx);
  if (locked.length === 0) return { handed: 0, more: false };
  const relay = locked[0];
  const stored =
    relay.probe_seq && relay.probe_xid ? { seq: BigInt(relay.probe_seq), xid: relay.probe_xid } : null;
  const position = BigInt(relay.position);
  let frontier = BigInt(relay.frontier);
  let probe = stored;
  if (fresh && relay.fresh_resolved) {
    // The newer probe resolved: so did any older one.
    if (fresh.seq > frontier) frontier = fresh.seq;
    probe = null;
  } else if (stored && relay.stored_resolved) {
    if (stored.seq > frontier) frontier = stored.seq;
    probe = fresh && fresh.seq > frontier ? fresh : null;
  } else if (!stored && fresh) {
    probe = fresh;
  }

  // At most BATCH seqs a pass, read whole: an index range whatever the planner thinks of the table; and
  // up to BATCH events due to be handed over again, in the same statement.
  const until = frontier < position + BigInt(BATCH) ? frontier : position + BigInt(BATCH);
  const { rows: read } = await sql<EventRow & { retry: boolean }>`
    SELECT id, org_id, client_id, type, data, metadata, created_at, seq::text, attempts, retry FROM (
      SELECT e.id, e.org_id, e.client_id, e.type, e.data, e.metadata, e.created_at, e.seq, 0 AS attempts,
        false AS retry
      FROM event_log e
      WHERE e.seq > ${String(position)}::bigint AND e.seq <= ${String(until)}::bigint
      UNION ALL
      (SELECT e.id, e.org_id, e.client_id, e.type, e.data, e.metadata, e.created_at, e.seq, f.attempts,
        true AS retry
      FROM event_relay_failures f JOIN event_log e ON e.org_id = f.org_id AND e.id = f.event_id
      WHERE f.dead_at IS NULL AND f.retry_at <= now()
      ORDER BY e.seq LIMIT ${BATCH}::int)
    ) read
    ORDER BY read.seq`.execute(trx);
  const next = read.filter((row) => !row.retry);
  const retries = read.filter((row) => row.retry);

  const failed = await handOver(db, consumers, [...retries, ...next]);
  // The database going away is no fault of the event: the whole pass is rolled back and runs again
  // after the outage, with no attempt counted (the loop logs the failure once).
  for (const error of failed.values()) if (isDatabaseUnavailable(error)) throw error;

  // Every seq up to `until` has been read (one missing belongs to a transaction that rolled back).
  const moved = until > position ? until : position;
  await sql`UPDATE event_relay SET position = ${String(moved)}::bigint, frontier = ${String(frontier)}::bigint,
    probe_seq = ${probe ? String(probe.seq) : null}::bigint, probe_xid = ${probe?.xid ?? null}::xid8, moved_at = now()
    WHERE id = 1`.execute(trx);
  const recovered = retries.filter((row) => !failed.has(row));
  if (recovered.length > 0)
    await sql`DELETE FROM event_relay_failures
      WHERE org_id = ANY(${[...new Set(recovered.map((row) => row.org_id))]}::uuid[])
        AND event_id = ANY(${recovered.map((row) => row.id)}::text[])`.execute(trx);
  for (const [row, error] of failed) await recordFailure(trx, row, error, policy);
  return { handed: next.length + retries.length, more: moved < frontier || retries.length === BATCH };
}

/** Hands the events to every consumer in turn; returns the events a consumer threw on, with the error. */
async function handOver(
  db: Db,
  consumers: AnyEventConsumer[],
  rows: EventRow[],
): Promise<Map<EventRow, unknown>> {
  const failed = new Map<EventRow, unknown>();
  if (rows.length === 0) return failed;
  const handed = new Map(
    rows.map((row) => [
      row,
      {
        event: toEnvelope(row),
        scope: { orgId: row.org_id, clientId: row.client_id },
        createdAt: row.created_at,
      },
    ]),
  );
  for (const consumer of consumers) {
    const alive = rows.filter((row) => !failed.has(row));
    if (alive.length === 0) break;
    if (typeof consumer !== 'function') {
      try {
        await consumer.batch(
          db,
          alive.map((row) => handed.get(row) as HandedEvent),
        );
      } catch (error) {
        if (isDatabaseUnavailable(error)) throw error;
        // Find the event(s) it fails on, one at a time.
        for (const row of alive) {
          try {
            await consumer.batch(db, [handed.get(row) as HandedEvent]);
          } catch (single) {
            if (isDatabaseUnavailable(single)) throw single;
            failed.set(row, single);
          }
        }
      }
      continue;
    }
    for (let start = 0; start < alive.length; start += PARALLEL) {
      await Promise.all(
        alive.slice(start, start + PARALLEL).map(async (row) => {
          const { event, scope } = handed.get(row) as HandedEvent;
          try {
            await consumer(db, event, scope);
          } catch (error) {
            failed.set(row, error);
          }
        }),
      );
    }
  }
  return failed;
}

async function recordFailure(trx: Trx, row: EventRow, error: unknown, policy: RelayPolicy): Promise<void> {
  const attempt = row.attempts + 1;
  const dead = attempt >= policy.maxAttempts;
  const message = (error instanceof Error ? error.message : String(error))
    .slice(0, ERROR_CHARS)
    .replace(/\0/g, '');
  const retryAt = dead ? null : `${relayBackoffMs(policy, attempt)} milliseconds`;
  await sql`INSERT INTO event_relay_failures (org_id, event_id, attempts, retry_at, error, dead_at)
    VALUES (${row.org_id}::uuid, ${row.id}::text, ${attempt}::int, now() + ${retryAt}::interval, ${message}::text,
      CASE WHEN ${dead}::boolean THEN now() END)
    ON CONFLICT (org_id, event_id) DO UPDATE SET attempts = excluded.attempts, retry_at = excluded.retry_at,
      error = excluded.error, dead_at = excluded.dead_at`.execute(trx);
  relayFailures.inc({ outcome: dead ? 'dead' : 'retry' });
  const fields = { eventId: row.id, type: row.type, orgId: row.org_id, attempt, err: error };
  if (dead) policy.log?.error(fields, 'event consumer failed; no attempt left, the event is dead');
  else policy.log?.warn(fields, 'event consumer failed; the event will be handed over again');
}
