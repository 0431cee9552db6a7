import { randomBytes } from 'node:crypto';
import { type ClaimedEnrollment, dueSteps, type EnrollmentRow } from '../../src/modules/sequences/store.ts';
import type { Db } from '../../src/platform/db/pool.ts';
import { LeasedTable } from '../../src/platform/jobs/leased.ts';
import { type Call, caller } from '../crm/crm-client.ts';
import { adminCall, eventually as eventuallyWithin, type TestApp, type TestTenant } from '../helpers.ts';

export interface StepInput {
  kind: 'sms' | 'email';
  wait_minutes: number;
  body: string;
  subject?: string;
}

/** Phones of test contacts never repeat within a test file (an upsert would merge them). */
let nextPhone = randomBytes(3).readUIntBE(0, 3) % 4_000_000;

/** A contact of the caller's client with a unique email and phone; `fields` add names, title, company. */
export async function newContact(
  call: Call,
  fields: Record<string, unknown> = {},
): Promise<{ id: string; email: string; phone: string }> {
  const n = nextPhone++;
  const email = `lead-${randomBytes(4).toString('hex')}@example.test`;
  const phone = `+1415${200 + (Math.floor(n / 10_000) % 800)}${String(n % 10_000).padStart(4, '0')}`;
  const { status, body } = await call('POST', '/crm/contacts', { email, phone, ...fields });
  if (status !== 201) throw new Error(`contact: ${status} ${JSON.stringify(body)}`);
  return { id: body.contact.id, email, phone };
}

export async function newSequence(
  call: Call,
  steps: StepInput[],
  extra: Record<string, unknown> = {},
): Promise<any> {
  const { status, body } = await call('POST', '/sequences', {
    name: `Ladder ${randomBytes(2).toString('hex')}`,
    status: 'active',
    steps,
    ...extra,
  });
  if (status !== 201) throw new Error(`sequence: ${status} ${JSON.stringify(body)}`);
  return body.sequence;
}

export async function enroll(call: Call, sequenceId: string, contactId: string, metadata?: object) {
  const { status, body } = await call('POST', `/sequences/${sequenceId}/enrollments`, {
    contact_id: contactId,
    ...(metadata ? { metadata } : {}),
  });
  if (status !== 201 && status !== 200) throw new Error(`enroll: ${status} ${JSON.stringify(body)}`);
  return body.enrollment;
}

export async function readEnrollment(call: Call, sequenceId: string, enrollmentId: string) {
  return (await call('GET', `/sequences/${sequenceId}/enrollments/${enrollmentId}`)).body.enrollment;
}

/** What the email simulator recorded for an address, oldest first. */
export async function simulatedEmails(t: TestApp, to: string): Promise<any[]> {
  const { data } = await adminCall(t.app, 'GET', `/simulator/emails?limit=500&to=${encodeURIComponent(to)}`);
  return [...data].reverse();
}

/** The rows of sends the tick recorded for an enrollment, by step. */
export function stepSends(t: TestApp, enrollmentId: string) {
  return t.platform.db
    .selectFrom('sequence_step_sends')
    .selectAll()
    .where('enrollment_id', '=', enrollmentId)
    .orderBy('step_index')
    .execute();
}

export function tenantCaller(t: TestApp, tenant: TestTenant): Call {
  return caller(t, tenant.client);
}

/** `eventually` with a default wait of 30 s: ticks, workers and webhook deliveries share a loaded machine. */
export function eventually<T>(
  check: () => Promise<T | undefined | false>,
  timeoutMs = 30_000,
  stepMs?: number,
): Promise<T> {
  return eventuallyWithin(check, timeoutMs, stepMs);
}

/**
 * What one worker's claim of the tick takes: up to `limit` due steps, leased for `leaseMs`; the claimed
 * step of each. A test plays a worker that claimed and then died, or stalled past its lease.
 */
export async function claimDueEnrollments(
  db: Db,
  leaseMs: number,
  limit: number,
): Promise<ClaimedEnrollment[]> {
  const leases = await new LeasedTable<EnrollmentRow>({ ...dueSteps, leaseMs }).claim(db, limit);
  return leases.map(({ row }) => ({ id: row.id, current_step: row.current_step }));
}
