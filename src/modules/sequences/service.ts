import type { TenantScope } from '../../platform/auth/tenant.ts';
import { newId } from '../../platform/db/ids.ts';
import type { Executor, Trx } from '../../platform/db/pool.ts';
import { emit } from '../../platform/events/emit.ts';
import { changedFields, hasChanges } from '../../platform/fields.ts';
import { errors, type FieldError } from '../../platform/http/errors.ts';
import type { PageRequest } from '../../platform/http/pagination.ts';
import { assertReferences } from '../../platform/http/references.ts';
import { CONTACT } from '../contacts/service.ts';
import { LIST } from '../lists/service.ts';
import { unknownMergeFields } from './merge.ts';
import { SMS_BODY_MAX } from './schemas.ts';
import {
  countEnrollments,
  countSequences,
  type EnrollmentRow,
  type EnrollmentStatus,
  findActiveEnrollment,
  findEnrollment,
  findSequence,
  insertEnrollmentUnlessActive,
  insertSequence,
  listEnrollments,
  listSequences,
  lockActiveEnrollmentsOfContact,
  lockActiveEnrollmentsOfSequence,
  lockEnrollment,
  lockEnrollmentsTexted,
  lockSequence,
  type SequenceRow,
  type SequenceStatus,
  type Step,
  shareLockSequence,
  stopEnrollments,
  UNCLAIMED,
  updateEnrollmentRow,
  updateSequenceRow,
} from './store.ts';

/**
 * Sequences: ladders of SMS and email steps, and the enrollments of contacts in them. The steps run on the
 * worker's tick (`tick.ts`); this file holds the rules of the API and of the hooks (a reply, an unsubscribe).
 */

export type { Step } from './store.ts';

export type Sequence = Omit<SequenceRow, 'org_id' | 'list_synced_version' | 'list_synced_at'>;
export type Enrollment = Omit<
  EnrollmentRow,
  'org_id' | 'client_id' | 'lease_id' | 'lease_until' | 'attempts' | 'updated_at'
>;

export interface SequenceInput {
  name: string;
  description?: string | null;
  status?: 'draft' | 'active';
  steps?: Step[];
  sender_user_id?: string | null;
  list_id?: string | null;
}

export interface SequencePatch {
  name?: string;
  description?: string | null;
  status?: SequenceStatus;
  steps?: Step[];
  sender_user_id?: string | null;
  list_id?: string | null;
}

export function toSequence(row: SequenceRow): Sequence {
  const { org_id: _orgId, list_synced_version: _synced, list_synced_at: _syncedAt, ...sequence } = row;
  return sequence;
}

export function toEnrollment(row: EnrollmentRow): Enrollment {
  return {
    id: row.id,
    sequence_id: row.sequence_id,
    contact_id: row.contact_id,
    current_step: row.current_step,
    status: row.status,
    paused_reason: row.paused_reason,
    next_run_at: row.next_run_at,
    enrolled_at: row.enrolled_at,
    completed_at: row.completed_at,
    last_step_at: row.last_step_at,
    metadata: row.metadata,
  };
}

/** Steps as stored: only their own fields, a subject only on email steps. Every problem is named at once. */
export function validateSteps(steps: Step[]): Step[] {
  const problems: FieldError[] = [];
  const checked = steps.map((step, index) => {
    const at = `steps[${index}]`;
    const unknown = (field: 'body' | 'subject', text: string) => {
      for (const name of unknownMergeFields(text))
        problems.push({
          field: `${at}.${field}`,
          message: `uses the unknown merge field {{${name}}} (step ${index})`,
        });
    };
    unknown('body', step.body);
    if (step.kind === 'email') {
      if (step.subject === undefined)
        problems.push({ field: `${at}.subject`, message: `is required on an email step (step ${index})` });
      else unknown('subject', step.subject);
      return { kind: step.kind, wait_minutes: step.wait_minutes, body: step.body, subject: step.subject };
    }
    if (step.subject !== undefined)
      problems.push({ field: `${at}.subject`, message: `is only for email steps (step ${index})` });
    if (step.body.length > SMS_BODY_MAX)
      problems.push({
        field: `${at}.body`,
        message: `has more than ${SMS_BODY_MAX} characters (step ${index})`,
      });
    return { kind: step.kind, wait_minutes: step.wait_minutes, body: step.body };
  });
  if (problems.length > 0) throw errors.validation(problems);
  return checked as Step[];
}

