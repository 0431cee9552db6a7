import {
  type Generated,
  type Insertable,
  type Selectable,
  sql,
  type Updateable,
  type UpdateObject,
} from 'kysely';
import type { TenantScope } from '../../platform/auth/tenant.ts';
import type { Executor, Trx } from '../../platform/db/pool.ts';
import type { Database, Json, NullableTimestamp } from '../../platform/db/schema.ts';
import { whereOwned, whereTenant } from '../../platform/db/tenant-rows.ts';
import type { PageRequest } from '../../platform/http/pagination.ts';

declare module '../../platform/db/schema.ts' {
  interface Database {
    sequences: SequencesTable;
    sequence_enrollments: EnrollmentsTable;
    sequence_step_sends: StepSendsTable;
    sequence_email_unsubscribes: EmailUnsubscribesTable;
    sequence_list_members: ListMembersTable;
    sequence_list_marks: ListMarksTable;
  }
}

export type SequenceStatus = 'draft' | 'active' | 'paused' | 'archived';
export type EnrollmentStatus = 'active' | 'paused' | 'completed' | 'cancelled';
export type StepKind = 'sms' | 'email';

export interface Step {
  kind: StepKind;
  wait_minutes: number;
  body: string;
  subject?: string;
}

export interface SequencesTable {
  id: string;
  org_id: string;
  client_id: string;
  name: string;
  description: string | null;
  status: SequenceStatus;
  steps: Json<Step[]>;
  sender_user_id: string | null;
  /** The CRM list it follows: its members are enrolled while it is active (`list-follow.ts`). */
  list_id: string | null;
  /** The list's version its membership reflects; null: the whole list is to be synced. */
  list_synced_version: NullableTimestamp;
  /** When the whole list was last synced (a time-relative list is synced again after `SEQUENCE_LIST_RESYNC`). */
  list_synced_at: NullableTimestamp;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

export interface ListMembersTable {
  org_id: string;
  client_id: string;
  sequence_id: string;
  contact_id: string;
  enrollment_id: string | null;
  list_id: string;
  joined_at: Generated<Date>;
}

export interface ListMarksTable {
  org_id: string;
  id: Generated<string>;
  client_id: string;
  contact_id: string;
  marked_at: Generated<Date>;
}

export interface EnrollmentsTable {
  id: string;
  org_id: string;
  client_id: string;
  sequence_id: string;
  contact_id: string;
  current_step: Generated<number>;
  status: Generated<EnrollmentStatus>;
  paused_reason: string | null;
  next_run_at: Date;
  enrolled_at: Generated<Date>;
  completed_at: NullableTimestamp;
  last_step_at: NullableTimestamp;
  metadata: Json<Record<string, unknown>>;
  /** The tick's lease (platform/jobs/leased.ts): set for every active enrollment, NULL once stopped or done. */
  lease_id: string | null;
  lease_until: NullableTimestamp;
  attempts: Generated<number>;
  updated_at: Generated<Date>;
}

export interface StepSendsTable {
  enrollment_id: string;
  step_index: number;
  org_id: string;
  client_id: string;
  kind: StepKind;
  cause_key: string;
  message_ref: string;
  to_address: string;
  /** The number an SMS step was sent from; null for email. */
  from_address: string | null;
  sent_at: Generated<Date>;
}

export interface EmailUnsubscribesTable {
  org_id: string;
  client_id: string;
  email: string;
  enrollment_id: string | null;
  created_at: Generated<Date>;
}

export type SequenceRow = Selectable<SequencesTable>;
export type EnrollmentRow = Selectable<EnrollmentsTable>;
export type StepSendRow = Selectable<StepSendsTable>;

function sequencesOf(db: Executor, tenant: TenantScope) {
  return db.selectFrom('sequences').selectAll().$call(whereTenant(tenant));
}

function enrollmentsOf(db: Executor, tenant: TenantScope) {
  return db.selectFrom('sequence_enrollments').selectAll().$call(whereTenant(tenant));
}

export async function insertSequence(trx: Trx, row: Insertable<SequencesTable>): Promise<SequenceRow> {
  return trx.insertInto('sequences').values(row).returningAll().executeTakeFirstOrThrow();
}

export function findSequence(db: Executor, tenant: TenantScope, id: string) {
  return sequencesOf(db, tenant).where('id', '=', id).executeTakeFirst();
}

export function lockSequence(trx: Trx, tenant: TenantScope, id: string) {
  return sequencesOf(trx, tenant).where('id', '=', id).forUpdate().executeTakeFirst();
}

/** Takes a share lock: an enrollment waits for a concurrent archive of its sequence, and sees it. */
export function shareLockSequence(trx: Trx, tenant: TenantScope, id: string) {
  return sequencesOf(trx, tenant).where('id', '=', id).forShare().executeTakeFirst();
}

export function updateSequenceRow(
  trx: Trx,
  tenant: TenantScope,
  id: string,
  changes: Updateable<SequencesTable>,
): Promise<SequenceRow> {
  return trx
    .updateTable('sequences')
    .set({ ...changes, updated_at: sql<Date>`now()` })
    .$call(whereOwned(tenant, id))
    .returningAll()
    .executeTakeFirstOrThrow();
}

export function listSequences(
  db: Executor,
  tenant: TenantScope,
  filter: { status?: SequenceStatus },
  page: PageRequest<string>,
): Promise<SequenceRow[]> {
  let query = sequencesOf(db, tenant);
  if (filter.status) query = query.where('status', '=', filter.status);
  if (page.after !== undefined) query = query.where('id', '<', page.after);
  return query.orderBy('id', 'desc').limit(page.limit).execute();
}

export async function countSequences(
  db: Executor,
  tenant: TenantScope,
  filter: { status?: SequenceStatus },
): Promise<number> {
  let query = db
    .selectFrom('sequences')
    .select((eb) => eb.fn.countAll<number>().as('total'))
    .$call(whereTenant(tenant));
  if (filter.status) query = query.where('status', '=', filter.status);
  const { total } = await query.executeTakeFirstOrThrow();
  return Number(total);
}

/** Inserts the enrollment unless the contact is actively enrolled already (then undefined). */
export function insertEnrollmentUnlessActive(trx: Trx, row: Insertable<EnrollmentsTable>) {
  return trx
    .insertInto('sequence_enrollments')
    .values(row)
    .onConflict((conflict) =>
      conflict.columns(['org_id', 'sequence_id', 'contact_id']).where('status', '=', 'active').doNothing(),
    )
    .returningAll()
    .executeTakeFirst();
}

export function findActiveEnrollment(db: Executor, sequenceId: string, contactId: string) {
  return db
    .selectFrom('sequence_enrollments')
    .selectAll()
    .where('sequence_id', '=', sequenceId)
    .where('contact_id', '=', contactId)
    .where('status', '=', 'active')
    .executeTakeFirst();
}

export function findEnrollment(db: Executor, tenant: TenantScope, sequenceId: string, id: string) {
  return enrollmentsOf(db, tenant)
    .where('sequence_id', '=', sequenceId)
    .where('id', '=', id)
    .executeTakeFirst();
}

export function lockEnrollment(trx: Trx, tenant: TenantScope, sequenceId: string, id: string) {
  return enrollmentsOf(trx, tenant)
    .where('sequence_id', '=', sequenceId)
    .where('id', '=', id)
    .forUpdate()
    .executeTakeFirst();
}

export function listEnrollments(
  db: Executor,
  tenant: TenantScope,
  sequenceId: string,
  filter: { status?: EnrollmentStatus },
  page: PageRequest<string>,
): Promise<EnrollmentRow[]> {
  let query = enrollmentsOf(db, tenant).where('sequence_id', '=', sequenceId);
  if (filter.status) query = query.where('status', '=', filter.status);
  if (page.after !== undefined) query = query.where('id', '<', page.after);
  return query.orderBy('id', 'desc').limit(page.limit).execute();
}

/** Locks the active enrollments of a sequence (an archive pauses them all). */
export function lockActiveEnrollmentsOfSequence(trx: Trx, tenant: TenantScope, sequenceId: string) {
  return enrollmentsOf(trx, tenant)
    .where('sequence_id', '=', sequenceId)
    .where('status', '=', 'active')
    .orderBy('id')
    .forUpdate()
    .execute();
}

/** Locks a contact's active enrollments in one client, in every sequence (a reply or an unsubscribe). */
export function lockActiveEnrollmentsOfContact(trx: Trx, tenant: TenantScope, contactId: string) {
  return enrollmentsOf(trx, tenant)
    .where('contact_id', '=', contactId)
    .where('status', '=', 'active')
    .orderBy('id')
    .forUpdate()
    .execute();
}

/**
 * Locks the org's active enrollments that have sent an SMS step to `phone` from `ourNumber` (a reply to
 * them), in whichever of the org's clients sent it.
 */
export function lockEnrollmentsTexted(
  trx: Trx,
  org: { orgId: string },
  pair: { phone: string; ourNumber: string },
) {
  return trx
    .selectFrom('sequence_enrollments as e')
    .selectAll('e')
    .where('e.org_id', '=', org.orgId)
    .where('e.status', '=', 'active')
    .where(({ exists, selectFrom }) =>
      exists(
        selectFrom('sequence_step_sends as s')
          .select('s.step_index')
          .whereRef('s.enrollment_id', '=', 'e.id')
          .where('s.org_id', '=', org.orgId)
          .where('s.kind', '=', 'sms')
          .where('s.to_address', '=', pair.phone)
          .where('s.from_address', '=', pair.ourNumber),
      ),
    )
    .orderBy('e.id')
    .forUpdate('e')
    .execute();
}

export function updateEnrollmentRow(
  trx: Trx,
  id: string,
  changes: UpdateObject<Database, 'sequence_enrollments'>,
): Promise<EnrollmentRow> {
  return trx
    .updateTable('sequence_enrollments')
    .set({ ...changes, updated_at: sql<Date>`now()` })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Stops many enrollments the same way in one statement; returns them as they are now. */
export function stopEnrollments(
  trx: Trx,
  ids: string[],
  status: 'paused' | 'cancelled',
  reason: string,
): Promise<EnrollmentRow[]> {
  if (ids.length === 0) return Promise.resolve([]);
  return trx
    .updateTable('sequence_enrollments')
    .set({ status, paused_reason: reason, ...NOTHING_LEFT, updated_at: sql<Date>`now()` })
    .where('id', '=', sql<string>`ANY(${ids}::uuid[])`)
    .returningAll()
    .execute();
}

// The tick.

/**
 * The tick's leased work (platform/jobs/leased.ts): the current step of an active enrollment of an active
 * sequence, once its `next_run_at` has come, soonest first.
 */
export const dueSteps = {
  table: 'sequence_enrollments',
  due: sql`t.status = 'active' AND t.next_run_at <= now() AND EXISTS (
    SELECT 1 FROM sequences s WHERE s.org_id = t.org_id AND s.id = t.sequence_id AND s.status = 'active')`,
  order: sql`t.next_run_at`,
};

/** Held by no worker, its attempts starting over: the tick claims it once its `next_run_at` comes. */
export const UNCLAIMED = { lease_id: null, lease_until: sql<Date>`now()`, attempts: 0 };
/** A stopped or completed enrollment: nothing left for the tick. */
export const NOTHING_LEFT = { lease_id: null, lease_until: null };

/** A claimed enrollment: the step it was due to run when claimed. */
export type ClaimedEnrollment = Pick<EnrollmentRow, 'id' | 'current_step'>;

/** The claimed enrollment locked for its step, with its sequence's status and steps. */
export function lockClaimedEnrollment(trx: Trx, id: string) {
  return trx
    .selectFrom('sequence_enrollments as e')
    .innerJoin('sequences as s', (join) =>
      join.onRef('s.org_id', '=', 'e.org_id').onRef('s.id', '=', 'e.sequence_id'),
    )
    .selectAll('e')
    .select(['s.status as sequence_status', 's.steps', 's.name as sequence_name'])
    .where('e.id', '=', id)
    .forUpdate('e')
    .executeTakeFirst();
}

/**
 * Records a step's send (unique per enrollment and step) and moves its enrollment on, in one statement;
 * returns the enrollment as it is now.
 */
export function recordStepSend(
  trx: Trx,
  send: Insertable<StepSendsTable>,
  changes: UpdateObject<Database, 'sequence_enrollments'>,
): Promise<EnrollmentRow> {
  return trx
    .with('sent', (db) => db.insertInto('sequence_step_sends').values(send))
    .updateTable('sequence_enrollments')
    .set({ ...changes, updated_at: sql<Date>`now()` })
    .where('id', '=', send.enrollment_id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Waits for a tick that is running this enrollment's step (it holds the row while it sends). */
export function lockEnrollmentRow(trx: Trx, id: string) {
  return trx
    .selectFrom('sequence_enrollments')
    .select('id')
    .where('id', '=', id)
    .forUpdate()
    .executeTakeFirst();
}

export function findStepSend(db: Executor, enrollmentId: string, stepIndex: number) {
  return db
    .selectFrom('sequence_step_sends')
    .selectAll()
    .where('enrollment_id', '=', enrollmentId)
    .where('step_index', '=', stepIndex)
    .executeTakeFirst();
}

// Unsubscribes.

export async function contactOfEnrollment(db: Executor, id: string): Promise<string | null> {
  const row = await db
    .selectFrom('sequence_enrollments')
    .select('contact_id')
    .where('id', '=', id)
    .executeTakeFirst();
  return row?.contact_id ?? null;
}

export async function insertUnsubscribe(trx: Trx, row: Insertable<EmailUnsubscribesTable>): Promise<void> {
  await trx
    .insertInto('sequence_email_unsubscribes')
    .values(row)
    .onConflict((conflict) => conflict.columns(['org_id', 'client_id', 'email']).doNothing())
    .execute();
}

export async function isUnsubscribed(db: Executor, tenant: TenantScope, email: string): Promise<boolean> {
  const row = await db
    .selectFrom('sequence_email_unsubscribes')
    .select('email')
    .$call(whereTenant(tenant))
    .where('email', '=', email.toLowerCase())
    .executeTakeFirst();
  return row !== undefined;
}

/** Enrollments per sequence and status, for the sequences given (one page of them). */
export function countEnrollments(db: Executor, tenant: TenantScope, sequenceIds: string[]) {
  return db
    .selectFrom('sequence_enrollments')
    .select(['sequence_id', 'status', (eb) => eb.fn.countAll<number>().as('n')])
    .$call(whereTenant(tenant))
    .where('sequence_id', 'in', sequenceIds)
    .groupBy(['sequence_id', 'status'])
    .execute();
}
