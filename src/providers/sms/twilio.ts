import twilio from 'twilio';
import { platformErrorCode, platformStatus } from './twilio-codes.ts';
import {
  type InboundSms,
  type OutboundSms,
  type SmsProvider,
  SmsProviderUnavailableError,
  type SmsSendResult,
  SmsSignatureError,
  type SmsStatusUpdate,
  SmsWebhookError,
  type SmsWebhookRequest,
} from './types.ts';

export interface TwilioCredentials {
  accountSid: string;
  authToken: string;
  /** Sends through this Messaging Service (its compliance and sender settings), from the message's own number. */
  messagingServiceSid: string | null;
}

/** The query parameter of the status callback URL that carries the platform message id back. */
const MESSAGE_ID_PARAM = 'message_id';

/** Network failures that happen before a request leaves: the message certainly did not reach Twilio. */
const NOT_SENT_ERRORS = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ERR_INVALID_URL']);

/**
 * SMS through Twilio's Programmable Messaging, with the official SDK. Twilio's API takes no idempotency key,
 * so a send is made once per call: the caller sends each message id once, and when a send fails with
 * `mayHaveBeenSent`, the status callback (which names the message id) tells whether Twilio took it.
 */
export class TwilioSmsProvider implements SmsProvider {
  readonly name = 'twilio' as const;
  private readonly client: twilio.Twilio;

  /** `httpClient` replaces the SDK's HTTP client (tests point it at a local stand-in; a proxy could wrap it). */
  constructor(
    private readonly credentials: TwilioCredentials,
    options: { httpClient?: twilio.RequestClient } = {},
  ) {
    this.client = twilio(credentials.accountSid, credentials.authToken, {
      httpClient: options.httpClient,
      autoRetry: false,
    });
  }

  async send(message: OutboundSms): Promise<SmsSendResult> {
    let created: { sid: string; status: string; errorCode: number | null; errorMessage: string | null };
    try {
      created = await this.client.messages.create({
        to: message.to,
        from: message.from,
        ...(this.credentials.messagingServiceSid
          ? { messagingServiceSid: this.credentials.messagingServiceSid }
          : {}),
        body: message.body,
        ...(message.mediaUrls.length ? { mediaUrl: message.mediaUrls } : {}),
        ...(message.statusCallbackUrl
          ? { statusCallback: withMessageId(message.statusCallbackUrl, message.messageId) }
          : {}),
        // Send the body as written: the platform billed the segments of this exact text.
        smartEncoded: false,
      });
    } catch (error) {
      return refusal(error);
    }
    const status = platformStatus(created.status);
    if (status === 'failed' || status === 'undelivered') {
      return {
        outcome: 'failed',
        providerMessageId: created.sid,
        errorCode: platformErrorCode(created.errorCode),
        providerErrorCode: created.errorCode === null ? null : String(created.errorCode),
        errorMessage: created.errorMessage ?? `Twilio answered with status ${created.status}.`,
      };
    }
    return {
      outcome: 'accepted',
      providerMessageId: created.sid,
      status: status === 'sent' ? 'sent' : 'sending',
    };
  }

  parseInbound(request: SmsWebhookRequest): InboundSms {
    const params = this.verified(request);
    const providerMessageId = required(params, 'MessageSid');
    const mediaCount = Number(params.NumMedia ?? 0);
    const mediaUrls: string[] = [];
    for (let i = 0; i < (Number.isInteger(mediaCount) ? mediaCount : 0); i++) {
      const url = params[`MediaUrl${i}`];
      if (typeof url === 'string' && url) mediaUrls.push(url);
    }
    return {
      providerMessageId,
      from: required(params, 'From'),
      to: required(params, 'To'),
      body: typeof params.Body === 'string' ? params.Body : '',
      mediaUrls,
      receivedAt: new Date().toISOString(),
    };
  }

  parseStatus(request: SmsWebhookRequest): SmsStatusUpdate {
    const params = this.verified(request);
    const providerMessageId = required(params, 'MessageSid');
    const twilioStatus = required(params, 'MessageStatus');
    const status = platformStatus(twilioStatus);
    if (!status)
      throw new SmsWebhookError(`MessageStatus "${twilioStatus}" is not a status of a sent message.`);
    const failed = status === 'failed' || status === 'undelivered';
    const providerErrorCode =
      typeof params.ErrorCode === 'string' && params.ErrorCode ? params.ErrorCode : null;
    return {
      messageId: new URL(request.url).searchParams.get(MESSAGE_ID_PARAM),
      providerMessageId,
      status,
      errorCode: failed ? platformErrorCode(providerErrorCode) : null,
      providerErrorCode: failed ? providerErrorCode : null,
      occurredAt: new Date().toISOString(),
    };
  }

  /** The form parameters of a request whose `X-Twilio-Signature` matches its URL and parameters. */
  private verified(request: SmsWebhookRequest): Record<string, string | string[]> {
    const header = request.headers['x-twilio-signature'];
    const signature = Array.isArray(header) ? header[0] : header;
    if (!signature) throw new SmsSignatureError('missing');
    const params = formParams(request.body);
    if (!twilio.validateRequest(this.credentials.authToken, signature, request.url, params))
      throw new SmsSignatureError('invalid');
    return params;
  }
}

/** A form body as Twilio's signature sees it: each name once, with an array for a repeated name. */
function formParams(body: string): Record<string, string | string[]> {
  const form = new URLSearchParams(body);
  const params: Record<string, string | string[]> = {};
  for (const name of new Set(form.keys())) {
    const values = form.getAll(name);
    params[name] = values.length === 1 ? values[0] : values;
  }
  return params;
}

function required(params: Record<string, string | string[]>, name: string): string {
  const value = params[name];
  if (typeof value !== 'string' || !value) throw new SmsWebhookError(`The webhook has no ${name}.`);
  return value;
}

function withMessageId(callbackUrl: string, messageId: string): string {
  const url = new URL(callbackUrl);
  url.searchParams.set(MESSAGE_ID_PARAM, messageId);
  return url.href;
}

/** A failed create, either Twilio's refusal of this message or a failure to reach Twilio at all. */
function refusal(error: unknown): SmsSendResult {
  const failure = error as { status?: unknown; code?: unknown; message?: string };
  if (typeof failure.status === 'number') {
    const status = failure.status;
    if (status === 429 || status === 401 || status === 403 || status >= 500)
      throw new SmsProviderUnavailableError(
        `Twilio answered ${status}: ${failure.message ?? 'no message'}`,
        status,
        status >= 500,
      );
    return {
      outcome: 'failed',
      providerMessageId: null,
      errorCode: platformErrorCode(failure.code as number | undefined),
      providerErrorCode: failure.code === undefined || failure.code === null ? null : String(failure.code),
      errorMessage: failure.message ?? `Twilio answered ${status}.`,
    };
  }
  if (typeof failure.code === 'string') {
    throw new SmsProviderUnavailableError(
      `Twilio could not be reached: ${failure.code}`,
      null,
      !NOT_SENT_ERRORS.has(failure.code),
    );
  }
  throw error;
}