/** `POST /sequences`. */
export async function createSequence(trx: Trx, tenant: TenantScope, input: SequenceInput): Promise<Sequence> {
  const steps = validateSteps(input.steps ?? []);
  await assertReferences(trx, tenant, [{ field: 'list_id', id: input.list_id, kind: LIST }]);
  const row = await insertSequence(trx, {
    id: newId(),
    org_id: tenant.orgId,
    client_id: tenant.clientId,
    name: input.name,
    description: input.description ?? null,
    status: input.status ?? 'draft',
    steps: JSON.stringify(steps),
    sender_user_id: input.sender_user_id ?? null,
    list_id: input.list_id?.toLowerCase() ?? null,
  });
  return toSequence(row);
}

export async function getSequence(db: Executor, tenant: TenantScope, id: string): Promise<Sequence> {
  const row = await findSequence(db, tenant, id);
  if (!row) throw errors.notFound('Sequence', id);
  return toSequence(row);
}

export async function searchSequences(
  db: Executor,
  tenant: TenantScope,
  filter: { status?: SequenceStatus },
  page: PageRequest<string>,
): Promise<Sequence[]> {
  return (await listSequences(db, tenant, filter, page)).map(toSequence);
}

export type EnrollmentCounts = Record<EnrollmentStatus, number>;

/** How many enrollments each sequence has, per status: the portal's sequences list. */
export async function enrollmentCounts(
  db: Executor,
  tenant: TenantScope,
  sequenceIds: string[],
): Promise<Map<string, EnrollmentCounts>> {
  const counts = new Map<string, EnrollmentCounts>();
  if (sequenceIds.length === 0) return counts;
  for (const row of await countEnrollments(db, tenant, sequenceIds)) {
    const entry = counts.get(row.sequence_id) ?? { active: 0, paused: 0, completed: 0, cancelled: 0 };
    entry[row.status] = Number(row.n);
    counts.set(row.sequence_id, entry);
  }
  return counts;
}

export function sequenceTotal(db: Executor, tenant: TenantScope, filter: { status?: SequenceStatus }) {
  return countSequences(db, tenant, filter);
}

/**
 * `PATCH /sequences/{id}`. New steps apply to enrollments in flight from their current step on; one whose
 * current step is past the new end completes on its next tick. Archiving pauses the active enrollments.
 * Linking a list (or re-activating a sequence that has one) has its whole list synced by the worker
 * (`list-follow.ts`); unlinking stops following it and leaves the enrollments as they are.
 */
export async function updateSequence(
  trx: Trx,
  tenant: TenantScope,
  id: string,
  patch: SequencePatch,
): Promise<Sequence> {
  const before = await lockSequence(trx, tenant, id);
  if (!before) throw errors.notFound('Sequence', id);
  const { steps, list_id: listId, ...fields } = patch;
  const changes: Record<string, unknown> = changedFields<Record<string, unknown>>(before, {
    ...fields,
    list_id: listId?.toLowerCase() ?? listId,
  });
  if (steps !== undefined) changes.steps = JSON.stringify(validateSteps(steps));
  if (!hasChanges(changes)) return toSequence(before);
  if (changes.list_id)
    await assertReferences(trx, tenant, [{ field: 'list_id', id: changes.list_id as string, kind: LIST }]);
  const next = {
    list_id: changes.list_id !== undefined ? (changes.list_id as string | null) : before.list_id,
    status: (changes.status as SequenceStatus | undefined) ?? before.status,
  };
  if (resyncOnChange(before, next)) changes.list_synced_version = null;
  const after = await updateSequenceRow(trx, tenant, id, changes);
  if (after.status === 'archived' && before.status !== 'archived') await pauseEnrollmentsOf(trx, tenant, id);
  return toSequence(after);
}

