import { createHash } from 'node:crypto';
import type { OutboundEmail } from './types.ts';

/** An email checked and completed: its sender resolved, its Message-ID derived from its key. */
export interface PreparedEmail {
  key: string;
  messageId: string;
  from: string;
  to: string;
  subject: string;
  text: string;
  html: string | null;
  headers: Record<string, string>;
}

/** Headers the provider writes itself; a caller's copy would contradict them. */
const PROVIDER_HEADERS = new Set([
  'from',
  'to',
  'cc',
  'bcc',
  'subject',
  'message-id',
  'date',
  'sender',
  'mime-version',
  'content-type',
  'content-transfer-encoding',
]);
const HEADER_NAME = /^[!-9;-~]+$/;
const ADDRESS = /^[^\s<>@]+@[^\s<>@]+$/;

/** Checks an email before anything is recorded or sent. Throws TypeError for a caller's mistake. */
export function prepareEmail(email: OutboundEmail, defaultFrom: string): PreparedEmail {
  if (!email.key || email.key.length > 500)
    throw new TypeError('An email key must have 1 to 500 characters.');
  if (!ADDRESS.test(email.to)) throw new TypeError(`"${email.to}" is not an email address.`);
  const from = email.from ?? defaultFrom;
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(email.headers ?? {})) {
    if (!HEADER_NAME.test(name) || PROVIDER_HEADERS.has(name.toLowerCase()))
      throw new TypeError(`The header "${name}" cannot be set on an email.`);
    // A line break in a value would start a header (or the body) of the caller's choosing.
    if (/[\r\n]/.test(value)) throw new TypeError(`The header "${name}" has a line break in its value.`);
    headers[name] = value;
  }
  if (/[\r\n]/.test(email.subject)) throw new TypeError('The subject has a line break.');
  return {
    key: email.key,
    messageId: messageIdFor(email.key, from),
    from,
    to: email.to,
    subject: email.subject,
    text: email.text,
    html: email.html ?? null,
    headers,
  };
}

/** `<40 hex digits of SHA-256(key)@the sender's domain>`: stable per key, unique per cause. */
export function messageIdFor(key: string, from: string): string {
  const domain = addressOf(from).split('@')[1] ?? 'localhost';
  return `<${createHash('sha256').update(key).digest('hex').slice(0, 40)}@${domain}>`;
}

/** The bare address of `Name <address>` or of an address. */
export function addressOf(mailbox: string): string {
  return /<([^<>]+)>\s*$/.exec(mailbox)?.[1] ?? mailbox.trim();
}
