import type { Logger } from 'pino';
import type { TenantScope } from '../../platform/auth/tenant.ts';
import type { Db, Executor, Trx } from '../../platform/db/pool.ts';
import { emit } from '../../platform/events/emit.ts';
import { ApiError } from '../../platform/http/errors.ts';
import { type Lease, type LeasedWork, leasedLoop } from '../../platform/jobs/leased.ts';
import type { Loop } from '../../platform/jobs/runner.ts';
import { getJob, requestPrecallBrief } from '../ai-jobs/service.ts';
import { campaignCallsInFlight, startOutboundCall } from '../calls/service.ts';
import { type DialableContact, orgContactsForDialing, phoneReach } from '../contacts/service.ts';
import { getOrg } from '../orgs/service.ts';
import { type CallingWindow, insideWindow, nextOpening } from './calling-window.ts';
import { toCampaign } from './record.ts';
import {
  activateDueCampaigns,
  type CampaignRow,
  countProspects,
  deferProspects,
  endVisit,
  findDueProspects,
  findSettings,
  hasOpenProspects,
  lockActiveCampaign,
  lockDueProspects,
  type ProspectRow,
  type SettingsRow,
  type SkipReason,
  updateCampaign,
  updateProspect,
  visitsDue,
} from './store.ts';

/**
 * The SDR dialer, a tick every `SDR_TICK_MS`. Scheduled campaigns whose start has come become active; an
 * active campaign is visited once a tick by one worker, which holds it under a lease (leased work,
 * platform/jobs/leased.ts) rather than a row lock. A visit scans the campaign's due prospects without a
 * lock (those outside their calling window are moved to its next opening) and dials the ones ready in one
 * short transaction that holds the campaign's row while the lease does: it finds the campaign still
 * active, counts the calls in flight (`campaignCallsInFlight` sees the calls this transaction started),
 * takes the picked prospects that are still due (`SKIP LOCKED`), and starts each call with
 * `startOutboundCall` and the cause key `sdr:<prospect>:<attempt>`: a visit run again, or a crash that
 * rolls the transaction back, never dials one attempt twice. Consent and do-not-call are asked here, at
 * the moment of dialing, and so are the org's `sdr_outbound` switch (off: no new call) and the number,
 * voice and business name the campaign leaves to the SDR settings (no number anywhere: the campaign is
 * paused with `from_number_required`). A person pausing the campaign waits for one such transaction at
 * most, not for the scan.
 */

/** Prospects looked at per campaign per visit at most (those outside their window are pushed to its opening). */
const SCAN_LIMIT = 1000;
const BATCH = 100;
/** Campaigns one worker claims at once, and visits one after the other. */
const VISIT_BATCH = 5;
/** Far longer than a visit takes (a scan and a few short transactions); a dead worker's campaigns wait this long. */
const VISIT_LEASE_MS = 15_000;
const MAX_VISIT_ATTEMPTS = 3;
const defaultPrompt = (businessName: string | null) =>
  `You are a friendly sales development representative${businessName ? ` of ${businessName}` : ''}. ` +
  'Introduce yourself and the business, find out whether the person is interested, and offer to book a meeting.';

/** What a campaign dials as: its own number, voice and business name, else the SDR settings'. */
interface Sender {
  from: string;
  voiceId: string | null;
  voiceName: string | null;
  businessName: string | null;
}

/** Null when there is no number to dial from, on the campaign or in the settings. */
function senderOf(campaign: CampaignRow, settings: SettingsRow | undefined): Sender | null {
  const from = campaign.from_number ?? settings?.from_number;
  if (!from) return null;
  return {
    from,
    voiceId: campaign.voice_id ?? settings?.voice_id ?? null,
    voiceName: campaign.voice_name ?? settings?.voice_name ?? null,
    businessName: campaign.business_name ?? settings?.business_name ?? null,
  };
}

export interface DialerContext {
  db: Db;
  log: Logger;
  /** Campaigns with `precall_brief`: what a brief costs and how long a first dial waits for it. */
  briefs?: BriefOptions;
}

/**
 * The dialer's visits as leased work: an active campaign is due a visit once its last one is `revisitMs`
 * old; a worker claims a few, least recently visited first, and visits them one after the other. A visit
 * that fails is tried again a tick later; after `MAX_VISIT_ATTEMPTS` in a row it is logged and the
 * campaign waits for its next tick.
 */