/** A sequence linked to another list, or re-activated with one: the worker syncs its whole list again. */
function resyncOnChange(
  before: Pick<SequenceRow, 'list_id' | 'status'>,
  after: Pick<SequenceRow, 'list_id' | 'status'>,
): boolean {
  if (after.list_id === null) return false;
  return before.list_id !== after.list_id || (after.status === 'active' && before.status !== 'active');
}

/** `DELETE /sequences/{id}`: archived, and every active enrollment paused (`sequence_archived`). */
export async function archiveSequence(trx: Trx, tenant: TenantScope, id: string): Promise<void> {
  await updateSequence(trx, tenant, id, { status: 'archived' });
}

async function pauseEnrollmentsOf(trx: Trx, tenant: TenantScope, sequenceId: string): Promise<void> {
  const active = await lockActiveEnrollmentsOfSequence(trx, tenant, sequenceId);
  const paused = await stopEnrollments(
    trx,
    active.map((row) => row.id),
    'paused',
    'sequence_archived',
  );
  for (const row of paused) await emitEnrollmentEvent(trx, 'sequence.enrollment.paused', row);
}

export interface EnrollResult {
  status: 200 | 201;
  body: { enrollment: Enrollment; idempotent: boolean };
}

/**
 * `POST /sequences/{id}/enrollments`: a new active enrollment at step 0, due after the first step's wait;
 * a contact actively enrolled already gets that enrollment back (also when two requests race: the unique
 * index of active enrollments lets one insert win).
 */
export async function enrollContact(
  trx: Trx,
  tenant: TenantScope,
  sequenceId: string,
  input: { contact_id: string; metadata?: Record<string, unknown> },
  minuteMs: number,
): Promise<EnrollResult> {
  // Shared: an archive of the sequence in flight finishes first, and this enrollment sees it.
  const sequence = await shareLockSequence(trx, tenant, sequenceId);
  if (!sequence) throw errors.notFound('Sequence', sequenceId);
  if (sequence.status === 'archived') throw sequenceArchived(sequenceId);
  await assertReferences(trx, tenant, [{ field: 'contact_id', id: input.contact_id, kind: CONTACT }]);
  const contactId = input.contact_id.toLowerCase();
  const steps = sequence.steps as Step[];
  const wait = (steps[0]?.wait_minutes ?? 0) * minuteMs;
  const inserted = await insertEnrollmentUnlessActive(trx, {
    id: newId(),
    org_id: tenant.orgId,
    client_id: tenant.clientId,
    sequence_id: sequence.id,
    contact_id: contactId,
    next_run_at: new Date(Date.now() + wait),
    metadata: JSON.stringify(input.metadata ?? {}),
  });
  if (inserted) {
    await emitEnrollmentEvent(trx, 'sequence.enrollment.created', inserted);
    return { status: 201, body: { enrollment: toEnrollment(inserted), idempotent: false } };
  }
  const existing = await findActiveEnrollment(trx, sequence.id, contactId);
  // Stopped between the two statements (a reply, a pause): enrolling again is a new enrollment.
  if (!existing) return enrollContact(trx, tenant, sequenceId, input, minuteMs);
  return { status: 200, body: { enrollment: toEnrollment(existing), idempotent: true } };
}

function sequenceArchived(sequenceId: string) {
  return errors.conflict(
    'sequence_archived',
    `Sequence ${sequenceId} is archived; PATCH its status to active or paused to enroll contacts again.`,
    { sequence_id: sequenceId },
  );
}

export async function searchEnrollments(
  db: Executor,
  tenant: TenantScope,
  sequenceId: string,
  filter: { status?: EnrollmentStatus },
  page: PageRequest<string>,
): Promise<Enrollment[]> {
  const rows = await listEnrollments(db, tenant, sequenceId, filter, page);
  if (rows.length === 0 && !page.after) await getSequence(db, tenant, sequenceId);
  return rows.map(toEnrollment);
}

export async function getEnrollment(
  db: Executor,
  tenant: TenantScope,
  sequenceId: string,
  id: string,
): Promise<Enrollment> {
  const row = await findEnrollment(db, tenant, sequenceId, id);
  if (!row) throw errors.notFound('Enrollment', id);
  return toEnrollment(row);
}

