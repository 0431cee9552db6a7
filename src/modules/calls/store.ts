import {
  type ColumnType,
  type Generated,
  type Insertable,
  type Selectable,
  sql,
  type Updateable,
} from 'kysely';
import type { TenantScope } from '../../platform/auth/tenant.ts';
import type { Executor, Trx } from '../../platform/db/pool.ts';
import { prepare } from '../../platform/db/prepared.ts';
import type { Json, MetadataColumn } from '../../platform/db/schema.ts';
import { whereTenant } from '../../platform/db/tenant-rows.ts';
import type { PageRequest } from '../../platform/http/pagination.ts';
import type { CallAgent, Speaker, TranscriptTurn } from '../../providers/voice/index.ts';

declare module '../../platform/db/schema.ts' {
  interface Database {
    calls: CallsTable;
    call_transcript_turns: CallTranscriptTurnsTable;
    call_day_counts: CallDayCountsTable;
  }
}

export type CallDirection = 'inbound' | 'outbound';
export type CallStatus =
  | 'queued'
  | 'ringing'
  | 'in_progress'
  | 'completed'
  | 'voicemail'
  | 'no_answer'
  | 'busy'
  | 'failed';
export type PlacementState = 'pending' | 'placed' | 'unconfirmed' | 'abandoned';

/** What an outbound call is placed with, kept from the request that asked for it. */
export interface Placement {
  ringTimeoutSeconds: number;
  maxDurationSeconds: number;
  agent: CallAgent;
  voicemail: { enabled: boolean; message: string | null };
  metadata: Record<string, string>;
  /** The call's context for the agent (a pre-call brief); absent on calls placed before it existed. */
  context?: string | null;
}

export interface CallsTable {
  id: string;
  org_id: string;
  client_id: string;
  direction: CallDirection;
  from_number: string;
  to_number: string;
  contact_phone: string | null;
  contact_name: string | null;
  contact_id: string | null;
  agent_id: string | null;
  status: CallStatus;
  disposition: string | null;
  outcome: string | null;
  summary: string | null;
  recording_url: string | null;
  recording_duration_seconds: number | null;
  duration_seconds: number | null;
  cost_cents: number | null;
  voicemail_left: Generated<boolean>;
  started_at: Date | null;
  answered_at: Date | null;
  ended_at: Date | null;
  created_at: Date;
  updated_at: Date;
  provider: string | null;
  provider_call_id: string | null;
  reports: Generated<string[]>;
  cause_key: string | null;
  placement: Json<Placement> | null;
  /** The placement's leased work (platform/jobs/leased.ts); `unconfirmed` is its "maybe done" state. */
  placement_state: PlacementState | null;
  placement_lease_id: string | null;
  placement_lease_until: Date | null;
  placement_attempts: Generated<number>;
  sdr_campaign_id: string | null;
  prospect_id: string | null;
  /** What the action that placed the call was started with, echoed by the call's events. */
  metadata: MetadataColumn;
}

export interface CallTranscriptTurnsTable {
  org_id: string;
  call_id: string;
  position: number;
  speaker: Speaker;
  content: string;
  start_time_seconds: number;
}

/** Calls per client, UTC day, agent, direction and status; kept by triggers (see the migration). */
export interface CallDayCountsTable {
  org_id: string;
  client_id: string;
  /** A `date`; written by the triggers only. */
  day: ColumnType<Date, never, never>;
  agent_id: string | null;
  direction: CallDirection;
  status: CallStatus;
  calls: number;
}

export type CallRow = Selectable<CallsTable>;
export type CallChanges = Omit<Updateable<CallsTable>, 'id' | 'org_id' | 'client_id' | 'created_at'>;

/** The columns the API shows; the list and the detail read these only. */
const PUBLIC_COLUMNS = [
  'c.id',
  'c.direction',
  'c.from_number',
  'c.to_number',
  'c.contact_phone',
  'c.contact_name',
  'c.contact_id',
  'c.agent_id',
  'c.sdr_campaign_id',
  'c.status',
  'c.disposition',
  'c.outcome',
  'c.summary',
  'c.recording_url',
  'c.recording_duration_seconds',
  'c.duration_seconds',
  'c.cost_cents',
  'c.started_at',
  'c.answered_at',
  'c.ended_at',
  'c.created_at',
] as const;

function callsOf(db: Executor, tenant: TenantScope) {
  return db
    .selectFrom('calls as c')
    .where('c.org_id', '=', tenant.orgId)
    .where('c.client_id', '=', tenant.clientId);
}

/** The hot read, `GET /v1/calls/{id}`: the call and its transcript in order, one prepared statement. */
const callWithTranscript = prepare((db, p: TenantScope & { id: string }) =>
  callsOf(db, p)
    .where('c.id', '=', p.id)
    .select([
      ...PUBLIC_COLUMNS,
      sql<TranscriptTurn[]>`coalesce((
        SELECT json_agg(json_build_object('speaker', t.speaker, 'content', t.content,
          'start_time_seconds', t.start_time_seconds) ORDER BY t.position)
        FROM call_transcript_turns t WHERE t.call_id = c.id), '[]'::json)`.as('transcript'),
    ]),
);

