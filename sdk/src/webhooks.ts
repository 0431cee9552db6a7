import type { EventType } from './generated/events.js';
import type { Success } from './operation-types.js';

/** An event as the API stores it (`GET /events/{id}`): `{id, type, created, data, metadata}`. */
type StoredEvent = Success<'events.get'>['event'];

/** One turn of a call's transcript. */
export interface TranscriptTurn {
  speaker: string;
  content: string;
  start_time_seconds: number;
}

/** The data SPEC.md names for some events; the others carry the affected record as the API returns it. */
export interface KnownEventData {
  'call.completed': {
    call_id: string;
    direction: string;
    duration_seconds: number;
    recording_url: string | null;
    transcript: TranscriptTurn[] | null;
    summary: string | null;
    outcome: string | null;
    cost_cents: number;
    contact_id: string | null;
    [field: string]: unknown;
  };
  'deal.stage_changed': { prior_stage_id: string | null; new_stage_id: string; [field: string]: unknown };
  'call.answered': { answered_at: string; [field: string]: unknown };
}

export type EventData<T extends EventType> = T extends keyof KnownEventData
  ? KnownEventData[T]
  : Record<string, unknown>;

/** A webhook delivery's event: a union discriminated by `type`, over the event catalog. */
export type WebhookEvent = {
  [T in EventType]: Omit<StoredEvent, 'type' | 'data'> & { type: T; data: EventData<T> };
}[EventType];

/** Why a delivery was refused: a missing header, a stale timestamp, a signature that does not match. */
export class WebhookVerificationError extends Error {
  override name = 'WebhookVerificationError';
}

/** Headers as Fetch (`Request.headers`), Node (`req.headers`) or a plain object give them. */
export type WebhookHeaders =
  | Headers
  | Record<string, string | readonly string[] | undefined>
  | Iterable<[string, string]>;

export interface VerifyWebhookOptions {
  /** The request body exactly as received: the raw bytes, or the raw text. Never re-serialised JSON. */
  payload: string | Uint8Array | ArrayBuffer;
  headers: WebhookHeaders;
  /** The subscription's signing secret (`whsec_...`), shown once when the webhook was created. */
  secret: string | undefined;
  /** How far the signed timestamp may be from now, in seconds. Default 300. */
  toleranceSeconds?: number | undefined;
  /** The current time in milliseconds, for tests. */
  now?: number | undefined;
}

const encoder = new TextEncoder();

function header(headers: WebhookHeaders, name: string): string | null {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name);
  const entries =
    Symbol.iterator in headers ? [...(headers as Iterable<[string, string]>)] : Object.entries(headers);
  for (const [key, value] of entries) {
    if (key.toLowerCase() !== name) continue;
    return typeof value === 'string' ? value : Array.isArray(value) ? (value[0] ?? null) : null;
  }
  return null;
}

function bytesOf(payload: VerifyWebhookOptions['payload']): Uint8Array {
  if (typeof payload === 'string') return encoder.encode(payload);
  return payload instanceof Uint8Array ? payload : new Uint8Array(payload);
}

function hexToBytes(hex: string): Uint8Array<ArrayBuffer> | null {
  if (!/^[0-9a-f]{64}$/i.test(hex)) return null;
  const bytes = new Uint8Array(32);
  for (let i = 0; i < 32; i++) bytes[i] = Number.parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return bytes;
}

/**
 * Verifies a webhook delivery and returns its event. The signature (`X-Service-Signature: sha256=<hex>`)
 * is an HMAC-SHA256, keyed by the secret, over `timestamp + "." + raw body`; it is checked by Web Crypto's
 * `verify` (constant-time), and a timestamp (`X-Service-Timestamp`) more than `toleranceSeconds` from now
 * is refused. Works in Node 20 and browsers. Throws `WebhookVerificationError` when the delivery is not genuine.
 */
export async function verifyWebhook(options: VerifyWebhookOptions): Promise<WebhookEvent> {
  const { secret, toleranceSeconds = 300 } = options;
  if (!secret) throw new WebhookVerificationError('No signing secret given');
  const signature = header(options.headers, 'x-service-signature');
  const timestamp = header(options.headers, 'x-service-timestamp');
  if (!signature || !timestamp)
    throw new WebhookVerificationError('Missing X-Service-Signature or X-Service-Timestamp');
  if (!/^\d{1,12}$/.test(timestamp))
    throw new WebhookVerificationError('X-Service-Timestamp is not unix seconds');
  const ageSeconds = Math.abs((options.now ?? Date.now()) / 1000 - Number(timestamp));
  if (ageSeconds > toleranceSeconds)
    throw new WebhookVerificationError(
      `Timestamp is ${Math.round(ageSeconds)} s from now (tolerance ${toleranceSeconds} s)`,
    );
  const given = signature.startsWith('sha256=') ? hexToBytes(signature.slice('sha256='.length)) : null;
  if (!given) throw new WebhookVerificationError('X-Service-Signature is not sha256=<hex>');

  const body = bytesOf(options.payload);
  const prefix = encoder.encode(`${timestamp}.`);
  const signed = new Uint8Array(prefix.length + body.length);
  signed.set(prefix);
  signed.set(body, prefix.length);
  const key = await globalThis.crypto.subtle.importKey(
    'raw',
    encoder.encode(secret),
    { name: 'HMAC', hash: 'SHA-256' },
    false,
    ['verify'],
  );
  if (!(await globalThis.crypto.subtle.verify('HMAC', key, given, signed)))
    throw new WebhookVerificationError('Signature does not match');

  const event = JSON.parse(new TextDecoder().decode(body)) as WebhookEvent;
  if (typeof event?.type !== 'string' || typeof event.id !== 'string')
    throw new WebhookVerificationError('The payload is not an event');
  return event;
}
