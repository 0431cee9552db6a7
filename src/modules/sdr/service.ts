import type { Static } from '@sinclair/typebox';
import type { Tenant, TenantScope } from '../../platform/auth/tenant.ts';
import { newId } from '../../platform/db/ids.ts';
import type { Executor, Trx } from '../../platform/db/pool.ts';
import { errors, type FieldError } from '../../platform/http/errors.ts';
import type { PageRequest } from '../../platform/http/pagination.ts';
import { createAgent } from '../agents/service.ts';
import { campaignCallsInFlight } from '../calls/service.ts';
import { normalizePhone, orgContactsForDialing } from '../contacts/service.ts';
import { numberOwner } from '../numbers/service.ts';
import { getOrg } from '../orgs/service.ts';
import { isTimeZone, minutesOf } from './calling-window.ts';
import { phoneTimeZone } from './phone-zone.ts';
import { type Campaign, type Prospect, toCampaign, toProspect } from './record.ts';
import type { AddProspectsBody, CreateCampaignBody, PutSettingsBody, UpdateCampaignBody } from './schemas.ts';
import {
  type CampaignChanges,
  type CampaignRow,
  type CampaignStatus,
  countProspects,
  deleteProspect,
  findCampaign,
  findSettings,
  insertCampaign,
  insertProspects,
  listCampaigns,
  listProspects,
  lockCampaign,
  lockProspect,
  makeUndialedDue,
  type ProspectStatus,
  prospectCounts,
  type TimeZoneSource,
  updateCampaign,
  upsertSettings,
} from './store.ts';

/**
 * SDR campaigns: an agency's outbound voice campaigns. A campaign, its agent and its calls live under
 * the org's house client; its prospects are contacts of any client of the org. Agency keys only.
 * The dialer is in dialer.ts, the outcomes of its calls in outcomes.ts.
 */

export type { Campaign, Prospect };
export type CreateCampaignInput = Static<typeof CreateCampaignBody>;
export type UpdateCampaignInput = Static<typeof UpdateCampaignBody>;
export type AddProspectsInput = Static<typeof AddProspectsBody>;
export type SettingsInput = Static<typeof PutSettingsBody>;

const DEFAULTS = {
  max_concurrent_calls: 1,
  calling_window_start: '09:00',
  calling_window_end: '20:00',
  calling_days: [1, 2, 3, 4, 5],
  respect_timezone: true,
  max_attempts: 3,
  retry_interval_hours: 24,
  ring_timeout_seconds: 60,
  max_duration_seconds: 300,
  voicemail_enabled: true,
};

/** The moves PATCH (and DELETE, for archived) may make; anything else is 409 `invalid_transition`. */
const MOVES: Record<CampaignStatus, CampaignStatus[]> = {
  draft: ['scheduled', 'cancelled', 'archived'],
  scheduled: ['active', 'cancelled', 'archived'],
  active: ['paused', 'completed', 'cancelled', 'archived'],
  paused: ['active', 'cancelled', 'archived'],
  completed: ['archived'],
  cancelled: ['archived'],
  archived: [],
};

/** Statuses in which a campaign takes prospects. */
const OPEN: CampaignStatus[] = ['draft', 'scheduled', 'active', 'paused'];

/**
 * The scope every SDR record lives in: the org's house client. Only agency keys (acting as themselves
 * or as a client) reach it; a client-bound key is 403 `agency_key_required`.
 */
export async function sdrScope(db: Executor, tenant: Tenant): Promise<TenantScope> {
  assertAgencyKey(tenant);
  const org = await getOrg(db, tenant.orgId);
  return { orgId: tenant.orgId, clientId: org.house_client_id };
}

/** 403 `agency_key_required` for any key but an agency key. */
export function assertAgencyKey(tenant: Tenant): void {
  if (tenant.key.kind !== 'agency') throw errors.agencyKeyRequired();
}

// Settings