export function campaignVisits(context: DialerContext, revisitMs: number): LeasedWork<CampaignRow> {
  return {
    name: 'sdr_dialer',
    intervalMs: revisitMs,
    ...visitsDue,
    leaseMs: VISIT_LEASE_MS,
    batch: VISIT_BATCH,
    concurrency: 1,
    attempts: { max: MAX_VISIT_ATTEMPTS, backoffMs: () => revisitMs },
    work: (lease) => visitCampaign(context, lease, revisitMs),
    exhausted: async (lease, error) => {
      context.log.error({ err: error, campaignId: lease.row.id }, 'visits of an SDR campaign keep failing');
      await lease.inTransaction((trx) => endVisit(trx, lease.row.id, revisitMs));
    },
  };
}

/**
 * The dialer's loop: every `SDR_TICK_MS` each worker activates the scheduled campaigns whose start has
 * come, then visits the active campaigns due a visit; each is visited once a tick, by whichever worker.
 */
export function dialerLoop(context: DialerContext, tickMs: number): Loop {
  const visits = leasedLoop(context.db, campaignVisits(context, tickMs), context.log);
  return {
    ...visits,
    run: async () => {
      await activateDueCampaigns(context.db, new Date());
      return visits.run();
    },
  };
}

/** One tick of one dialer, as a test runs it: the campaigns it visits may be visited again at once. */
export async function dialerTick(context: DialerContext): Promise<void> {
  await dialerLoop(context, 0).run();
}

/** One visit of a claimed campaign: it dials what it may, then is due its next visit `revisitMs` later. */
async function visitCampaign(context: DialerContext, lease: Lease<CampaignRow>, revisitMs: number) {
  const now = new Date();
  const dialed = await dialCampaign(context, lease, now);
  await lease.inTransaction(async (trx) => {
    if (dialed) await completeIfDrained(trx, lease.row.id, now);
    await endVisit(trx, lease.row.id, revisitMs);
  });
}

/**
 * Dials what one campaign may dial now; false when its org's `sdr_outbound` switch is off (calls in flight
 * end normally; it resumes once back on) or it has no number to dial from (it is paused, saying so). Every
 * write is made while the lease holds: a worker that lost it stops at its next transaction.
 */
async function dialCampaign(context: DialerContext, lease: Lease<CampaignRow>, now: Date): Promise<boolean> {
  const { db, log } = context;
  const campaign = lease.row;
  if (!(await getOrg(db, campaign.org_id)).features.sdr_outbound) return false;
  const scope: TenantScope = { orgId: campaign.org_id, clientId: campaign.client_id };
  if (!senderOf(campaign, await findSettings(db, campaign.org_id))) {
    await lease.inTransaction(async (trx) => {
      if (await lockActiveCampaign(trx, campaign.id))
        await updateCampaign(trx, campaign.id, { status: 'paused', paused_reason: 'from_number_required' });
    });
    return false;
  }
  let slots = campaign.max_concurrent_calls - (await campaignCallsInFlight(db, scope, campaign.id));
  let after: DueCursor | undefined;
  let scanned = 0;
  while (slots > 0 && scanned < SCAN_LIMIT) {
    const picked = await pickDueProspects(db, campaign, now, slots, after);
    scanned += picked.scanned;
    after = picked.after;
    if (picked.ready.length + picked.waiting.length > 0) {
      const left = await lease.inTransaction((trx) =>
        dialPicked(trx, log, campaign.id, picked, now, context.briefs),
      );
      if (left === null) break;
      slots = left;
    }
    if (picked.done) break;
  }
  return true;
}

/**
 * Dials the picked prospects that are still due, as many as the campaign has room for, holding the
 * campaign's row; returns the room left, or null when the campaign stopped (paused, or it cannot dial:
 * its number or agent is gone, and it is tried again next tick). The window is checked again with the
 * campaign as it is now (it may have changed since the scan): a prospect outside it is moved to its next
 * opening, never dialed.
 */
