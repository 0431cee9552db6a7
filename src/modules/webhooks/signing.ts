import { createHmac, randomBytes } from 'node:crypto';
import { type Keyring, open, seal } from '../../platform/crypto.ts';
import type { SealedColumn } from '../../platform/sealed-columns.ts';

export const SIGNING_HEADER = 'X-Service-Signature' as const;
export const SECRET_PREFIX = 'whsec_';

/** `whsec_` and 32 random bytes, base64url. */
export function newSigningSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(32).toString('base64url')}`;
}

/** `sha256=<hex>`: HMAC-SHA256 keyed by the whole secret string, over `timestamp + "." + raw body`. */
export function signPayload(secret: string, timestamp: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(`${timestamp}.`).update(body).digest('hex')}`;
}

interface SecretOwner {
  id: string;
  org_id: string;
  client_id: string;
}

/** The record a secret belongs to, as additional authenticated data: a ciphertext moved to another row fails. */
function secretAad(owner: SecretOwner): string {
  return `webhook-secret:${owner.org_id}:${owner.client_id}:${owner.id}`;
}

export function sealSecret(key: Keyring, owner: SecretOwner, secret: string): Buffer {
  return seal(key, secret, secretAad(owner));
}

export function openSecret(key: Keyring, owner: SecretOwner, ciphertext: Buffer): string {
  return open(key, ciphertext, secretAad(owner));
}

/** Where signing secrets rest, for re-encryption under a new key (`rotate-keys`). */
export const webhookSecretColumn: SealedColumn = {
  table: 'webhook_subscriptions',
  column: 'secret_ciphertext',
  aadColumns: ['org_id', 'client_id'],
  aad: (row) => secretAad(row as unknown as SecretOwner),
};
