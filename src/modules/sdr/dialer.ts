import type { Logger } from 'pino';
import type { TenantScope } from '../../platform/auth/tenant.ts';
import type { Db, Trx } from '../../platform/db/pool.ts';
import { inTransaction } from '../../platform/db/transaction.ts';
import { emit } from '../../platform/events/emit.ts';
import { ApiError } from '../../platform/http/errors.ts';
import { campaignCallsInFlight, startOutboundCall } from '../calls/service.ts';
import { type DialableContact, orgContactsForDialing, phoneReach } from '../contacts/service.ts';
import { getOrg } from '../orgs/service.ts';
import { type CallingWindow, insideWindow, nextOpening } from './calling-window.ts';
import { toCampaign } from './record.ts';
import {
  activateDueCampaigns,
  activeCampaigns,
  type CampaignRow,
  claimActiveCampaign,
  claimDueProspects,
  countProspects,
  findSettings,
  hasOpenProspects,
  type ProspectRow,
  type SettingsRow,
  type SkipReason,
  updateCampaign,
  updateProspect,
} from './store.ts';

/**
 * The SDR dialer, one tick every `SDR_TICK_MS`. Scheduled campaigns whose start has come become active;
 * then each active campaign is dialed in one transaction that holds its row (`FOR UPDATE SKIP LOCKED`):
 * a second worker skips a campaign the first is dialing, so the concurrency count it reads
 * (`campaignCallsInFlight`, which sees the calls this transaction started) cannot be raced. Due prospects
 * are claimed with `SKIP LOCKED` too, and each dial is `startOutboundCall` with the cause key
 * `sdr:<prospect>:<attempt>`: a tick run again, or a crash that rolls the transaction back, never dials
 * one attempt twice. Consent and do-not-call are asked here, at the moment of dialing, and so are the
 * org's `sdr_outbound` switch (off: no new call) and the number, voice and business name the campaign
 * leaves to the SDR settings (no number anywhere: the campaign is paused with `from_number_required`).
 */

/** Prospects looked at per campaign per tick at most (those outside their window are pushed to its opening). */
const SCAN_LIMIT = 1000;
const BATCH = 100;
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
}

/** One tick of the dialer. */
export async function dialerTick(context: DialerContext): Promise<void> {
  const now = new Date();
  await activateDueCampaigns(context.db, now);
  for (const { id } of await activeCampaigns(context.db)) {
    await inTransaction(context.db, (trx) => dialCampaign(trx, context.log, id, now));
  }
}

/**
 * Dials what one campaign may dial now; false when another worker holds the campaign, it is not active,
 * or its org's `sdr_outbound` switch is off (calls in flight end normally; it resumes once back on).
 */
export async function dialCampaign(trx: Trx, log: Logger, campaignId: string, now: Date): Promise<boolean> {
  let campaign = await claimActiveCampaign(trx, campaignId);
  if (!campaign) return false;
  if (!(await getOrg(trx, campaign.org_id)).features.sdr_outbound) return false;
  const scope: TenantScope = { orgId: campaign.org_id, clientId: campaign.client_id };
  const sender = senderOf(campaign, await findSettings(trx, campaign.org_id));
  if (!sender) {
    await updateCampaign(trx, campaign.id, { status: 'paused', paused_reason: 'from_number_required' });
    return true;
  }
  let slots = campaign.max_concurrent_calls - (await campaignCallsInFlight(trx, scope, campaign.id));
  let after: DueCursor | undefined;
  let scanned = 0;
  scan: while (slots > 0 && scanned < SCAN_LIMIT) {
    const picked = await pickDueProspects(trx, campaign, now, slots, after);
    scanned += picked.scanned;
    after = picked.after;
    const contacts = new Map(
      (
        await orgContactsForDialing(
          trx,
          campaign.org_id,
          picked.ready.map((p) => p.contact_id),
        )
      ).map((c) => [c.id, c]),
    );
    for (const prospect of picked.ready) {
      let dialed: boolean;
      try {
        dialed = await dialProspect(trx, campaign, sender, prospect, contacts.get(prospect.contact_id), now);
      } catch (error) {
        // The campaign cannot dial (its number or agent is gone): it stays active and is tried next tick.
        if (!(error instanceof ApiError)) throw error;
        log.warn({ campaignId: campaign.id, err: error }, 'an SDR campaign could not dial');
        break scan;
      }
      if (!dialed) continue;
      slots--;
      if (!campaign.started_at) {
        campaign = await updateCampaign(trx, campaign.id, { started_at: now });
        await emit(trx, scope, 'sdr.campaign.started', await campaignEvent(trx, campaign), campaign.metadata);
      }
    }
    if (picked.done) break;
  }
  await completeIfDrained(trx, campaign, scope, now);
  return true;
}

