import {
  type CallOutcome,
  type FailureReason,
  type NumberScript,
  reportId,
  type TranscriptTurn,
  type VoiceProgress,
  type VoiceStage,
} from '../types.ts';

/** A report and when the simulator plays it, in real milliseconds after the call started. */
export interface TimelineEntry {
  afterMs: number;
  progress: VoiceProgress;
}

/** An unscripted number is answered and lasts this long (simulated seconds). */
export const DEFAULT_DURATION_SECONDS = 30;
const VOICEMAIL_DURATION_SECONDS = 20;
const INBOUND_GREETING = 'Thank you for calling. How can I help you today?';

const FAILURES: Record<FailureReason, string> = {
  no_answer: 'dial_no_answer',
  busy: 'dial_busy',
  failed: 'dial_failed',
};

export interface SimulatedCall {
  direction: 'outbound' | 'inbound';
  callId: string | null;
  providerCallId: string;
  from: string;
  to: string;
  startedAt: Date;
  /** Real time the call is held in flight, whatever its simulated duration. */
  callMs: number;
  script: NumberScript;
  /** What the agent says first; the simulator's own greeting for an inbound call. */
  greeting: string | null;
  maxDurationSeconds: number | null;
  /** The message dropped on voicemail; null when the campaign leaves none. */
  voicemailMessage: string | null;
}

/**
 * Every report a simulated call plays, in order: the first at once (`ringing`, or `inbound`),
 * `answered`/`voicemail` a third of the way, `completed`/`failed` at `callMs`. Deterministic: the
 * same call gives the same reports, so a re-placement re-queues identical ones.
 */
export function simulatedTimeline(call: SimulatedCall): TimelineEntry[] {
  const midMs = Math.round(call.callMs / 3);
  const endMs = call.callMs;
  const at = (afterMs: number) => new Date(call.startedAt.getTime() + afterMs).toISOString();
  const base = (stage: VoiceStage, afterMs: number) => ({
    id: reportId('simulator', call.providerCallId, stage),
    provider: 'simulator' as const,
    providerCallId: call.providerCallId,
    direction: call.direction,
    callId: call.callId,
    occurredAt: at(afterMs),
  });

  const entries: TimelineEntry[] = [
    call.direction === 'inbound'
      ? { afterMs: 0, progress: { ...base('inbound', 0), stage: 'inbound', from: call.from, to: call.to } }
      : { afterMs: 0, progress: { ...base('ringing', 0), stage: 'ringing' } },
  ];

  const { outcome } = call.script;
  if (outcome === 'no_answer' || outcome === 'busy' || outcome === 'failed') {
    entries.push({
      afterMs: endMs,
      progress: {
        ...base('failed', endMs),
        stage: 'failed',
        endedAt: at(endMs),
        reason: outcome,
        disposition: FAILURES[outcome],
      },
    });
    return entries;
  }

  const messageLeft =
    outcome === 'voicemail' && call.direction === 'outbound' && call.voicemailMessage !== null;
  if (outcome === 'voicemail') {
    if (call.direction === 'outbound') {
      entries.push({
        afterMs: midMs,
        progress: { ...base('voicemail', midMs), stage: 'voicemail', messageLeft },
      });
    }
  } else {
    entries.push({
      afterMs: midMs,
      progress: { ...base('answered', midMs), stage: 'answered', answeredAt: at(midMs) },
    });
  }

  const scripted =
    call.script.duration_seconds ??
    (outcome === 'voicemail' ? VOICEMAIL_DURATION_SECONDS : DEFAULT_DURATION_SECONDS);
  const cut = call.maxDurationSeconds !== null && scripted > call.maxDurationSeconds;
  const durationSeconds = cut ? call.maxDurationSeconds! : scripted;
  const transcript = (
    call.script.transcript ?? generatedTranscript(call, durationSeconds, messageLeft)
  ).filter((turn) => !cut || turn.start_time_seconds < durationSeconds);
  entries.push({
    afterMs: endMs,
    progress: {
      ...base('completed', endMs),
      stage: 'completed',
      endedAt: at(endMs),
      durationSeconds,
      transcript,
      summary: call.script.summary ?? generatedSummary(outcome, messageLeft),
      recordingUrl: null,
      recordingDurationSeconds: null,
      costCents: 0,
      outcome,
      disposition: cut
        ? 'max_duration_reached'
        : outcome === 'voicemail'
          ? 'voicemail_reached'
          : 'agent_hangup',
    },
  });
  return entries;
}

/** Agent greeting, a reply, a goodbye: spread over the call so the turns' times read naturally. */
function generatedTranscript(
  call: SimulatedCall,
  durationSeconds: number,
  messageLeft: boolean,
): TranscriptTurn[] {
  const outcome = call.script.outcome;
  if (outcome === 'voicemail') {
    return messageLeft ? [{ speaker: 'agent', content: call.voicemailMessage!, start_time_seconds: 0 }] : [];
  }
  const booked = outcome === 'booked';
  return [
    { speaker: 'agent', content: call.greeting ?? INBOUND_GREETING, start_time_seconds: 0 },
    {
      speaker: 'contact',
      content: booked ? "Sure, let's find a time to meet." : 'Hi! Yes, I have a minute.',
      start_time_seconds: Math.round(durationSeconds / 3),
    },
    {
      speaker: 'agent',
      content: booked ? "You're booked. Talk to you then, goodbye!" : 'Thanks for your time. Goodbye!',
      start_time_seconds: Math.round((durationSeconds * 2) / 3),
    },
  ];
}

function generatedSummary(outcome: CallOutcome, messageLeft: boolean): string {
  if (outcome === 'booked') return 'Simulated call: the contact booked a meeting.';
  if (outcome === 'voicemail') {
    return messageLeft
      ? 'Simulated call: reached voicemail and left the message.'
      : 'Simulated call: reached voicemail; no message was left.';
  }
  return 'Simulated call: the contact answered and the agent said goodbye.';
}
