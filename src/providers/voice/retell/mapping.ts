import type Retell from 'retell-sdk';
import {
  type CallOutcome,
  type CompletedReport,
  type FailureReason,
  reportId,
  type Speaker,
  type TranscriptTurn,
  type VoiceProgress,
  type VoiceStage,
} from '../types.ts';

export type RetellCall = Retell.PhoneCallResponse;

/** A Retell call webhook body: `{event, call}` (older deliveries carry the call under `data`). */
export interface RetellWebhook {
  event: string;
  call?: RetellCall;
  data?: RetellCall;
}

/** What the platform puts in a Retell call's `metadata` when it places it, and reads back from webhooks. */
export interface PlatformMetadata {
  platform_call_id?: string;
  voicemail_drop?: boolean;
}

/**
 * Disconnection reasons of calls that never connected (Retell call status `not_connected`), with
 * the failure they are (https://docs.retellai.com/reliability/debug-call-disconnect). Any other
 * reason on a call that never started (no `start_timestamp`, e.g. `concurrency_limit_reached`,
 * `no_valid_payment`, `error_user_not_joined`) is `failed` too; on a call that did, it is how a
 * completed call ended.
 */
export const NOT_CONNECTED: Record<string, FailureReason> = {
  dial_no_answer: 'no_answer',
  dial_busy: 'busy',
  // The callee rejected the ring: carriers signal it as busy (SIP 486/603).
  user_declined: 'busy',
  dial_failed: 'failed',
  invalid_destination: 'failed',
  telephony_provider_permission_denied: 'failed',
  telephony_provider_unavailable: 'failed',
  sip_routing_error: 'failed',
  marked_as_spam: 'failed',
};

export interface RetellMapping {
  /** Reports to apply now. */
  reports: VoiceProgress[];
  /** On `call_ended` of a connected call: its completion without analysis, to apply if `call_analyzed` never comes. */
  completionFallback: CompletedReport | null;
}

/**
 * Maps a Retell call webhook (https://docs.retellai.com/features/webhook-overview) to reports:
 * `call_started` → `answered` (Retell sends it only once a call connects); `call_ended` → `failed`
 * for a call that never connected, `voicemail` for one that reached voicemail, and the fallback
 * completion; `call_analyzed` → `completed` with the summary. Every report of an inbound call is
 * preceded by its `inbound` report, so whichever webhook arrives first creates the call.
 * Other events (`transcript_updated`, `transfer_*`, the number's `call_inbound`) map to nothing.
 */
export function mapRetellWebhook(webhook: RetellWebhook): RetellMapping {
  const call = webhook.call ?? webhook.data;
  const none: RetellMapping = { reports: [], completionFallback: null };
  if (call?.call_type !== 'phone_call' || typeof call.call_id !== 'string') return none;

  const ended = webhook.event === 'call_ended' || webhook.event === 'call_analyzed';
  if (webhook.event !== 'call_started' && !ended) return none;

  const reports: VoiceProgress[] = [];
  if (call.direction === 'inbound') {
    reports.push({
      ...base(call, 'inbound', call.start_timestamp ?? call.end_timestamp),
      stage: 'inbound',
      from: call.from_number,
      to: call.to_number,
    });
  }

  const failure = failureOf(call);
  if (ended && failure) {
    reports.push({
      ...base(call, 'failed', call.end_timestamp),
      stage: 'failed',
      endedAt: iso(call.end_timestamp),
      reason: failure,
      disposition: call.disconnection_reason ?? 'unknown',
    });
    return { reports, completionFallback: null };
  }

  if (call.start_timestamp !== undefined) {
    reports.push({
      ...base(call, 'answered', call.start_timestamp),
      stage: 'answered',
      answeredAt: iso(call.start_timestamp),
    });
  }
  if (!ended) return { reports, completionFallback: null };

  if (outcomeOf(call) === 'voicemail') {
    reports.push({
      ...base(call, 'voicemail', call.end_timestamp),
      stage: 'voicemail',
      messageLeft:
        call.disconnection_reason === 'voicemail_reached' && metadataOf(call).voicemail_drop === true,
    });
  }
  const completed = completion(call);
  if (webhook.event === 'call_analyzed')
    return { reports: [...reports, completed], completionFallback: null };
  return { reports, completionFallback: completed };
}

function completion(call: RetellCall): CompletedReport {
  const durationSeconds = Math.round(
    (call.duration_ms ?? Math.max(0, (call.end_timestamp ?? 0) - (call.start_timestamp ?? 0))) / 1000,
  );
  return {
    ...base(call, 'completed', call.end_timestamp),
    stage: 'completed',
    endedAt: iso(call.end_timestamp),
    durationSeconds,
    transcript: transcriptOf(call),
    summary: call.call_analysis?.call_summary ?? null,
    recordingUrl: call.recording_url ?? null,
    recordingDurationSeconds: call.recording_url ? durationSeconds : null,
    costCents: call.call_cost ? Math.round(call.call_cost.combined_cost) : null,
    outcome: outcomeOf(call),
    disposition: call.disconnection_reason ?? 'unknown',
  };
}

function failureOf(call: RetellCall): FailureReason | null {
  const reason = call.disconnection_reason;
  if (reason && reason in NOT_CONNECTED) return NOT_CONNECTED[reason];
  if (call.call_status === 'not_connected' || call.start_timestamp === undefined) return 'failed';
  return null;
}

function outcomeOf(call: RetellCall): CallOutcome {
  const custom = call.call_analysis?.custom_analysis_data as Record<string, unknown> | undefined;
  if (custom?.booked === true || custom?.booked === 'true') return 'booked';
  if (call.disconnection_reason === 'voicemail_reached' || call.call_analysis?.in_voicemail === true) {
    return 'voicemail';
  }
  return 'answered';
}

const SPEAKERS: Record<string, Speaker> = {
  agent: 'agent',
  user: 'contact',
  transfer_target: 'transfer_target',
};

/** Retell's utterances with word timings; a turn starts at its first word. */
function transcriptOf(call: RetellCall): TranscriptTurn[] {
  let previous = 0;
  return (call.transcript_object ?? []).map((utterance) => {
    previous = utterance.words?.find((word) => typeof word.start === 'number')?.start ?? previous;
    return {
      speaker: SPEAKERS[utterance.role] ?? 'contact',
      content: utterance.content,
      start_time_seconds: Math.round(previous * 100) / 100,
    };
  });
}

function metadataOf(call: RetellCall): PlatformMetadata {
  return call.metadata && typeof call.metadata === 'object' ? (call.metadata as PlatformMetadata) : {};
}

function base(call: RetellCall, stage: VoiceStage, atMs: number | undefined) {
  const platformCallId = metadataOf(call).platform_call_id;
  return {
    id: reportId('retell', call.call_id, stage),
    provider: 'retell' as const,
    providerCallId: call.call_id,
    direction: call.direction,
    callId: call.direction === 'outbound' && typeof platformCallId === 'string' ? platformCallId : null,
    occurredAt: iso(atMs),
  };
}

function iso(epochMs: number | undefined): string {
  return new Date(epochMs ?? Date.now()).toISOString();
}