export interface DueCursor {
  at: Date;
  id: string;
}

/**
 * The next due prospects of a campaign inside their calling window, at most `wanted`, locked (`SKIP
 * LOCKED`: another worker's are passed over), soonest first after `after`. A due prospect outside its
 * window is moved to the window's next opening. `done` when no more are due.
 */
export async function pickDueProspects(
  trx: Trx,
  campaign: CampaignRow,
  now: Date,
  wanted: number,
  after?: DueCursor,
): Promise<{ ready: ProspectRow[]; after?: DueCursor; done: boolean; scanned: number }> {
  const window: CallingWindow = {
    start: campaign.calling_window_start,
    end: campaign.calling_window_end,
    days: campaign.calling_days,
  };
  const ready: ProspectRow[] = [];
  let scanned = 0;
  while (ready.length < wanted && scanned < SCAN_LIMIT) {
    // A few more than needed, so that some outside their window do not take another round trip.
    const limit = Math.min(BATCH, wanted - ready.length + 10);
    const due = await claimDueProspects(trx, campaign.id, now, limit, after);
    scanned += due.length;
    for (const prospect of due) {
      after = { at: prospect.next_attempt_at, id: prospect.id };
      const zone = campaign.respect_timezone ? prospect.timezone : campaign.timezone;
      if (!insideWindow(now, zone, window)) {
        await updateProspect(trx, prospect.id, { next_attempt_at: nextOpening(now, zone, window) });
      } else if (ready.length < wanted) {
        ready.push(prospect);
      } else {
        // One more than wanted: it stays due, first in line after the last one picked.
        return { ready, after: cursorOf(ready[ready.length - 1]), done: false, scanned };
      }
    }
    if (due.length < limit) return { ready, after, done: true, scanned };
  }
  return { ready, after, done: false, scanned };
}

const cursorOf = (prospect: ProspectRow): DueCursor => ({ at: prospect.next_attempt_at, id: prospect.id });

/** Dials one prospect, or skips it when the CRM forbids the call now; true when a call was started. */
async function dialProspect(
  trx: Trx,
  campaign: CampaignRow,
  sender: Sender,
  prospect: ProspectRow,
  contact: DialableContact | undefined,
  now: Date,
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

/** A campaign that has dialed and has no prospect left to dial or in a call is completed. */
async function completeIfDrained(trx: Trx, campaign: CampaignRow, scope: TenantScope, now: Date) {
  if (!campaign.started_at || campaign.status !== 'active') return;
  if (await hasOpenProspects(trx, campaign.id)) return;
  if ((await campaignCallsInFlight(trx, scope, campaign.id)) > 0) return;
  const completed = await updateCampaign(trx, campaign.id, { status: 'completed', completed_at: now });
  await emit(trx, scope, 'sdr.campaign.completed', await campaignEvent(trx, completed), completed.metadata);
}

async function campaignEvent(trx: Trx, campaign: CampaignRow) {
  const total = (await countProspects(trx, [campaign.id])).get(campaign.id) ?? 0;
  const settings = await findSettings(trx, campaign.org_id);
  return { campaign_id: campaign.id, ...toCampaign(campaign, total, settings?.from_number ?? null) };
}
