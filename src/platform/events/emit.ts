import { type RawBuilder, sql } from 'kysely';
import type { TenantScope } from '../auth/tenant.ts';
import { newEventId } from '../db/ids.ts';
import type { Trx } from '../db/pool.ts';
import { prepare } from '../db/prepared.ts';
import { metrics } from '../metrics.ts';

const written = metrics.counter(
  'events_written_total',
  'Events written to the outbox by type (counted as written; a transaction that then rolls back is counted too).',
  ['type'],
);

/** The tenant an event belongs to. */
export type EventScope = TenantScope;

/** The event as receivers and `GET /v1/events` see it. */
export interface EventEnvelope {
  id: string;
  type: string;
  created: string;
  data: Record<string, unknown>;
  metadata: Record<string, unknown>;
}

/** What an event row is made of; each value a parameter or a SQL expression. */
export interface EventRow {
  id: unknown;
  orgId: unknown;
  clientId: unknown;
  type: unknown;
  /** JSON text (or a jsonb expression) of the data. */
  data: unknown;
  metadata: unknown;
}

/**
 * The statement that writes one event row, `RETURNING created_at`: `emit` runs it, and a statement
 * that writes a record and its event at once (a create in one statement, see `runIdempotent`) uses
 * it as a CTE, with `when` saying whether the record was written. The shape of the outbox stays here.
 *
 * The row is written once and never updated (the relay keeps its position elsewhere). Its `xid` is
 * taken before its `seq`, in that order in one target list: the relay's frontier relies on a
 * transaction holding a seq having had its transaction id before it took the seq.
 */
export function eventInsert(row: EventRow, when: RawBuilder<boolean> = sql<boolean>`true`) {
  return sql<{
    created_at: Date;
  }>`INSERT INTO event_log (xid, seq, id, org_id, client_id, type, data, metadata)
    SELECT pg_current_xact_id(), nextval('event_seq'), ${row.id}::text, ${row.orgId}::uuid, ${row.clientId}::uuid,
      ${row.type}::text, ${row.data}::jsonb, ${row.metadata}::jsonb
    WHERE ${when}
    RETURNING created_at`;
}

/** Counts an event written by a statement of its own (`eventInsert` in a CTE) once it committed. */
export function countEvent(type: string): void {
  written.inc({ type });
}

/** Every event of every module goes through this one prepared statement. */
const insertEvent = prepare(
  (_db, p: { id: string; orgId: string; clientId: string; type: string; data: string; metadata: string }) =>
    eventInsert(p),
);

/**
 * Records an event in the caller's transaction (transactional outbox): the event exists if and only
 * if the change that caused it committed. The worker's outbox dispatcher picks it up and fans it out.
 */
export async function emit(
  trx: Trx,
  scope: EventScope,
  type: string,
  data: Record<string, unknown>,
  metadata: Record<string, unknown> = {},
): Promise<EventEnvelope> {
  const id = newEventId();
  // Dates and other values go through JSON once, as receivers will see them.
  const dataJson = JSON.stringify(data);
  const metadataJson = JSON.stringify(metadata);
  const rows = await insertEvent.run(trx, {
    id,
    orgId: scope.orgId,
    clientId: scope.clientId,
    type,
    data: dataJson,
    metadata: metadataJson,
  });
  countEvent(type);
  return {
    id,
    type,
    created: String(Math.floor(rows[0].created_at.getTime() / 1000)),
    data: JSON.parse(dataJson),
    metadata: JSON.parse(metadataJson),
  };
}

export function toEnvelope(row: {
  id: string;
  type: string;
  created_at: Date;
  data: Record<string, unknown>;
  metadata: Record<string, unknown>;
}): EventEnvelope {
  return {
    id: row.id,
    type: row.type,
    created: String(Math.floor(row.created_at.getTime() / 1000)),
    data: row.data,
    metadata: row.metadata,
  };
}