export async function dialPicked(
  trx: Trx,
  log: Logger,
  campaignId: string,
  picked: Pick<Picked, 'ready' | 'waiting'>,
  now: Date,
  briefs: BriefOptions = DEFAULT_BRIEFS,
): Promise<number | null> {
  let campaign = await lockActiveCampaign(trx, campaignId);
  if (!campaign) return null;
  const window = windowOf(campaign);
  const due: ProspectRow[] = [];
  const waiting: { id: string; at: Date }[] = [];
  const ids = [...picked.ready, ...picked.waiting].map((prospect) => prospect.id);
  for (const prospect of await lockDueProspects(trx, campaign.id, ids, now)) {
    const zone = zoneOf(campaign, prospect);
    if (insideWindow(now, zone, window)) due.push(prospect);
    else waiting.push({ id: prospect.id, at: nextOpening(now, zone, window) });
  }
  await deferProspects(trx, waiting, now);
  const sender = senderOf(campaign, await findSettings(trx, campaign.org_id));
  if (!sender) return null;
  const scope: TenantScope = { orgId: campaign.org_id, clientId: campaign.client_id };
  let slots = campaign.max_concurrent_calls - (await campaignCallsInFlight(trx, scope, campaign.id));
  if (slots <= 0) return 0;
  const contacts = new Map(
    (
      await orgContactsForDialing(
        trx,
        campaign.org_id,
        due.map((p) => p.contact_id),
      )
    ).map((c) => [c.id, c]),
  );
  for (const prospect of due) {
    if (slots <= 0) break;
    let dialed: boolean;
    try {
      const contact = contacts.get(prospect.contact_id);
      dialed = await dialProspect(trx, campaign, sender, prospect, contact, now, briefs);
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      log.warn({ campaignId: campaign.id, err: error }, 'an SDR campaign could not dial');
      return null;
    }
    if (!dialed) continue;
    slots--;
    if (!campaign.started_at) {
      campaign = await updateCampaign(trx, campaign.id, { started_at: now });
      await emit(trx, scope, 'sdr.campaign.started', await campaignEvent(trx, campaign), campaign.metadata);
    }
  }
  return slots;
}

export interface DueCursor {
  at: Date;
  id: string;
}

/** What a scan of due prospects found: those inside their window, those outside it, where it stopped. */
export interface Picked {
  ready: ProspectRow[];
  waiting: ProspectRow[];
  after?: DueCursor;
  done: boolean;
  scanned: number;
}

const windowOf = (campaign: CampaignRow): CallingWindow => ({
  start: campaign.calling_window_start,
  end: campaign.calling_window_end,
  days: campaign.calling_days,
});
const zoneOf = (campaign: CampaignRow, prospect: ProspectRow) =>
  campaign.respect_timezone ? prospect.timezone : campaign.timezone;

/**
 * The next due prospects of a campaign inside their calling window, at most `wanted`, and those outside
 * it met on the way, soonest first after `after`, read without a lock and changing nothing (the dialing
 * transaction takes those still due). `done` when no more are due.
 */
export async function pickDueProspects(
  db: Executor,
  campaign: CampaignRow,
  now: Date,
  wanted: number,
  after?: DueCursor,
): Promise<Picked> {
  const window = windowOf(campaign);
  const ready: ProspectRow[] = [];
  const waiting: ProspectRow[] = [];
  let scanned = 0;
  const picked = (done: boolean) => ({ ready, waiting, after, done, scanned });
  while (ready.length < wanted && scanned < SCAN_LIMIT) {
    // A few more than needed, so that some outside their window do not take another round trip.
    const limit = Math.min(BATCH, wanted - ready.length + 10);
    const due = await findDueProspects(db, campaign.id, now, limit, after);
    scanned += due.length;
    for (const prospect of due) {
      if (!insideWindow(now, zoneOf(campaign, prospect), window)) waiting.push(prospect);
      else if (ready.length < wanted) ready.push(prospect);
      // One more than wanted: it stays due, first in line after the last one picked.
      else return picked(false);
      after = { at: prospect.next_attempt_at, id: prospect.id };
    }
    if (due.length < limit) return picked(true);
  }
  return picked(false);
}

