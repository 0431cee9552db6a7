import { type Generated, type Insertable, type Selectable, sql, type Updateable } from 'kysely';
import type { TenantScope } from '../../platform/auth/tenant.ts';
import type { Executor, Trx } from '../../platform/db/pool.ts';
import type { MetadataColumn } from '../../platform/db/schema.ts';
import { whereOwned, whereTenant } from '../../platform/db/tenant-rows.ts';
import type { PageRequest } from '../../platform/http/pagination.ts';
import { campaignCallsInFlightCount } from '../calls/service.ts';
import type { CAMPAIGN_STATUSES, PROSPECT_STATUSES } from './schemas.ts';

declare module '../../platform/db/schema.ts' {
  interface Database {
    sdr_settings: SdrSettingsTable;
    sdr_campaigns: SdrCampaignsTable;
    sdr_prospects: SdrProspectsTable;
  }
}

export type CampaignStatus = (typeof CAMPAIGN_STATUSES)[number];
export type ProspectStatus = (typeof PROSPECT_STATUSES)[number];
export type SkipReason = 'no_phone' | 'do_not_call' | 'opted_out';
export type TimeZoneSource = 'explicit' | 'contact' | 'phone' | 'settings' | 'org' | 'default';
/** Why the dialer paused a campaign; null when a person paused it. */
export type PausedReason = 'from_number_required';

export interface SdrSettingsTable {
  org_id: string;
  from_number: string | null;
  voice_id: string | null;
  voice_name: string | null;
  business_name: string | null;
  timezone: string | null;
  updated_at: Date;
}

export interface SdrCampaignsTable {
  id: string;
  org_id: string;
  client_id: string;
  agent_id: string;
  name: string;
  description: string | null;
  opening_message: string | null;
  voicemail_message: string | null;
  system_prompt: string | null;
  voice_id: string | null;
  voice_name: string | null;
  business_name: string | null;
  /** Null: the SDR settings' number, read when dialing starts. */
  from_number: string | null;
  max_concurrent_calls: number;
  calling_window_start: string;
  calling_window_end: string;
  calling_days: number[];
  respect_timezone: boolean;
  timezone: string;
  max_attempts: number;
  retry_interval_hours: number;
  ring_timeout_seconds: number;
  max_duration_seconds: number;
  scheduled_start_at: Date | null;
  voicemail_enabled: boolean;
  /** A pre-call brief of each prospect before its first dial, handed to the call as context. */
  precall_brief: Generated<boolean>;
  cal_com_booking_url: string | null;
  post_call_email: string | null;
  metadata: MetadataColumn;
  status: CampaignStatus;
  paused_reason: PausedReason | null;
  started_at: Date | null;
  completed_at: Date | null;
  archived_at: Date | null;
  created_at: Date;
  updated_at: Date;
  /** The dialer's visits (platform/jobs/leased.ts): the visiting worker's lease, and the next visit. */
  dial_lease_id: string | null;
  dial_lease_until: Generated<Date>;
  dial_attempts: Generated<number>;
}

export interface SdrProspectsTable {
  id: string;
  org_id: string;
  campaign_id: string;
  contact_id: string;
  contact_client_id: string;
  phone: string | null;
  timezone: string;
  timezone_source: TimeZoneSource;
  status: ProspectStatus;
  skip_reason: SkipReason | null;
  attempts: Generated<number>;
  last_outcome: string | null;
  last_attempt_at: Date | null;
  next_attempt_at: Date;
  current_call_id: string | null;
  call_ids: Generated<string[]>;
  /** The pre-call brief asked for the prospect (an AI job id), and when; null until asked. */
  brief_job_id: string | null;
  brief_requested_at: Date | null;
  metadata: MetadataColumn;
  created_at: Date;
  updated_at: Date;
}

