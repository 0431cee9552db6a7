/**
 * The voice provider: places calls and reports their progress back to the calls module.
 *
 * A provider never writes a call record and never emits an event: it hands reports to the
 * `VoiceProgressSink` the calls module gives it, and the calls module turns them into call rows
 * and `call.*` events. Reports can arrive twice and out of order; see `VoiceProgress`.
 */

export type VoiceProviderName = 'simulator' | 'retell';

/** Who speaks a transcript turn: the platform's agent, the person on the line, or a transfer's far end. */
export type Speaker = 'agent' | 'contact' | 'transfer_target';

export interface TranscriptTurn {
  speaker: Speaker;
  content: string;
  start_time_seconds: number;
}

/** The agent that speaks on a placed call. */
export interface CallAgent {
  name: string;
  greeting: string;
  systemPrompt: string;
  voiceId: string | null;
  voiceName: string | null;
}

export interface PlaceCallRequest {
  /** The platform's call id (a UUID). It is also the dial's idempotency key: placing it again places nothing. */
  callId: string;
  /** E.164, one of the org's numbers. */
  from: string;
  /** E.164. */
  to: string;
  ringTimeoutSeconds: number;
  maxDurationSeconds: number;
  agent: CallAgent;
  voicemail: { enabled: boolean; message: string | null };
  /** Kept with the call at the provider (Retell `metadata`), for the operator's own look-ups. */
  metadata?: Record<string, string>;
  /** What the agent should know before it speaks (an SDR campaign's pre-call brief); null when none. */
  context?: string | null;
}

export interface PlacedCall {
  providerCallId: string;
}

/**
 * How a call that connected turned out: `booked` when the contact booked (Retell: the `booked`
 * post-call analysis field), `voicemail` when it reached a voicemail box, else `answered`.
 */
export type CallOutcome = 'answered' | 'voicemail' | 'booked';

/** Why a call never connected; each is also a call status. */
export type FailureReason = 'no_answer' | 'busy' | 'failed';

interface ReportBase {
  /**
   * `provider:providerCallId:stage`. The same fact reported twice carries the same id, whatever
   * else it carries: the calls module applies the first report of an id and ignores the rest.
   */
  id: string;
  provider: VoiceProviderName;
  providerCallId: string;
  direction: 'outbound' | 'inbound';
  /** The platform's call id for an outbound call; null for an inbound one (map it by `providerCallId`). */
  callId: string | null;
  /** ISO 8601: when it happened at the provider. */
  occurredAt: string;
}

/** An inbound call arrived (before pickup). Every report of an inbound call is preceded by this one. */
export interface InboundReport extends ReportBase {
  stage: 'inbound';
  from: string;
  to: string;
}

/** An outbound call is dialing. */
export interface RingingReport extends ReportBase {
  stage: 'ringing';
}

export interface AnsweredReport extends ReportBase {
  stage: 'answered';
  answeredAt: string;
}

/** An outbound call reached voicemail; `messageLeft` when the voicemail message was dropped. */
export interface VoicemailReport extends ReportBase {
  stage: 'voicemail';
  messageLeft: boolean;
}

/** A call that connected has ended (final). */
export interface CompletedReport extends ReportBase {
  stage: 'completed';
  endedAt: string;
  durationSeconds: number;
  transcript: TranscriptTurn[];
  summary: string | null;
  recordingUrl: string | null;
  recordingDurationSeconds: number | null;
  costCents: number | null;
  outcome: CallOutcome;
  /** How the call ended, in the provider's words (Retell's `disconnection_reason`, e.g. `user_hangup`). */
  disposition: string;
}

/** A call never connected (final). */
export interface FailedReport extends ReportBase {
  stage: 'failed';
  endedAt: string;
  reason: FailureReason;
  /** The provider's own reason, e.g. `dial_no_answer`, `invalid_destination`, `no_final_report`. */
  disposition: string;
}

/**
 * One step of a call's progress. Rules for the receiver (the calls module):
 * - dedupe by `id`;
 * - `completed` and `failed` are final: the first final report of a call wins, later ones are ignored;
 * - an earlier stage arriving after a later one only fills in what is missing (`answered_at`),
 *   it never moves the status back.
 */
export type VoiceProgress =
  | InboundReport
  | RingingReport
  | AnsweredReport
  | VoicemailReport
  | CompletedReport
  | FailedReport;

export type VoiceStage = VoiceProgress['stage'];

/**
 * Where reports go; the calls module implements it.
 * - `report` applies a report now (inside the caller's request or job); a throw from it is the
 *   caller's error (for an `inbound` report: the call is refused, e.g. 404 `number_not_found`).
 * - `reportLater` must survive the process: queue a job that applies the report after `afterMs`
 *   (graphile-worker `add_job` with `run_at` and `job_key => progress.id`).
 */
export interface VoiceProgressSink {
  report(progress: VoiceProgress): Promise<void>;
  reportLater(progress: VoiceProgress, afterMs: number): Promise<void>;
}

/** A provider webhook as received: the exact bytes of the body (signatures cover them) and the headers. */
export interface WebhookRequest {
  rawBody: string;
  headers: Record<string, string | string[] | undefined>;
}

/** Input of the simulator's inbound call (`POST /admin/v1/simulator/calls`). */
export interface SimulatedInboundCall extends NumberScript {
  from: string;
  to: string;
}

export type ScriptedOutcome = 'answered' | 'voicemail' | 'no_answer' | 'busy' | 'failed' | 'booked';

/** What the simulator plays when a number is called. */
export interface NumberScript {
  outcome: ScriptedOutcome;
  duration_seconds?: number;
  transcript?: TranscriptTurn[];
  summary?: string;
}

export interface VoiceSimulator {
  /** Plays an inbound call: reports `inbound` now (a sink error is thrown, nothing else happens), the rest later. */
  simulateInbound(call: SimulatedInboundCall): Promise<PlacedCall>;
}

export interface VoiceProvider {
  readonly name: VoiceProviderName;
  /** Dials, once per `callId`. Reports `ringing` before it returns; the rest arrives through the sink. */
  placeCall(request: PlaceCallRequest): Promise<PlacedCall>;
  /**
   * Verifies and reads a provider webhook; the reports it returns are for the route to hand to
   * `sink.report`. Throws `RejectedWebhookError` (unsigned or forged: answer 403; malformed: 400).
   * It may also queue a follow-up through `sink.reportLater` (Retell: completion without analysis).
   */
  parseWebhook(request: WebhookRequest): Promise<VoiceProgress[]>;
  /** The simulator's controls; null for a real provider. */
  readonly simulator: VoiceSimulator | null;
}

export class RejectedWebhookError extends Error {
  constructor(
    readonly kind: 'unsigned' | 'forged' | 'malformed',
    message: string,
  ) {
    super(message);
  }
}

/**
 * A placement of this call id started and never recorded the provider's answer (another worker is
 * placing it, or one died during the request). It is not dialed again: at most one real dial.
 */
export class PlacementPendingError extends Error {
  constructor(readonly callId: string) {
    super(
      `Call ${callId} is already being placed, or its placement was interrupted; it is not dialed again.`,
    );
  }
}

export function reportId(provider: VoiceProviderName, providerCallId: string, stage: VoiceStage): string {
  return `${provider}:${providerCallId}:${stage}`;
}
