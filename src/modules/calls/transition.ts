import type { VoiceProgress } from '../../providers/voice/index.ts';
import type { CallChanges, CallRow, CallStatus } from './store.ts';

/** A step of a call's progress: a provider's report, or one the platform makes (a placement that failed). */
export type CallStep = VoiceProgress extends infer R
  ? R extends VoiceProgress
    ? Omit<R, 'provider' | 'providerCallId' | 'direction' | 'callId'>
    : never
  : never;

export type CallEventType = 'call.answered' | 'call.voicemail_left' | 'call.completed' | 'call.failed';

export interface Transition {
  changes: CallChanges;
  /** In lifecycle order, each at most once per call. */
  events: CallEventType[];
}

/** How far along a call is; a report never moves it back. Statuses of ended calls are final. */
const PROGRESS: Partial<Record<CallStatus, number>> = { queued: 0, ringing: 1, in_progress: 2, voicemail: 3 };

const advanced = (status: CallStatus, to: CallStatus) =>
  (PROGRESS[status] ?? Number.POSITIVE_INFINITY) < (PROGRESS[to] ?? Number.POSITIVE_INFINITY);

/**
 * What a step does to a call. The first final step (completed or failed) wins and raises the call's
 * last event; an earlier step arriving late only fills in what is missing and raises nothing, so the
 * events of a call stay in lifecycle order. A completion of a call whose pickup was never reported
 * implies it: `answered_at` is worked out from the end and the duration, and `call.answered` comes first.
 */
export function transition(call: CallRow, step: CallStep): Transition {
  const ended = call.ended_at !== null;
  const changes: CallChanges = {};
  const events: CallEventType[] = [];
  const at = (iso: string) => new Date(iso);

  switch (step.stage) {
    case 'inbound':
      break;
    case 'ringing':
      if (!ended && advanced(call.status, 'ringing')) changes.status = 'ringing';
      if (!call.started_at) changes.started_at = at(step.occurredAt);
      break;
    case 'answered': {
      const neverConnected = call.status === 'no_answer' || call.status === 'busy';
      if (!call.answered_at && !neverConnected) {
        changes.answered_at = at(step.answeredAt);
        if (!ended) events.push('call.answered');
      }
      if (!call.started_at) changes.started_at = at(step.answeredAt);
      if (!ended && advanced(call.status, 'in_progress')) changes.status = 'in_progress';
      break;
    }
    case 'voicemail':
      if (step.messageLeft && !call.voicemail_left) {
        changes.voicemail_left = true;
        if (!ended && call.direction === 'outbound') events.push('call.voicemail_left');
      }
      if (!ended && advanced(call.status, 'voicemail')) changes.status = 'voicemail';
      break;
    case 'completed': {
      if (ended) break;
      const endedAt = at(step.endedAt);
      const pickedUp = new Date(endedAt.getTime() - step.durationSeconds * 1000);
      if (!call.answered_at && step.outcome !== 'voicemail') {
        changes.answered_at = pickedUp;
        events.push('call.answered');
      }
      if (!call.started_at) changes.started_at = call.answered_at ?? pickedUp;
      Object.assign(changes, {
        status: step.outcome === 'voicemail' ? 'voicemail' : 'completed',
        ended_at: endedAt,
        duration_seconds: step.durationSeconds,
        summary: step.summary,
        recording_url: step.recordingUrl,
        recording_duration_seconds: step.recordingDurationSeconds,
        cost_cents: step.costCents,
        outcome: step.outcome,
        disposition: step.disposition,
      } satisfies CallChanges);
      events.push('call.completed');
      break;
    }
    case 'failed':
      if (ended) break;
      Object.assign(changes, {
        status: step.reason,
        ended_at: at(step.endedAt),
        disposition: step.disposition,
      } satisfies CallChanges);
      events.push('call.failed');
      break;
  }
  return { changes, events };
}