export type SettingsRow = Selectable<SdrSettingsTable>;
export type CampaignRow = Selectable<SdrCampaignsTable>;
export type ProspectRow = Selectable<SdrProspectsTable>;
export type CampaignChanges = Updateable<SdrCampaignsTable>;
export type ProspectChanges = Updateable<SdrProspectsTable>;

// Settings

export function findSettings(db: Executor, orgId: string): Promise<SettingsRow | undefined> {
  return db.selectFrom('sdr_settings').selectAll().where('org_id', '=', orgId).executeTakeFirst();
}

export function upsertSettings(trx: Trx, row: Insertable<SdrSettingsTable>): Promise<SettingsRow> {
  const { org_id: _org, ...changes } = row;
  return trx
    .insertInto('sdr_settings')
    .values(row)
    .onConflict((oc) => oc.column('org_id').doUpdateSet(changes))
    .returningAll()
    .executeTakeFirstOrThrow();
}

// Campaigns

export async function insertCampaign(trx: Trx, row: Insertable<SdrCampaignsTable>): Promise<CampaignRow> {
  return trx.insertInto('sdr_campaigns').values(row).returningAll().executeTakeFirstOrThrow();
}

export function findCampaign(
  db: Executor,
  tenant: TenantScope,
  id: string,
): Promise<CampaignRow | undefined> {
  return db.selectFrom('sdr_campaigns').selectAll().$call(whereOwned(tenant, id)).executeTakeFirst();
}

export function lockCampaign(trx: Trx, tenant: TenantScope, id: string): Promise<CampaignRow | undefined> {
  return trx
    .selectFrom('sdr_campaigns')
    .selectAll()
    .$call(whereOwned(tenant, id))
    .forUpdate()
    .executeTakeFirst();
}

