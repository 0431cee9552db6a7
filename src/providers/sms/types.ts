/**
 * The SMS provider interface: what the messaging module calls to send a message and to read a carrier's
 * webhooks, whichever carrier is behind it (`SMS_PROVIDER`). Every value here is plain JSON, so a status
 * update can be stored in a job payload and applied later by another process.
 */

export type SmsProviderName = 'simulator' | 'twilio';

/**
 * Why a message did not reach its recipient, in the platform's words (the message's `error_code`).
 * The Twilio adapter maps Twilio's error codes onto these (see twilio-errors.ts and docs/pages/platform/providers.md).
 */
export type SmsErrorCode =
  /** The recipient's number does not exist or cannot receive SMS. */
  | 'invalid_number'
  /** The recipient replied STOP to this sender at the carrier: the carrier refuses to deliver. */
  | 'opted_out'
  /** The handset is off, out of coverage, a landline, or its carrier is unknown. */
  | 'unreachable'
  /** The carrier filtered or refused the message (spam filter, content, blocked sender). */
  | 'carrier_rejected'
  /** The sender may not send to this destination (unregistered 10DLC, unverified toll-free, region not enabled). */
  | 'sender_not_allowed'
  /** Anything else the provider reported as a failure. */
  | 'provider_error';

/**
 * Where a message is, as the provider sees it. Forward order: sending → sent → (delivered | undelivered |
 * failed); the last three are final. A callback can arrive late or twice: never move a message backwards.
 */
export type SmsDeliveryStatus = 'sending' | 'sent' | 'delivered' | 'undelivered' | 'failed';

export interface OutboundSms {
  /** The platform's message id: the idempotency key of the send (one message, one id, whatever retries). */
  messageId: string;
  /** E.164 sender: one of the platform's numbers. */
  from: string;
  /** E.164 recipient. */
  to: string;
  body: string;
  /** Absolute https URLs of media to attach (MMS); empty for a plain SMS. */
  mediaUrls: string[];
  /**
   * Where the carrier posts status changes: `PUBLIC_BASE_URL` + `/hooks/twilio/status`. The adapter adds
   * `message_id=<messageId>` to its query, so every status callback names the platform message even when the
   * answer to the send itself was lost. Null: no status callbacks (the simulator reports through the sink).
   */
  statusCallbackUrl: string | null;
}

export type SmsSendResult =
  /** The provider took the message; later changes arrive as status updates (sink or status webhook). */
  | { outcome: 'accepted'; providerMessageId: string; status: 'sending' | 'sent' }
  /** The provider refused the message outright: it is `failed` now and will not be sent. */
  | {
      outcome: 'failed';
      providerMessageId: string | null;
      errorCode: SmsErrorCode;
      /** The provider's own code (Twilio's `21211`), kept for support; null when it gave none. */
      providerErrorCode: string | null;
      errorMessage: string;
    };

/** A change of a sent message's status, from a status webhook or from the simulator through the sink. */
export interface SmsStatusUpdate {
  /** The platform message id, when the provider carried it back (always, for messages this platform sent). */
  messageId: string | null;
  providerMessageId: string;
  status: SmsDeliveryStatus;
  /** Set for `undelivered` and `failed`. */
  errorCode: SmsErrorCode | null;
  providerErrorCode: string | null;
  /** ISO 8601: when the provider reported the change. */
  occurredAt: string;
}

/** An inbound message, parsed and verified: the same shape from a carrier webhook and from the simulator hook. */
export interface InboundSms {
  /** The carrier's id of the message (Twilio `MessageSid`); a repeated webhook carries the same one. */
  providerMessageId: string;
  /** The sender: E.164, or a short code / alphanumeric sender id as the carrier gives it. */
  from: string;
  /** The platform number it was sent to (E.164). */
  to: string;
  body: string;
  mediaUrls: string[];
  /** ISO 8601. */
  receivedAt: string;
}

/** A provider webhook as it reached the API: what signature checks need, untouched. */
export interface SmsWebhookRequest {
  /**
   * The full public URL the provider addressed, with its query string exactly as received:
   * `PUBLIC_BASE_URL` + the request's path and query (`request.url` in Fastify). The signature covers it.
   */
  url: string;
  headers: Record<string, string | string[] | undefined>;
  /** The raw `application/x-www-form-urlencoded` body. */
  body: string;
}

/**
 * Where a provider reports status changes it makes itself, later (the simulator's delivery reports; Twilio's
 * come as status webhooks instead). The messaging module implements it durably: the report is held on its
 * message row with the time it is due and a worker loop applies it then (`src/modules/messaging/provider.ts`),
 * so a report scheduled by one process survives its restart and a repeated send holds it once.
 */
export interface SmsStatusSink {
  reportLater(update: SmsStatusUpdate, afterMs: number): Promise<void>;
}

export interface SmsProvider {
  readonly name: SmsProviderName;
  /**
   * Sends one message. Idempotent by `messageId` as far as the provider allows: the simulator fully; Twilio
   * takes no idempotency key, so call it once per message id. A refusal is a `failed` result. When the
   * provider cannot take the message now it throws `SmsProviderUnavailableError`: retry later when its
   * `mayHaveBeenSent` is false; when true, do not resend, the status callback will say what became of it.
   */
  send(message: OutboundSms): Promise<SmsSendResult>;
  /** Verifies and reads an inbound-message webhook. Throws `SmsSignatureError` (→ 403) or `SmsWebhookError` (→ 400). */
  parseInbound(request: SmsWebhookRequest): InboundSms;
  /** Verifies and reads a status-callback webhook. Throws `SmsSignatureError` (→ 403) or `SmsWebhookError` (→ 400). */
  parseStatus(request: SmsWebhookRequest): SmsStatusUpdate;
}

/** A webhook without a valid signature: answer 403 and change nothing. */
export class SmsSignatureError extends Error {
  constructor(readonly reason: 'missing' | 'invalid') {
    super(
      reason === 'missing'
        ? 'The webhook carries no X-Twilio-Signature header.'
        : 'The webhook signature does not match: check TWILIO_AUTH_TOKEN and PUBLIC_BASE_URL.',
    );
  }
}

/** A webhook this provider cannot read (a signed request without the fields it must have, or no webhooks at all). */
export class SmsWebhookError extends Error {}

/** The provider could not take the message now (unreachable, rate-limited, failing, or refusing our credentials). */
export class SmsProviderUnavailableError extends Error {
  constructor(
    message: string,
    /** The provider's HTTP status, when it answered (401, 429, 5xx); null for a network failure. */
    readonly httpStatus: number | null,
    /**
     * True when the request may have reached the provider before failing (a 5xx, a time-out, a dropped
     * connection): sending again could send twice. The status callback, which names the message id, settles it.
     * False when the provider certainly did not take it (connection refused, 429, 401): sending again is safe.
     */
    readonly mayHaveBeenSent: boolean,
  ) {
    super(message);
  }
}
