import { sql } from 'kysely';
import type { TenantScope } from '../auth/tenant.ts';
import { newEventId } from '../db/ids.ts';
import type { Trx } from '../db/pool.ts';
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
  const { rows } = await sql<{ created_at: Date }>`
    INSERT INTO events (id, org_id, client_id, type, data, metadata)
    VALUES (${id}, ${scope.orgId}, ${scope.clientId}, ${type}, ${dataJson}::jsonb, ${metadataJson}::jsonb)
    RETURNING created_at`.execute(trx);
  written.inc({ type });
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
