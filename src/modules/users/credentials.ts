import { createHash, randomBytes } from 'node:crypto';
import argon2 from 'argon2';
import { errors } from '../../platform/http/errors.ts';

export const MIN_PASSWORD_LENGTH = 12;
/** argon2 hashes whatever it is given; a megabyte "password" would be a cheap way to burn CPU. */
const MAX_PASSWORD_LENGTH = 1024;

/** OWASP's argon2id parameters (19 MiB, 2 passes, 1 lane): about 20 ms a hash on one core. */
const ARGON2 = { type: argon2.argon2id, memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;

/**
 * A password's length in characters (code points), the one measure of setting and verifying it: an
 * emoji is one character, not two UTF-16 units. Past twice the maximum in units it is too long anyway.
 */
function passwordLength(password: string): number {
  return password.length > 2 * MAX_PASSWORD_LENGTH ? password.length : [...password].length;
}

/** 400 `validation_error` naming `field` unless the password has 12 to 1024 characters. */
export function checkPassword(password: string, field = 'password'): void {
  const length = passwordLength(password);
  if (length < MIN_PASSWORD_LENGTH)
    throw errors.invalidField(field, `must have at least ${MIN_PASSWORD_LENGTH} characters`);
  if (length > MAX_PASSWORD_LENGTH)
    throw errors.invalidField(field, `must have at most ${MAX_PASSWORD_LENGTH} characters`);
}

export function hashPassword(password: string): Promise<string> {
  return argon2.hash(password, ARGON2);
}

let decoy: Promise<string> | undefined;

/**
 * Whether the password matches the hash. Without a hash (no such user, no password yet) a decoy hash is
 * checked all the same, so the answer takes as long whether the email exists or not.
 */
export async function verifyPassword(hash: string | null, password: string): Promise<boolean> {
  if (passwordLength(password) > MAX_PASSWORD_LENGTH) return false;
  if (hash === null) {
    decoy ??= hashPassword(randomBytes(16).toString('base64url'));
    await argon2.verify(await decoy, password);
    return false;
  }
  return argon2.verify(hash, password);
}

/** A fresh opaque token (256 random bits) and the SHA-256 that is all the database keeps of it. */
export function newToken(): { token: string; hash: Buffer } {
  const token = randomBytes(32).toString('base64url');
  return { token, hash: hashToken(token) };
}

export function hashToken(token: string): Buffer {
  return createHash('sha256').update(token).digest();
}

const EMAIL = /^[^\s@<>()[\],;:"]+@[^\s@<>()[\],;:"]+$/;

/** The email as stored and matched: trimmed, lower-case; 400 naming `email` when it is not an address. */
export function normalizeEmail(email: string): string {
  const normalized = email.trim().toLowerCase();
  if (normalized.length > 254 || !EMAIL.test(normalized))
    throw errors.invalidField('email', 'must be an email address');
  return normalized;
}
