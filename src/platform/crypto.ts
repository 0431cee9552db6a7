import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';

/**
 * Secrets at rest: AES-256-GCM under the service's `ENCRYPTION_KEY`, bound to the record they belong
 * to through additional authenticated data, so a ciphertext copied to another row does not decrypt.
 * Layout: version (1 byte) | IV (12) | tag (16) | ciphertext.
 */

/** The keys of `ENCRYPTION_KEYS`: the first seals (and signs page tokens), every one opens. */
export class Keyring {
  readonly current: Buffer;

  constructor(readonly keys: readonly Buffer[]) {
    if (keys.length === 0 || keys.some((key) => key.length !== 32))
      throw new Error('a keyring needs at least one 32-byte key');
    this.current = keys[0];
  }

  /** One signing key per key of the ring, for one purpose (`page-tokens`): the first signs, every one verifies. */
  derive(purpose: string): Buffer[] {
    return this.keys.map((key) => createHmac('sha256', key).update(purpose).digest());
  }
}

const VERSION = 1;
const IV_BYTES = 12;
const TAG_BYTES = 16;

export class DecryptionError extends Error {}

export function seal(keyring: Keyring, plaintext: string, aad: string): Buffer {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', keyring.current, iv);
  cipher.setAAD(Buffer.from(aad, 'utf8'));
  const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return Buffer.concat([Buffer.from([VERSION]), iv, cipher.getAuthTag(), ciphertext]);
}

/** Opens with whichever key of the ring sealed it. */
export function open(keyring: Keyring, sealed: Buffer, aad: string): string {
  if (!wellFormed(sealed)) throw new DecryptionError('not a sealed value of a known version');
  for (const key of keyring.keys) {
    const plaintext = openWith(key, sealed, aad);
    if (plaintext !== null) return plaintext;
  }
  throw new DecryptionError('the value was altered, or sealed under another key or for another record');
}

/** Whether the current key opens `sealed`: when not, re-encryption (`rotate-keys`) has work to do. */
export function sealedUnderCurrent(keyring: Keyring, sealed: Buffer, aad: string): boolean {
  return wellFormed(sealed) && openWith(keyring.current, sealed, aad) !== null;
}

function wellFormed(sealed: Buffer): boolean {
  return sealed.length >= 1 + IV_BYTES + TAG_BYTES && sealed[0] === VERSION;
}

function openWith(key: Buffer, sealed: Buffer, aad: string): string | null {
  const iv = sealed.subarray(1, 1 + IV_BYTES);
  const tag = sealed.subarray(1 + IV_BYTES, 1 + IV_BYTES + TAG_BYTES);
  const decipher = createDecipheriv('aes-256-gcm', key, iv);
  decipher.setAAD(Buffer.from(aad, 'utf8'));
  decipher.setAuthTag(tag);
  try {
    return Buffer.concat([
      decipher.update(sealed.subarray(1 + IV_BYTES + TAG_BYTES)),
      decipher.final(),
    ]).toString('utf8');
  } catch {
    return null;
  }
}
