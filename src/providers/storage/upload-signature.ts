import { createHmac, timingSafeEqual } from 'node:crypto';
import { keyProblem, type StorageKey } from './storage-path.ts';

/**
 * The signature of a local upload URL, `/uploads/{key}?expires=…&size=…&type=…&signature=…`, in the
 * manner of a presigned S3 URL: HMAC-SHA256, under a key derived from the service's encryption key, of
 * the object key, its exact size, its content type and the expiry. Changing any of them, or moving the
 * query to another key, breaks the signature.
 */

export interface UploadGrant {
  key: StorageKey;
  byteSize: number;
  mimeType: string;
  /** Epoch seconds. */
  expires: number;
}

export class UploadSignatureError extends Error {
  constructor(readonly reason: 'invalid' | 'expired') {
    super(
      reason === 'expired'
        ? 'This upload URL has expired; ask for a new one.'
        : 'This upload URL is not one the service issued.',
    );
    this.name = 'UploadSignatureError';
  }
}

/** The query string of an upload URL for `grant`. */
export function signUpload(secret: Buffer, grant: UploadGrant): string {
  return new URLSearchParams({
    expires: String(grant.expires),
    size: String(grant.byteSize),
    type: grant.mimeType,
    signature: signature(secret, grant),
  }).toString();
}

/** The grant an upload URL's path and query carry, when they are one the service signed and still valid. */
export function verifyUpload(
  secrets: readonly Buffer[],
  key: string,
  query: Record<string, unknown>,
  nowSeconds = Date.now() / 1000,
): UploadGrant {
  const { expires, size, type, signature: given } = query;
  if (keyProblem(key) || typeof given !== 'string' || typeof type !== 'string')
    throw new UploadSignatureError('invalid');
  const grant = { key: key as StorageKey, byteSize: Number(size), mimeType: type, expires: Number(expires) };
  if (!Number.isSafeInteger(grant.byteSize) || !Number.isSafeInteger(grant.expires))
    throw new UploadSignatureError('invalid');
  const actual = Buffer.from(given, 'base64url');
  const signedHere = secrets.some((secret) => {
    const expected = Buffer.from(signature(secret, grant), 'base64url');
    return actual.length === expected.length && timingSafeEqual(actual, expected);
  });
  if (!signedHere) throw new UploadSignatureError('invalid');
  if (nowSeconds > grant.expires) throw new UploadSignatureError('expired');
  return grant;
}

function signature(secret: Buffer, grant: UploadGrant): string {
  return createHmac('sha256', secret)
    .update(['PUT', grant.key, grant.byteSize, grant.mimeType, grant.expires].join('\n'))
    .digest('base64url');
}