export async function findCallWithTranscript(db: Executor, tenant: TenantScope, id: string) {
  const [row] = await callWithTranscript.run(db, { orgId: tenant.orgId, clientId: tenant.clientId, id });
  return row;
}

/** The calls of a date range and the other filters of `GET /v1/calls`. */
export interface CallFilter {
  /** The range, as instants: from `since` (inclusive) to `until` (exclusive). */
  since?: Date;
  until?: Date;
  agent_id?: string;
  direction?: CallDirection;
  status?: CallStatus;
  contact_id?: string;
}

export interface CallCursor {
  createdAt: Date;
  id: string;
}

function filtered(db: Executor, tenant: TenantScope, filter: CallFilter) {
  let query = callsOf(db, tenant);
  if (filter.since) query = query.where('c.created_at', '>=', filter.since);
  if (filter.until) query = query.where('c.created_at', '<', filter.until);
  if (filter.agent_id) query = query.where('c.agent_id', '=', filter.agent_id);
  if (filter.direction) query = query.where('c.direction', '=', filter.direction);
  if (filter.status) query = query.where('c.status', '=', filter.status);
  if (filter.contact_id) query = query.where('c.contact_id', '=', filter.contact_id);
  return query;
}

/** Calls newest first: by `created_at`, then id. */
export function listCalls(
  db: Executor,
  tenant: TenantScope,
  filter: CallFilter,
  page: PageRequest<CallCursor>,
) {
  let query = filtered(db, tenant, filter).select(PUBLIC_COLUMNS);
  const after = page.after;
  if (after) {
    query = query.where(({ eb, refTuple, tuple }) =>
      eb(refTuple('c.created_at', 'c.id'), '<', tuple(after.createdAt, after.id)),
    );
  }
  return query.orderBy('c.created_at', 'desc').orderBy('c.id', 'desc').limit(page.limit).execute();
}

/**
 * How many calls match, every page together. The whole UTC days of the range are summed from
 * `call_day_counts`; only the partial days at its ends are counted call by call, so a long range costs
 * about as much as a short one. A contact filter counts call by call (the day counts keep no contacts).
 */
