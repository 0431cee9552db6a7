import type { Logger } from 'pino';
import type { TenantScope } from '../../platform/auth/tenant.ts';
import { isUuid } from '../../platform/db/ids.ts';
import type { Db, Trx } from '../../platform/db/pool.ts';
import { emit } from '../../platform/events/emit.ts';
import { enqueueJob } from '../../platform/jobs/queue.ts';
import { type EmailProvider, EmailRejectedError } from '../../providers/email/index.ts';
import { type CallProgress, type CallProgressHandler, getCall } from '../calls/service.ts';
import {
  findCampaignById,
  lockProspectById,
  type ProspectChanges,
  type ProspectRow,
  type SkipReason,
  updateProspect,
} from './store.ts';

/**
 * What the calls of a campaign did to its prospects, applied in the transaction of each call step (the
 * calls module's `callProgress` hook, registered in `src/wiring.ts`), so a prospect's status and the `sdr.*` events commit with the
 * call's own. Each event is raised by a change of the call (picked up, voicemail dropped, ended), which
 * the calls module applies once, so each arrives once.
 */

export const POST_CALL_EMAIL_TASK = 'sdr_post_call_email';

/**
 * The handler of the calls' progress hook; `hourMs` is the length of one `retry_interval_hours` hour
 * (`SDR_HOUR_MS`).
 */
export function sdrCallOutcomes(hourMs: number): CallProgressHandler {
  return (trx, progress) => applyCallStep(trx, progress, hourMs);
}

async function applyCallStep(trx: Trx, { before, after }: CallProgress, hourMs: number): Promise<void> {
  if (!after.sdr_campaign_id || !after.prospect_id) return;
  const prospect = await lockProspectById(trx, after.prospect_id);
  // A prospect removed, or a step of an earlier attempt's call arriving late: nothing to record.
  if (!prospect || prospect.current_call_id !== after.id) return;
  const campaign = await findCampaignById(trx, after.sdr_campaign_id);
  if (!campaign) return;
  const scope: TenantScope = after.tenant;
  // Each event echoes the call's metadata: the campaign's merged with the prospect's when it was placed.
  const emitSdr = (type: string, eventData: Record<string, unknown>) =>
    emit(trx, scope, type, eventData, after.metadata);
  const data = {
    campaign_id: campaign.id,
    prospect_id: prospect.id,
    call_id: after.id,
    contact_id: prospect.contact_id,
  };
  const changes: ProspectChanges = {};

  if (prospect.status === 'queued' && after.status !== 'queued' && !after.ended_at)
    changes.status = 'dialing';
  if (!before?.answered_at && after.answered_at) {
    changes.status = 'connected';
    changes.last_outcome = 'connected';
    await emitSdr('sdr.call.connected', { ...data, answered_at: after.answered_at });
  }
  if (!before?.voicemail_left && after.voicemail_left) {
    await emitSdr('sdr.call.voicemail', { ...data, voicemail_message: campaign.voicemail_message });
  }
  if (!before?.ended_at && after.ended_at) {
    Object.assign(changes, { current_call_id: null }, ended(prospect, after, campaign, hourMs));
    if (after.status === 'completed' || after.status === 'voicemail') {
      if (after.outcome === 'booked') {
        await emitSdr('sdr.call.booked', { ...data, booking_url: campaign.cal_com_booking_url });
      }
      const call = await getCall(trx, scope, after.id);
      // The data of `call.completed` (SPEC.md section 6), and the campaign's.
      await emitSdr('sdr.outbound.completed', {
        ...data,
        direction: call.direction,
        duration_seconds: call.duration_seconds,
        recording_url: call.recording_url,
        transcript: call.transcript,
        summary: call.summary,
        outcome: call.outcome,
        cost_cents: call.cost_cents,
      });
      if (after.answered_at && campaign.post_call_email) {
        await enqueueJob(
          trx,
          POST_CALL_EMAIL_TASK,
          { callId: after.id, campaignId: campaign.id },
          { jobKey: `${POST_CALL_EMAIL_TASK}:${after.id}`, jobKeyMode: 'unsafe_dedupe' },
        );
      }
    }
  }
  if (Object.keys(changes).length > 0) await updateProspect(trx, prospect.id, changes);
}

/** Where an ended call leaves its prospect: a final status, or pending for the next attempt. */
function ended(
  prospect: ProspectRow,
  call: CallProgress['after'],
  campaign: { max_attempts: number; retry_interval_hours: number },
  hourMs: number,
): ProspectChanges {
  if (call.status === 'completed' || call.status === 'voicemail') {
    const outcome =
      call.outcome === 'booked' ? 'booked' : call.outcome === 'voicemail' ? 'voicemail' : 'connected';
    return { status: outcome, last_outcome: outcome };
  }
  // Refused at placement by the CRM (the calls module asks again when it places the call).
  if (call.disposition === 'do_not_call' || call.disposition === 'opted_out') {
    return { status: 'skipped', skip_reason: call.disposition as SkipReason, last_outcome: call.disposition };
  }
  const outcome = call.status;
  if (prospect.attempts >= campaign.max_attempts) return { status: 'exhausted', last_outcome: outcome };
  const endedAt = call.ended_at ?? new Date();
  return {
    status: 'pending',
    last_outcome: outcome,
    next_attempt_at: new Date(endedAt.getTime() + campaign.retry_interval_hours * hourMs),
  };
}

/** `sdr_post_call_email`: the summary of a connected call to the campaign's `post_call_email`, once per call. */
export async function sendPostCallEmail(db: Db, email: EmailProvider, log: Logger, payload: unknown) {
  const { callId, campaignId } = (payload ?? {}) as { callId?: unknown; campaignId?: unknown };
  if (typeof callId !== 'string' || !isUuid(callId) || typeof campaignId !== 'string' || !isUuid(campaignId))
    return;
  const campaign = await findCampaignById(db, campaignId);
  if (!campaign?.post_call_email) return;
  const call = await getCall(db, { orgId: campaign.org_id, clientId: campaign.client_id }, callId);
  const lines = [
    `Campaign: ${campaign.name}`,
    `Called: ${call.contact_name ?? call.to} (${call.to})`,
    `Outcome: ${call.outcome ?? call.status}`,
    `Duration: ${call.duration_seconds ?? 0} s`,
    '',
    `Summary: ${call.summary ?? '(none)'}`,
    ...(campaign.cal_com_booking_url ? ['', `Booking link: ${campaign.cal_com_booking_url}`] : []),
    '',
    'Transcript:',
    ...call.transcript.map((turn) => `${turn.speaker}: ${turn.content}`),
  ];
  try {
    await email.send({
      key: `sdr_post_call:${callId}`,
      to: campaign.post_call_email,
      subject: `Call summary: ${call.contact_name ?? call.to} (${call.outcome ?? call.status})`,
      text: lines.join('\n'),
    });
  } catch (error) {
    // Refused for good: retrying would be refused again. Anything else is retried by the job queue.
    if (!(error instanceof EmailRejectedError)) throw error;
    log.warn({ err: error, callId }, 'the post-call summary email was refused');
  }
}