/** A status move clears `paused_reason` unless the change gives one. */
export function updateCampaign(trx: Trx, id: string, changes: CampaignChanges): Promise<CampaignRow> {
  const reason = changes.status !== undefined ? { paused_reason: changes.paused_reason ?? null } : {};
  return trx
    .updateTable('sdr_campaigns')
    .set({ ...changes, ...reason, updated_at: new Date() })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

export function listCampaigns(
  db: Executor,
  tenant: TenantScope,
  status: CampaignStatus | undefined,
  page: PageRequest<string>,
): Promise<CampaignRow[]> {
  let query = db.selectFrom('sdr_campaigns').selectAll().$call(whereTenant(tenant));
  // In SQL, before the LIMIT: a page filtered afterwards would come back short.
  query = status ? query.where('status', '=', status) : query.where('status', '!=', 'archived');
  if (page.after !== undefined) query = query.where('id', '<', page.after);
  return query.orderBy('id', 'desc').limit(page.limit).execute();
}

/** The campaign's number, else the SDR settings' (null when neither has one). */
const effectiveNumber = sql<string | null>`coalesce(sdr_campaigns.from_number,
  (SELECT s.from_number FROM sdr_settings s WHERE s.org_id = sdr_campaigns.org_id))`;

/**
 * Scheduled campaigns whose start has come become active, or paused with `from_number_required` when
 * there is no number to dial from (one statement; a second worker finds none).
 */
export function activateDueCampaigns(db: Executor, now: Date) {
  const numberless = sql<boolean>`${effectiveNumber} IS NULL`;
  return db
    .updateTable('sdr_campaigns')
    .set({
      status: sql<CampaignStatus>`CASE WHEN ${numberless} THEN 'paused' ELSE 'active' END`,
      paused_reason: sql<PausedReason | null>`CASE WHEN ${numberless} THEN 'from_number_required' END`,
      updated_at: now,
    })
    .where('status', '=', 'scheduled')
    .where('scheduled_start_at', '<=', now)
    .returning(['id'])
    .execute();
}

/** The dialer's visits, as leased work: active campaigns, least recently visited first. */
/**
 * Active campaigns are due a visit when they have a free call slot, or no number to dial from (the visit pauses
 * them, saying so). One at its concurrency with a number has nothing to do, so it is not claimed at all (a
 * claim that finds nothing commits nothing) until one of its calls ends.
 */
export const visitsDue = {
  table: 'sdr_campaigns',
  prefix: 'dial_',
  due: sql`t.status = 'active' AND (
    ${campaignCallsInFlightCount(sql.ref('t.org_id'), sql.ref('t.client_id'), sql.ref('t.id'))} < t.max_concurrent_calls
    OR (t.from_number IS NULL AND NOT EXISTS (SELECT 1 FROM sdr_settings s
      WHERE s.org_id = t.org_id AND s.from_number IS NOT NULL)))`,
};

/** Ends a visit, in a transaction holding its lease: the next is due `revisitMs` later. */
export async function endVisit(trx: Trx, id: string, revisitMs: number): Promise<void> {
  await trx
    .updateTable('sdr_campaigns')
    .set({
      dial_lease_id: null,
      dial_lease_until: sql<Date>`now() + ${revisitMs}::float8 * interval '1 millisecond'`,
      dial_attempts: 0,
    })
    .where('id', '=', id)
    .execute();
}

/** The campaign locked for one dialing transaction; undefined when it is no longer active. */
export function lockActiveCampaign(trx: Trx, id: string): Promise<CampaignRow | undefined> {
  return trx
    .selectFrom('sdr_campaigns')
    .selectAll()
    .where('id', '=', id)
    .where('status', '=', 'active')
    .forUpdate()
    .executeTakeFirst();
}

export function lockCampaignById(trx: Trx, id: string): Promise<CampaignRow | undefined> {
  return trx.selectFrom('sdr_campaigns').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
}

// Prospects

export async function insertProspects(trx: Trx, rows: Insertable<SdrProspectsTable>[]): Promise<number> {
  let added = 0;
  for (let i = 0; i < rows.length; i += 1000) {
    const result = await trx
      .insertInto('sdr_prospects')
      .values(rows.slice(i, i + 1000))
      .onConflict((oc) => oc.columns(['org_id', 'campaign_id', 'contact_id']).doNothing())
      .executeTakeFirst();
    added += Number(result.numInsertedOrUpdatedRows ?? 0);
  }
  return added;
}

export function listProspects(
  db: Executor,
  orgId: string,
  campaignId: string,
  status: ProspectStatus | undefined,
  page: PageRequest<string>,
): Promise<ProspectRow[]> {
  let query = db
    .selectFrom('sdr_prospects')
    .selectAll()
    .where('org_id', '=', orgId)
    .where('campaign_id', '=', campaignId);
  if (status) query = query.where('status', '=', status);
  if (page.after !== undefined) query = query.where('id', '<', page.after);
  return query.orderBy('id', 'desc').limit(page.limit).execute();
}

export function lockProspect(trx: Trx, orgId: string, campaignId: string, id: string) {
  return trx
    .selectFrom('sdr_prospects')
    .selectAll()
    .where('org_id', '=', orgId)
    .where('campaign_id', '=', campaignId)
    .where('id', '=', id)
    .forUpdate()
    .executeTakeFirst();
}

export function lockProspectById(trx: Trx, id: string): Promise<ProspectRow | undefined> {
  return trx.selectFrom('sdr_prospects').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
}

export async function deleteProspect(trx: Trx, id: string): Promise<void> {
  await trx.deleteFrom('sdr_prospects').where('id', '=', id).execute();
}

export function updateProspect(trx: Trx, id: string, changes: ProspectChanges): Promise<ProspectRow> {
  return trx
    .updateTable('sdr_prospects')
    .set({ ...changes, updated_at: new Date() })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Due pending prospects of a campaign, soonest first after `after`, read without a lock. */
export function findDueProspects(
  db: Executor,
  campaignId: string,
  now: Date,
  limit: number,
  after?: { at: Date; id: string },
): Promise<ProspectRow[]> {
  let query = db
    .selectFrom('sdr_prospects')
    .selectAll()
    .where('campaign_id', '=', campaignId)
    .where('status', '=', 'pending')
    .where('next_attempt_at', '<=', now);
  if (after) query = query.where(sql<boolean>`(next_attempt_at, id) > (${after.at}, ${after.id})`);
  return query.orderBy('next_attempt_at').orderBy('id').limit(limit).execute();
}

/**
 * Those of `ids` still pending and due, soonest first, locked for dialing; a prospect another transaction
 * holds (a call of it ending, a person removing it) is skipped.
 */
export function lockDueProspects(
  trx: Trx,
  campaignId: string,
  ids: string[],
  now: Date,
): Promise<ProspectRow[]> {
  if (ids.length === 0) return Promise.resolve([]);
  return trx
    .selectFrom('sdr_prospects')
    .selectAll()
    .where('campaign_id', '=', campaignId)
    .where('id', '=', sql<string>`any(${ids}::uuid[])`)
    .where('status', '=', 'pending')
    .where('next_attempt_at', '<=', now)
    .orderBy('next_attempt_at')
    .orderBy('id')
    .forUpdate()
    .skipLocked()
    .execute();
}

/** Moves due prospects outside their calling window to its next opening (one statement), unless they moved on. */
export async function deferProspects(
  db: Executor,
  moves: { id: string; at: Date }[],
  now: Date,
): Promise<void> {
  if (moves.length === 0) return;
  await sql`
    UPDATE sdr_prospects p SET next_attempt_at = m.at, updated_at = ${now}
    FROM unnest(${moves.map((m) => m.id)}::uuid[], ${moves.map((m) => m.at)}::timestamptz[]) AS m(id, at)
    WHERE p.id = m.id AND p.status = 'pending' AND p.next_attempt_at <= ${now}`.execute(db);
}

/** Whether a prospect is still to dial or in a call: none left means the campaign's queue has drained. */
export async function hasOpenProspects(db: Executor, campaignId: string): Promise<boolean> {
  const row = await db
    .selectFrom('sdr_prospects')
    .select(sql<number>`1`.as('open'))
    .where('campaign_id', '=', campaignId)
    .where((eb) =>
      eb.or([eb('status', 'in', ['pending', 'queued', 'dialing']), eb('current_call_id', 'is not', null)]),
    )
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

export async function prospectCounts(db: Executor, campaignId: string) {
  const rows = await db
    .selectFrom('sdr_prospects')
    .select([
      'status',
      (eb) => eb.fn.countAll<string>().as('count'),
      sql<string>`sum(attempts)`.as('attempts'),
    ])
    .where('campaign_id', '=', campaignId)
    .groupBy('status')
    .execute();
  return rows.map((row) => ({
    status: row.status,
    count: Number(row.count),
    attempts: Number(row.attempts),
  }));
}

export async function countProspects(db: Executor, campaignIds: string[]): Promise<Map<string, number>> {
  if (campaignIds.length === 0) return new Map();
  const rows = await db
    .selectFrom('sdr_prospects')
    .select(['campaign_id', (eb) => eb.fn.countAll<string>().as('count')])
    .where('campaign_id', '=', sql<string>`any(${campaignIds}::uuid[])`)
    .groupBy('campaign_id')
    .execute();
  return new Map(rows.map((row) => [row.campaign_id, Number(row.count)]));
}

export function findCampaignById(db: Executor, id: string): Promise<CampaignRow | undefined> {
  return db.selectFrom('sdr_campaigns').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Never-dialed prospects waiting for the old window become due now, to be checked against the new one. */
export async function makeUndialedDue(trx: Trx, campaignId: string, now: Date): Promise<void> {
  await trx
    .updateTable('sdr_prospects')
    .set({ next_attempt_at: now })
    .where('campaign_id', '=', campaignId)
    .where('status', '=', 'pending')
    .where('attempts', '=', 0)
    .where('next_attempt_at', '>', now)
    .execute();
}
