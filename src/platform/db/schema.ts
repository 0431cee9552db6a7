import type { ColumnType, Generated } from 'kysely';

/**
 * The database's tables. Platform tables are declared here; each module adds its own
 * by augmenting this interface from its store (`declare module`), so the platform
 * never imports a module.
 */
export interface Database {
  orgs: OrgsTable;
  clients: ClientsTable;
  api_keys: ApiKeysTable;
  fuel_ledger: FuelLedgerTable;
  /** Read-only view over event_log with the relay's state per event (for operators and tests). */
  events: EventsTable;
  event_log: EventLogTable;
  event_relay: EventRelayTable;
  event_relay_failures: EventRelayFailuresTable;
  idempotency_keys: IdempotencyKeysTable;
}

export type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;
export type NullableTimestamp = ColumnType<
  Date | null,
  Date | string | null | undefined,
  Date | string | null
>;
export type Json<T = unknown> = ColumnType<T, string | T, string | T>;
/** The `metadata` an action was started with (JSON text when written), echoed by its events; `{}` when none. */
export type MetadataColumn = ColumnType<
  Record<string, unknown>,
  string | Record<string, unknown> | undefined,
  string | Record<string, unknown>
>;

export interface OrgsTable {
  id: string;
  name: string;
  house_client_id: string;
  features: Json<{ sdr_outbound?: boolean }>;
  fuel_balance: Generated<number>;
  /** IANA time zone the org's days are counted in (call date ranges); null is UTC. */
  timezone: string | null;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

export interface ClientsTable {
  id: string;
  org_id: string;
  name: string;
  is_house: Generated<boolean>;
  created_at: Generated<Date>;
}

export type ApiKeyKind = 'agency' | 'client' | 'legacy_sms';

export interface ApiKeysTable {
  id: string;
  org_id: string;
  client_id: string | null;
  name: string;
  kind: ApiKeyKind;
  prefix: string;
  last4: string;
  secret_hash: Buffer;
  rate_limit_per_minute: number;
  expires_at: NullableTimestamp;
  revoked_at: NullableTimestamp;
  tag: string | null;
  last_used_at: NullableTimestamp;
  created_at: Generated<Date>;
}

export interface FuelLedgerTable {
  id: string;
  org_id: string;
  /** The client whose action caused the entry; null for org-level entries (grants). */
  client_id: string | null;
  amount: number;
  balance_after: number;
  reason: 'grant' | 'adjustment' | 'sms' | 'gist' | 'ai_job' | 'refund';
  reference_type: string | null;
  reference_id: string | null;
  note: string | null;
  created_at: Generated<Date>;
}

/** The events, append-only: written once by `emit`/`eventInsert`, never updated. */
export interface EventLogTable {
  id: string;
  org_id: string;
  client_id: string;
  type: string;
  data: Json<Record<string, unknown>>;
  metadata: Json<Record<string, unknown>>;
  created_at: Generated<Date>;
  /** Order of the relay (`event_seq`); bigint, read as a string. */
  seq: Generated<string>;
  /** The writing transaction (xid8), read as a string. */
  xid: Generated<string>;
}

/** The outbox relay's single row: what it handed over, and how far events are final. */
export interface EventRelayTable {
  id: number;
  position: string;
  frontier: string;
  probe_seq: string | null;
  probe_xid: string | null;
  moved_at: Generated<Date>;
}

/** Events a consumer threw on: retried with backoff, then left dead for an operator. */
export interface EventRelayFailuresTable {
  org_id: string;
  event_id: string;
  attempts: number;
  retry_at: Date | null;
  error: string;
  dead_at: Date | null;
}

/** The view `events`: event_log with the relay's state of each event, as the table had it before 1020. */
export interface EventsTable {
  id: string;
  org_id: string;
  client_id: string;
  type: string;
  data: Json<Record<string, unknown>>;
  metadata: Json<Record<string, unknown>>;
  /** Not null once the relay handed the event over (the event's own time). */
  dispatched_at: Date | null;
  created_at: Date;
  relay_attempts: number;
  relay_retry_at: Date | null;
  relay_error: string | null;
  relay_dead_at: Date | null;
  seq: string;
  xid: string;
}

export interface IdempotencyKeysTable {
  org_id: string;
  client_id: string;
  key: string;
  request_hash: string;
  state: 'in_progress' | 'completed';
  response_status: number | null;
  response_body: Json<unknown> | null;
  locked_at: Timestamp;
  created_at: Generated<Date>;
}