export async function getSettings(db: Executor, scope: TenantScope) {
  const row = await findSettings(db, scope.orgId);
  return {
    from_number: row?.from_number ?? null,
    voice_id: row?.voice_id ?? null,
    voice_name: row?.voice_name ?? null,
    business_name: row?.business_name ?? null,
    timezone: row?.timezone ?? null,
    updated_at: row?.updated_at ?? null,
  };
}

/** `PUT /sdr/settings`: replaces the settings; an omitted field is cleared. */
export async function putSettings(trx: Trx, scope: TenantScope, input: SettingsInput) {
  const fromNumber = input.from_number ? await orgNumber(trx, scope, input.from_number, 'from_number') : null;
  if (input.timezone && !isTimeZone(input.timezone)) {
    throw errors.invalidField('timezone', 'must be an IANA time zone such as America/New_York');
  }
  await upsertSettings(trx, {
    org_id: scope.orgId,
    from_number: fromNumber,
    voice_id: input.voice_id ?? null,
    voice_name: input.voice_name ?? null,
    business_name: input.business_name ?? null,
    timezone: input.timezone ?? null,
    updated_at: new Date(),
  });
  return getSettings(trx, scope);
}

async function orgNumber(db: Executor, scope: TenantScope, value: string, field: string): Promise<string> {
  const e164 = normalizePhone(value, 'US', field);
  const owner = await numberOwner(db, e164);
  if (owner?.org_id !== scope.orgId) {
    throw errors.invalidField(field, "is not one of this org's phone numbers (see GET /v1/numbers)");
  }
  return e164;
}

// Campaigns

function checkWindow(start: string, end: string, field = 'calling_window_end'): void {
  if (minutesOf(start) >= minutesOf(end)) {
    throw errors.invalidField(field, `must be after calling_window_start (${start})`);
  }
}

const sortedDays = (days: number[]) => [...new Set(days)].sort((a, b) => a - b);

/** 403 `feature_disabled` while the org's `sdr_outbound` flag is off. */
async function assertSdrOutbound(db: Executor, scope: TenantScope) {
  const org = await getOrg(db, scope.orgId);
  if (!org.features.sdr_outbound) {
    throw errors.featureDisabled(
      'sdr_outbound',
      'SDR outbound campaigns are not enabled for this agency; an operator turns on features.sdr_outbound.',
    );
  }
  return org;
}

/**
 * `POST /sdr/campaigns`: 403 `feature_disabled` until the org's `sdr_outbound` flag is on. A name is
 * enough: what is omitted takes its documented default, and the number, voice and business name left
 * null come from the SDR settings when dialing starts.
 */
