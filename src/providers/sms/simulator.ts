import { createHash, randomBytes } from 'node:crypto';
import {
  type InboundSms,
  type OutboundSms,
  type SmsErrorCode,
  type SmsProvider,
  type SmsSendResult,
  type SmsStatusSink,
  type SmsStatusUpdate,
  SmsWebhookError,
} from './types.ts';

/**
 * Twilio's magic test numbers, kept so tests and demos can script failures. A refusal fails the send at once;
 * a carrier rejection is accepted, then reported `undelivered` after the delivery delay.
 */
export const SIMULATOR_NUMBERS: Record<string, { errorCode: SmsErrorCode; when: 'refused' | 'after_delay' }> =
  {
    '+15005550001': { errorCode: 'invalid_number', when: 'refused' },
    '+15005550002': { errorCode: 'unreachable', when: 'refused' },
    '+15005550004': { errorCode: 'opted_out', when: 'refused' },
    '+15005550009': { errorCode: 'carrier_rejected', when: 'after_delay' },
  };

/** Sends remembered per process, so a repeat in the same process does not even reach the sink. */
const REMEMBERED_SENDS = 10_000;

/**
 * The offline SMS provider (`SMS_PROVIDER=simulator`): every message to an ordinary number is accepted as
 * `sent` and reported `delivered` through the sink after `delayMs`. The provider message id is derived from
 * the platform message id, so a send repeated by another process schedules the same report, which the sink's
 * job key collapses into one.
 */
export class SimulatorSmsProvider implements SmsProvider {
  readonly name = 'simulator' as const;
  private readonly sent = new Map<string, Promise<SmsSendResult>>();

  constructor(
    private readonly sink: SmsStatusSink,
    private readonly delayMs: number,
  ) {}

  send(message: OutboundSms): Promise<SmsSendResult> {
    const previous = this.sent.get(message.messageId);
    if (previous) return previous;
    const result = this.deliver(message);
    this.remember(message.messageId, result);
    // A send whose report could not be scheduled was not made: forget it, so a retry sends again.
    result.catch(() => this.sent.delete(message.messageId));
    return result;
  }

  parseInbound(): InboundSms {
    throw new SmsWebhookError(
      'The SMS simulator receives no carrier webhooks: use the simulator inbound hook.',
    );
  }

  parseStatus(): SmsStatusUpdate {
    throw new SmsWebhookError('The SMS simulator sends no status callbacks: it reports through the sink.');
  }

  private async deliver(message: OutboundSms): Promise<SmsSendResult> {
    const providerMessageId = `SM${createHash('sha256').update(message.messageId).digest('hex').slice(0, 32)}`;
    const scripted = SIMULATOR_NUMBERS[message.to];
    if (scripted?.when === 'refused') {
      return {
        outcome: 'failed',
        providerMessageId,
        errorCode: scripted.errorCode,
        providerErrorCode: null,
        errorMessage: `The simulator refuses messages to ${message.to} (${scripted.errorCode}).`,
      };
    }
    const errorCode = scripted?.errorCode ?? null;
    await this.sink.reportLater(
      {
        messageId: message.messageId,
        providerMessageId,
        status: errorCode ? 'undelivered' : 'delivered',
        errorCode,
        providerErrorCode: null,
        occurredAt: new Date(Date.now() + this.delayMs).toISOString(),
      },
      this.delayMs,
    );
    return { outcome: 'accepted', providerMessageId, status: 'sent' };
  }

  private remember(messageId: string, result: Promise<SmsSendResult>): void {
    if (this.sent.size >= REMEMBERED_SENDS) this.sent.delete(this.sent.keys().next().value as string);
    this.sent.set(messageId, result);
  }
}

export interface SimulatedInboundInput {
  from: string;
  to: string;
  body: string;
  media_urls?: string[];
}

/**
 * An inbound message as the simulator hook (`POST /admin/v1/simulator/sms/inbound`) receives it, in the shape
 * `parseInbound` gives for a carrier webhook, so both continue on one code path.
 */
export function simulatedInbound(input: SimulatedInboundInput, now = new Date()): InboundSms {
  return {
    providerMessageId: `SM${randomBytes(16).toString('hex')}`,
    from: input.from,
    to: input.to,
    body: input.body,
    mediaUrls: input.media_urls ?? [],
    receivedAt: now.toISOString(),
  };
}