/** Dials one prospect, or skips it when the CRM forbids the call now; true when a call was started. */
async function dialProspect(
  trx: Trx,
  campaign: CampaignRow,
  sender: Sender,
  prospect: ProspectRow,
  contact: DialableContact | undefined,
  now: Date,
  briefs: BriefOptions,
) {
  const scope: TenantScope = { orgId: campaign.org_id, clientId: campaign.client_id };
  const skip = (reason: SkipReason) =>
    updateProspect(trx, prospect.id, { status: 'skipped', skip_reason: reason, last_outcome: reason });
  if (!contact?.phone || contact.archived) {
    await skip('no_phone');
    return false;
  }
  // Consent lives with the contact's own client, whichever client the campaign dials from.
  const { blocked } = await phoneReach(
    trx,
    { orgId: campaign.org_id, clientId: contact.client_id },
    contact.phone,
  );
  if (blocked) {
    await skip(blocked === 'opted_out' ? 'opted_out' : 'do_not_call');
    return false;
  }
  const brief = campaign.precall_brief
    ? await precallBrief(trx, campaign, prospect, contact, now, briefs)
    : null;
  if (brief?.wait) return false;
  const attempt = prospect.attempts + 1;
  const { call } = await startOutboundCall(trx, scope, {
    causeKey: `sdr:${prospect.id}:${attempt}`,
    agentId: campaign.agent_id,
    from: sender.from,
    to: contact.phone,
    ringTimeoutSeconds: campaign.ring_timeout_seconds,
    maxDurationSeconds: campaign.max_duration_seconds,
    voicemail: { enabled: campaign.voicemail_enabled, message: campaign.voicemail_message },
    systemPrompt: campaign.system_prompt ?? defaultPrompt(sender.businessName),
    greeting: campaign.opening_message ?? undefined,
    voiceId: sender.voiceId,
    voiceName: sender.voiceName,
    sdrCampaignId: campaign.id,
    prospectId: prospect.id,
    metadata: { sdr_campaign_id: campaign.id, prospect_id: prospect.id, contact_id: prospect.contact_id },
    eventMetadata: { ...campaign.metadata, ...prospect.metadata },
    context: brief?.text ?? null,
  });
  await updateProspect(trx, prospect.id, {
    status: 'queued',
    attempts: attempt,
    phone: contact.phone,
    last_attempt_at: now,
    current_call_id: call.id,
    call_ids: [...prospect.call_ids, call.id],
  });
  return true;
}

export interface BriefOptions {
  fuelCost: number;
  waitMs: number;
}

const DEFAULT_BRIEFS: BriefOptions = { fuelCost: 1, waitMs: 120_000 };

/**
 * The pre-call brief of a prospect's first dial: asked for once (the prospect keeps the job's id),
 * then waited for, the prospect staying due, until it is written or `waitMs` has passed. A brief that
 * failed, is late, or could not be asked for (no FUEL) lets the dial go ahead without one.
 */
async function precallBrief(
  trx: Trx,
  campaign: CampaignRow,
  prospect: ProspectRow,
  contact: DialableContact,
  now: Date,
  briefs: BriefOptions,
): Promise<{ wait: boolean; text: string | null }> {
  if (prospect.attempts > 0) return { wait: false, text: null };
  const tenant = { orgId: campaign.org_id, clientId: contact.client_id };
  if (!prospect.brief_requested_at) {
    const job = await requestPrecallBrief(
      trx,
      tenant,
      prospect.contact_id,
      { sdr_campaign_id: campaign.id, prospect_id: prospect.id },
      briefs.fuelCost,
    );
    await updateProspect(trx, prospect.id, { brief_job_id: job?.id ?? null, brief_requested_at: now });
    return { wait: job !== null, text: null };
  }
  if (!prospect.brief_job_id) return { wait: false, text: null };
  const job = await getJob(trx, tenant, prospect.brief_job_id);
  if (job.status === 'completed' && job.result && 'brief' in job.result)
    return { wait: false, text: callContext(job.result) };
  const late = now.getTime() - prospect.brief_requested_at.getTime() >= briefs.waitMs;
  return { wait: job.status !== 'failed' && !late, text: null };
}

/** What the agent is handed: the brief, then its talking points, one a line. */
function callContext({ brief, talking_points }: { brief: string; talking_points: string[] }): string {
  if (!talking_points.length) return brief;
  return `${brief}\n\nTalking points:\n${talking_points.map((point) => `- ${point}`).join('\n')}`;
}

/** A campaign that has dialed and has no prospect left to dial or in a call is completed. */
async function completeIfDrained(trx: Trx, campaignId: string, now: Date) {
  const campaign = await lockActiveCampaign(trx, campaignId);
  if (!campaign?.started_at) return;
  if (await hasOpenProspects(trx, campaign.id)) return;
  const scope: TenantScope = { orgId: campaign.org_id, clientId: campaign.client_id };
  if ((await campaignCallsInFlight(trx, scope, campaign.id)) > 0) return;
  const completed = await updateCampaign(trx, campaign.id, { status: 'completed', completed_at: now });
  await emit(trx, scope, 'sdr.campaign.completed', await campaignEvent(trx, completed), completed.metadata);
}

async function campaignEvent(trx: Trx, campaign: CampaignRow) {
  const total = (await countProspects(trx, [campaign.id])).get(campaign.id) ?? 0;
  const settings = await findSettings(trx, campaign.org_id);
  return { campaign_id: campaign.id, ...toCampaign(campaign, total, settings?.from_number ?? null) };
}