export async function createCampaign(
  trx: Trx,
  scope: TenantScope,
  input: CreateCampaignInput,
): Promise<Campaign> {
  const org = await assertSdrOutbound(trx, scope);
  const settings = await getSettings(trx, scope);
  const window = {
    start: input.calling_window_start ?? DEFAULTS.calling_window_start,
    end: input.calling_window_end ?? DEFAULTS.calling_window_end,
  };
  checkWindow(window.start, window.end);
  const fromNumber = input.from_number ? await orgNumber(trx, scope, input.from_number, 'from_number') : null;
  const agent = await createAgent(trx, scope, {
    name: input.name,
    kind: 'outbound_voice',
    purpose: 'sdr_campaign',
    greeting: input.opening_message ?? '',
    voice_id: input.voice_id ?? null,
  });
  const now = new Date();
  const row = await insertCampaign(trx, {
    id: newId(),
    org_id: scope.orgId,
    client_id: scope.clientId,
    agent_id: agent.id,
    name: input.name,
    description: input.description ?? null,
    opening_message: input.opening_message ?? null,
    voicemail_message: input.voicemail_message ?? null,
    system_prompt: input.system_prompt ?? null,
    voice_id: input.voice_id ?? null,
    voice_name: input.voice_name ?? null,
    business_name: input.business_name ?? null,
    from_number: fromNumber,
    max_concurrent_calls: input.max_concurrent_calls ?? DEFAULTS.max_concurrent_calls,
    calling_window_start: window.start,
    calling_window_end: window.end,
    calling_days: sortedDays(input.calling_days ?? DEFAULTS.calling_days),
    respect_timezone: input.respect_timezone ?? DEFAULTS.respect_timezone,
    timezone: settings.timezone ?? org.timezone ?? 'UTC',
    max_attempts: input.max_attempts ?? DEFAULTS.max_attempts,
    retry_interval_hours: input.retry_interval_hours ?? DEFAULTS.retry_interval_hours,
    ring_timeout_seconds: input.ring_timeout_seconds ?? DEFAULTS.ring_timeout_seconds,
    max_duration_seconds: input.max_duration_seconds ?? DEFAULTS.max_duration_seconds,
    scheduled_start_at: input.scheduled_start_at ? new Date(input.scheduled_start_at) : null,
    voicemail_enabled: input.voicemail_enabled ?? DEFAULTS.voicemail_enabled,
    precall_brief: input.precall_brief ?? false,
    cal_com_booking_url: input.cal_com_booking_url ?? null,
    post_call_email: input.post_call_email ?? null,
    metadata: JSON.stringify(input.metadata ?? {}),
    status: input.scheduled_start_at ? 'scheduled' : 'draft',
    created_at: now,
    updated_at: now,
  });
  const added = input.prospect_ids?.length
    ? await addProspectsTo(
        trx,
        scope,
        row,
        input.prospect_ids.map((contact_id) => ({ contact_id })),
        'prospect_ids',
      )
    : 0;
  return toCampaign(row, added, settings.from_number);
}

async function campaignOf(db: Executor, scope: TenantScope, id: string): Promise<CampaignRow> {
  const row = await findCampaign(db, scope, id);
  if (!row) throw errors.notFound('SDR campaign', id);
  return row;
}

async function lockedCampaign(trx: Trx, scope: TenantScope, id: string): Promise<CampaignRow> {
  const row = await lockCampaign(trx, scope, id);
  if (!row) throw errors.notFound('SDR campaign', id);
  return row;
}

/** `GET /sdr/campaigns/{id}`: the campaign and its stats. */
export async function getCampaign(db: Executor, scope: TenantScope, id: string) {
  const row = await campaignOf(db, scope, id);
  const counts = await prospectCounts(db, id);
  const byStatus: Record<string, number> = {};
  let total = 0;
  let attempts = 0;
  for (const { status, count, attempts: made } of counts) {
    byStatus[status] = count;
    total += count;
    attempts += made;
  }
  const settings = await getSettings(db, scope);
  return {
    ...toCampaign(row, total, settings.from_number),
    stats: {
      total_prospects: total,
      by_status: byStatus,
      attempts,
      in_flight: await campaignCallsInFlight(db, scope, id),
      connected: (byStatus.connected ?? 0) + (byStatus.booked ?? 0),
      voicemails: byStatus.voicemail ?? 0,
      booked: byStatus.booked ?? 0,
    },
  };
}

/** `GET /sdr/campaigns`: newest first; archived campaigns only when asked for by status. */
export async function searchCampaigns(
  db: Executor,
  scope: TenantScope,
  status: CampaignStatus | undefined,
  page: PageRequest<string>,
): Promise<Campaign[]> {
  const rows = await listCampaigns(db, scope, status, page);
  const totals = await countProspects(
    db,
    rows.map((row) => row.id),
  );
  const settings = await getSettings(db, scope);
  return rows.map((row) => toCampaign(row, totals.get(row.id) ?? 0, settings.from_number));
}

/**
 * `PATCH /sdr/campaigns/{id}`: settings and status moves (409 `invalid_transition` for an illegal one).
 * Moving to active needs the `sdr_outbound` flag (403 `feature_disabled`) and a number to dial from,
 * the campaign's or the settings' (409 `from_number_required`).
 */