export async function countCalls(db: Executor, tenant: TenantScope, filter: CallFilter): Promise<number> {
  const { since, until, ...rest } = filter;
  const firstDay = since && startOfUtcDay(since, 'ceil');
  const endDay = until && startOfUtcDay(until, 'floor');
  if (rest.contact_id || (firstDay && endDay && firstDay >= endDay)) {
    const row = await filtered(db, tenant, filter)
      .select((eb) => eb.fn.countAll<number>().as('count'))
      .executeTakeFirstOrThrow();
    return Number(row.count);
  }

  const edges: Array<[Date, Date]> = [];
  if (since && firstDay && since < firstDay) edges.push([since, firstDay]);
  if (until && endDay && endDay < until) edges.push([endDay, until]);
  const partialDays = filtered(db, tenant, rest)
    .where((eb) =>
      eb.or(edges.map(([from, to]) => eb.and([eb('c.created_at', '>=', from), eb('c.created_at', '<', to)]))),
    )
    .select((eb) => eb.fn.countAll<number>().as('n'));
  let days = db
    .selectFrom('call_day_counts as d')
    .where('d.org_id', '=', tenant.orgId)
    .where('d.client_id', '=', tenant.clientId);
  if (firstDay) days = days.where('d.day', '>=', utcDate(firstDay));
  if (endDay) days = days.where('d.day', '<', utcDate(endDay));
  if (rest.agent_id) days = days.where('d.agent_id', '=', rest.agent_id);
  if (rest.direction) days = days.where('d.direction', '=', rest.direction);
  if (rest.status) days = days.where('d.status', '=', rest.status);
  const wholeDays = days.select(sql<number>`coalesce(sum(d.calls), 0)`.as('n'));
  const row = await db
    .selectNoFrom((eb) => eb(edges.length ? partialDays : eb.lit(0), '+', wholeDays).as('count'))
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

const DAY_MS = 86_400_000;

function startOfUtcDay(instant: Date, round: 'ceil' | 'floor'): Date {
  return new Date(Math[round](instant.getTime() / DAY_MS) * DAY_MS);
}

/** The UTC date of a UTC midnight, as a `date` value. */
function utcDate(midnight: Date) {
  return sql<Date>`${midnight.toISOString().slice(0, 10)}::date`;
}

/** The date range `[start, end]` (`yyyy-MM-dd`, both inclusive) of a time zone, as instants. */
export async function dayRange(
  db: Executor,
  range: { start?: string; end?: string },
  timeZone: string,
): Promise<{ since?: Date; until?: Date }> {
  const { rows } = await sql<{ since: Date | null; until: Date | null }>`
    SELECT (${range.start ?? null}::date)::timestamp AT TIME ZONE ${timeZone} AS since,
           (${range.end ?? null}::date + 1)::timestamp AT TIME ZONE ${timeZone} AS until`.execute(db);
  const { since, until } = rows[0];
  return { ...(since ? { since } : {}), ...(until ? { until } : {}) };
}

export function insertCall(trx: Trx, row: Insertable<CallsTable>, unique: 'provider_call' | 'cause') {
  return trx
    .insertInto('calls')
    .values(row)
    .onConflict((conflict) =>
      (unique === 'cause'
        ? conflict.columns(['org_id', 'cause_key'])
        : conflict.columns(['org_id', 'provider', 'provider_call_id'])
      ).doNothing(),
    )
    .returningAll()
    .executeTakeFirst();
}

/** Reads and locks a call by its platform id, whichever tenant it is of (progress reports name no tenant). */
export function lockCall(trx: Trx, id: string) {
  return trx.selectFrom('calls').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
}

export function lockProviderCall(trx: Trx, provider: string, providerCallId: string) {
  return trx
    .selectFrom('calls')
    .selectAll()
    .where('provider', '=', provider)
    .where('provider_call_id', '=', providerCallId)
    .forUpdate()
    .executeTakeFirst();
}

export function findCallByCause(db: Executor, tenant: TenantScope, causeKey: string) {
  return db
    .selectFrom('calls')
    .selectAll()
    .where('org_id', '=', tenant.orgId)
    .where('cause_key', '=', causeKey)
    .executeTakeFirst();
}

export async function findProviderCallId(db: Executor, provider: string, providerCallId: string) {
  const row = await db
    .selectFrom('calls')
    .select('id')
    .where('provider', '=', provider)
    .where('provider_call_id', '=', providerCallId)
    .executeTakeFirst();
  return row?.id;
}

export function updateCall(trx: Trx, id: string, changes: CallChanges) {
  return trx.updateTable('calls').set(changes).where('id', '=', id).returningAll().executeTakeFirstOrThrow();
}

export async function insertTranscript(trx: Trx, call: CallRow, turns: TranscriptTurn[]): Promise<void> {
  if (turns.length === 0) return;
  await trx
    .insertInto('call_transcript_turns')
    .values(
      turns.map((turn, position) => ({
        org_id: call.org_id,
        call_id: call.id,
        position,
        speaker: turn.speaker,
        content: turn.content,
        start_time_seconds: turn.start_time_seconds,
      })),
    )
    .onConflict((conflict) => conflict.columns(['org_id', 'call_id', 'position']).doNothing())
    .execute();
}

/** Settles a placement (its lease ends); only a pending one, so a late worker cannot undo another's outcome. */
export async function settlePlacement(
  trx: Trx,
  call: Pick<CallRow, 'org_id' | 'id'>,
  state: Exclude<PlacementState, 'pending' | 'unconfirmed'>,
) {
  await trx
    .updateTable('calls')
    .set({ placement_state: state, placement_lease_id: null, placement_lease_until: null })
    .where('org_id', '=', call.org_id)
    .where('id', '=', call.id)
    .where('placement_state', '=', 'pending')
    .execute();
}

/**
 * How many calls of a campaign are in flight, as an SQL expression over ids given as SQL (a campaign
 * row's columns): for a condition evaluated in another module's statement (the dialer's claim).
 */
export function campaignCallsInFlightCount(orgId: unknown, clientId: unknown, campaignId: unknown) {
  return sql<number>`(SELECT count(*) FROM calls c WHERE c.org_id = ${orgId} AND c.client_id = ${clientId}
    AND c.sdr_campaign_id = ${campaignId} AND c.ended_at IS NULL)`;
}

export async function countCampaignCallsInFlight(db: Executor, tenant: TenantScope, campaignId: string) {
  const row = await db
    .selectFrom('calls')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .where('sdr_campaign_id', '=', campaignId)
    .where('ended_at', 'is', null)
    .$call(whereTenant(tenant))
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

/** Calls from the UTC day `firstDay` on, from the day counts: one client's, or the whole org's. */
export async function countCallsFromDay(
  db: Executor,
  scope: { orgId: string; clientId: string | null },
  firstDay: Date,
): Promise<number> {
  let days = db
    .selectFrom('call_day_counts as d')
    .where('d.org_id', '=', scope.orgId)
    .where('d.day', '>=', utcDate(firstDay));
  if (scope.clientId !== null) days = days.where('d.client_id', '=', scope.clientId);
  const row = await days.select(sql<number>`coalesce(sum(d.calls), 0)`.as('n')).executeTakeFirstOrThrow();
  return Number(row.n);
}
