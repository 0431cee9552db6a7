import { createHmac, timingSafeEqual } from 'node:crypto';
import { isUuid } from '../../platform/db/ids.ts';
import type { Trx } from '../../platform/db/pool.ts';
import { cancelContactEnrollments } from './service.ts';
import { contactOfEnrollment, findStepSend, insertUnsubscribe, lockEnrollmentRow } from './store.ts';

/**
 * One-click unsubscribe (RFC 8058) of sequence emails. Each email carries a link to
 * `/unsubscribe/<enrollment>.<step>.<signature>`; a POST there marks the address the email went to as
 * unsubscribed for its client and cancels the contact's active enrollments. The signature (HMAC under a key
 * derived from ENCRYPTION_KEY) makes the link unguessable; it names a sent step, never an address.
 */

const TOKEN = /^([0-9a-f-]{36})\.(\d{1,2})\.([\w-]{22,64})$/;

export interface UnsubscribeKeys {
  /** The first signs, every one verifies (key rotation). */
  keys: Buffer[];
}

function signature(key: Buffer, enrollmentId: string, step: number): string {
  return createHmac('sha256', key).update(`${enrollmentId}.${step}`).digest('base64url').slice(0, 32);
}

export function unsubscribeToken(signing: UnsubscribeKeys, enrollmentId: string, step: number): string {
  return `${enrollmentId}.${step}.${signature(signing.keys[0], enrollmentId, step)}`;
}

/** The enrollment and step a token names, or null when it is malformed or not ours. */
export function readUnsubscribeToken(
  signing: UnsubscribeKeys,
  token: string,
): { enrollmentId: string; step: number } | null {
  const match = TOKEN.exec(token);
  if (!match || !isUuid(match[1])) return null;
  const [, enrollmentId, stepText, given] = match;
  const step = Number(stepText);
  const givenBytes = Buffer.from(given);
  const valid = signing.keys.some((key) => {
    const expected = Buffer.from(signature(key, enrollmentId, step));
    return expected.length === givenBytes.length && timingSafeEqual(expected, givenBytes);
  });
  return valid ? { enrollmentId, step } : null;
}

/**
 * Applies a one-click unsubscribe: false when the token names no sent email. Repeating it changes nothing
 * more (the address stays unsubscribed; there is nothing left to cancel).
 */
export async function unsubscribe(trx: Trx, enrollmentId: string, step: number): Promise<boolean> {
  // The email leaves before the tick's transaction records the step: a click (or a mail client's
  // one-click POST) that quick waits for that commit instead of finding no sent step.
  await lockEnrollmentRow(trx, enrollmentId);
  const sent = await findStepSend(trx, enrollmentId, step);
  if (sent?.kind !== 'email') return false;
  const tenant = { orgId: sent.org_id, clientId: sent.client_id };
  await insertUnsubscribe(trx, {
    org_id: sent.org_id,
    client_id: sent.client_id,
    email: sent.to_address.toLowerCase(),
    enrollment_id: enrollmentId,
  });
  const contactId = await contactOfEnrollment(trx, enrollmentId);
  if (contactId) await cancelContactEnrollments(trx, tenant, contactId, 'unsubscribed');
  return true;
}