export async function updateCampaignSettings(
  trx: Trx,
  scope: TenantScope,
  id: string,
  patch: UpdateCampaignInput,
) {
  const current = await lockedCampaign(trx, scope, id);
  const changes: CampaignChanges = {};
  if (patch.from_number !== undefined) {
    changes.from_number =
      patch.from_number === null ? null : await orgNumber(trx, scope, patch.from_number, 'from_number');
  }
  if (patch.status !== undefined && patch.status !== current.status) {
    if (!MOVES[current.status].includes(patch.status))
      throw errors.invalidTransition(current.status, patch.status);
    if (patch.status === 'active') {
      await assertSdrOutbound(trx, scope);
      const from = changes.from_number !== undefined ? changes.from_number : current.from_number;
      if (!from && !(await getSettings(trx, scope)).from_number) throw errors.fromNumberRequired(id);
    }
    changes.status = patch.status;
    if (patch.status === 'completed') changes.completed_at = new Date();
    if (patch.status === 'archived') changes.archived_at = new Date();
  }
  const start = patch.calling_window_start ?? current.calling_window_start;
  const end = patch.calling_window_end ?? current.calling_window_end;
  if (patch.calling_window_start !== undefined || patch.calling_window_end !== undefined)
    checkWindow(start, end);
  const fields = [
    'name',
    'description',
    'calling_window_start',
    'calling_window_end',
    'max_concurrent_calls',
    'max_attempts',
    'retry_interval_hours',
    'ring_timeout_seconds',
    'max_duration_seconds',
    'precall_brief',
  ] as const;
  for (const field of fields)
    if (patch[field] !== undefined) Object.assign(changes, { [field]: patch[field] });
  if (patch.calling_days !== undefined) changes.calling_days = sortedDays(patch.calling_days);
  if (patch.metadata !== undefined) changes.metadata = JSON.stringify(patch.metadata);
  if (patch.scheduled_start_at !== undefined) {
    changes.scheduled_start_at =
      patch.scheduled_start_at === null ? null : new Date(patch.scheduled_start_at);
  }
  if (Object.keys(changes).length > 0) await updateCampaign(trx, id, changes);
  const windowChanged = ['calling_window_start', 'calling_window_end', 'calling_days'].some(
    (field) => field in changes,
  );
  if (windowChanged) await makeUndialedDue(trx, id, new Date());
  return getCampaign(trx, scope, id);
}

/** `DELETE /sdr/campaigns/{id}`: archives it; calls in flight are not cancelled. */
export async function archiveCampaign(trx: Trx, scope: TenantScope, id: string): Promise<void> {
  const current = await lockedCampaign(trx, scope, id);
  if (current.status === 'archived') return;
  await updateCampaign(trx, id, { status: 'archived', archived_at: new Date() });
}

// Prospects

/** `POST /sdr/campaigns/{id}/prospects`: adds contacts of the org; contacts already in it are ignored. */
export async function addProspects(trx: Trx, scope: TenantScope, id: string, input: AddProspectsInput) {
  const campaign = await lockedCampaign(trx, scope, id);
  const wanted = [
    ...(input.contact_ids ?? []).map((contact_id) => ({ contact_id })),
    ...(input.prospects ?? []),
  ];
  if (wanted.length === 0) throw errors.invalidField('contact_ids', 'give contact_ids or prospects');
  if (wanted.length > 10_000) throw errors.invalidField('prospects', 'at most 10,000 per call');
  const added = await addProspectsTo(
    trx,
    scope,
    campaign,
    wanted,
    input.contact_ids ? 'contact_ids' : 'prospects',
  );
  return { added, ignored: wanted.length - added };
}