/**
 * `PATCH /sequences/{id}/enrollments/{enrollmentId}`: pause (`manual`), resume (the current step runs on
 * the next tick) or cancel. Asking for the status it has changes nothing; a finished enrollment is final.
 */
export async function updateEnrollment(
  trx: Trx,
  tenant: TenantScope,
  sequenceId: string,
  id: string,
  wanted: 'active' | 'paused' | 'cancelled',
): Promise<Enrollment> {
  const row = await lockEnrollment(trx, tenant, sequenceId, id);
  if (!row) throw errors.notFound('Enrollment', id);
  if (row.status === wanted) return toEnrollment(row);
  if (row.status === 'completed' || row.status === 'cancelled')
    throw errors.invalidTransition(row.status, wanted);
  if (wanted === 'paused') {
    const [paused] = await stopEnrollments(trx, [id], 'paused', 'manual');
    await emitEnrollmentEvent(trx, 'sequence.enrollment.paused', paused);
    return toEnrollment(paused);
  }
  if (wanted === 'cancelled') {
    const [cancelled] = await stopEnrollments(trx, [id], 'cancelled', 'manual');
    await emitEnrollmentEvent(trx, 'sequence.contact_unenrolled', cancelled);
    return toEnrollment(cancelled);
  }
  const sequence = await shareLockSequence(trx, tenant, sequenceId);
  if (sequence?.status === 'archived') throw sequenceArchived(sequenceId);
  const resumed = await updateEnrollmentRow(trx, id, {
    status: 'active',
    paused_reason: null,
    next_run_at: new Date(),
    ...UNCLAIMED,
  }).catch((error: { code?: string }) => {
    if (error.code !== '23505') throw error;
    throw errors.conflict(
      'conflict',
      'The contact has another active enrollment in this sequence; cancel one of them first.',
      { contact_id: row.contact_id },
    );
  });
  return toEnrollment(resumed);
}

/**
 * The SMS module's inbound hook: a reply pauses (`reply_received`) the active enrollments that have sent
 * an SMS step to the replying phone from the number that received the reply, in the transaction that
 * stores the message. The contact's other enrollments (email-only ladders, ones that have not texted it
 * yet, ones that texted from another number) keep running.
 */
export async function pauseOnReply(
  trx: Trx,
  message: { orgId: string; from: string; to: string },
): Promise<number> {
  const texted = await lockEnrollmentsTexted(trx, message, { phone: message.from, ourNumber: message.to });
  const paused = await stopEnrollments(
    trx,
    texted.map((row) => row.id),
    'paused',
    'reply_received',
  );
  for (const row of paused) {
    await emitEnrollmentEvent(trx, 'sequence.enrollment.paused', row);
    await emitEnrollmentEvent(trx, 'sequence.contact_unenrolled', row);
  }
  return paused.length;
}

/** Cancels a contact's active enrollments in a client with `reason` (an unsubscribe). */
export async function cancelContactEnrollments(
  trx: Trx,
  tenant: TenantScope,
  contactId: string,
  reason: string,
): Promise<number> {
  const active = await lockActiveEnrollmentsOfContact(trx, tenant, contactId);
  const cancelled = await stopEnrollments(
    trx,
    active.map((row) => row.id),
    'cancelled',
    reason,
  );
  for (const row of cancelled) await emitEnrollmentEvent(trx, 'sequence.contact_unenrolled', row);
  return cancelled.length;
}

export type SequenceEvent =
  | 'sequence.enrollment.created'
  | 'sequence.enrollment.paused'
  | 'sequence.enrollment.completed'
  | 'sequence.completed'
  | 'sequence.contact_unenrolled';

/**
 * Every sequence event: the enrollment as the API returns it, its metadata echoed as the event's;
 * `sequence.contact_unenrolled` also says why (`reason`: reply_received, manual, unsubscribed, list_change).
 */
export function emitEnrollmentEvent(trx: Trx, type: SequenceEvent, row: EnrollmentRow) {
  const enrollment = toEnrollment(row);
  const data =
    type === 'sequence.contact_unenrolled' ? { enrollment, reason: row.paused_reason } : { enrollment };
  return emit(trx, { orgId: row.org_id, clientId: row.client_id }, type, data, row.metadata);
}