async function addProspectsTo(
  trx: Trx,
  scope: TenantScope,
  campaign: CampaignRow,
  wanted: { contact_id: string; timezone?: string; metadata?: Record<string, unknown> }[],
  field: string,
): Promise<number> {
  if (!OPEN.includes(campaign.status)) {
    throw errors.conflict('conflict', `A ${campaign.status} campaign takes no more prospects.`, {
      status: campaign.status,
    });
  }
  const failures: FieldError[] = [];
  wanted.forEach((prospect, index) => {
    if (prospect.timezone !== undefined && !isTimeZone(prospect.timezone)) {
      failures.push({ field: `prospects[${index}].timezone`, message: 'must be an IANA time zone' });
    }
  });
  const ids = [...new Set(wanted.map((prospect) => prospect.contact_id.toLowerCase()))];
  const contacts = new Map((await orgContactsForDialing(trx, scope.orgId, ids)).map((c) => [c.id, c]));
  const unknown = ids.filter((contactId) => !contacts.has(contactId));
  if (unknown.length > 0) {
    failures.push({
      field,
      message: `${unknown.length === 1 ? 'is not a contact' : 'are not contacts'} of this org: ${unknown.slice(0, 20).join(', ')}`,
    });
  }
  if (failures.length > 0) throw errors.validation(failures);

  const settings = await getSettings(trx, scope);
  const org = await getOrg(trx, scope.orgId);
  const now = new Date();
  const seen = new Set<string>();
  const rows = [];
  for (const prospect of wanted) {
    const contactId = prospect.contact_id.toLowerCase();
    if (seen.has(contactId)) continue;
    seen.add(contactId);
    const contact = contacts.get(contactId)!;
    const zone = prospectZone(prospect.timezone, contact, settings.timezone, org.timezone);
    rows.push({
      id: newId(),
      org_id: scope.orgId,
      campaign_id: campaign.id,
      contact_id: contactId,
      contact_client_id: contact.client_id,
      phone: contact.phone,
      timezone: zone.timezone,
      timezone_source: zone.source,
      status: 'pending' as const,
      next_attempt_at: now,
      metadata: JSON.stringify(prospect.metadata ?? {}),
      created_at: now,
      updated_at: now,
    });
  }
  return insertProspects(trx, rows);
}

/** The explicit zone, else the contact's, else the phone number's, else the settings', the org's, UTC. */
export function prospectZone(
  explicit: string | undefined,
  contact: { phone: string | null; timezone: string | null },
  settingsZone: string | null,
  orgZone: string | null,
): { timezone: string; source: TimeZoneSource } {
  if (explicit) return { timezone: explicit, source: 'explicit' };
  if (contact.timezone && isTimeZone(contact.timezone))
    return { timezone: contact.timezone, source: 'contact' };
  const fromPhone = contact.phone ? phoneTimeZone(contact.phone) : null;
  if (fromPhone && isTimeZone(fromPhone)) return { timezone: fromPhone, source: 'phone' };
  if (settingsZone) return { timezone: settingsZone, source: 'settings' };
  if (orgZone) return { timezone: orgZone, source: 'org' };
  return { timezone: 'UTC', source: 'default' };
}

/** `GET /sdr/campaigns/{id}/prospects`. */
export async function searchProspects(
  db: Executor,
  scope: TenantScope,
  id: string,
  status: ProspectStatus | undefined,
  page: PageRequest<string>,
): Promise<Prospect[]> {
  await campaignOf(db, scope, id);
  return (await listProspects(db, scope.orgId, id, status, page)).map(toProspect);
}

/** `DELETE /sdr/campaigns/{id}/prospects/{prospectId}`: only while the prospect is not in a call (409). */
export async function removeProspect(trx: Trx, scope: TenantScope, id: string, prospectId: string) {
  await campaignOf(trx, scope, id);
  const prospect = await lockProspect(trx, scope.orgId, id, prospectId);
  if (!prospect) throw errors.notFound('Prospect', prospectId);
  if (prospect.current_call_id) throw errors.prospectInCall(prospectId, prospect.current_call_id);
  await deleteProspect(trx, prospectId);
}
