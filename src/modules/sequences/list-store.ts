import { type RawBuilder, sql } from 'kysely';
import type { TenantScope } from '../../platform/auth/tenant.ts';
import type { Trx } from '../../platform/db/pool.ts';
import type { EnrollmentRow, SequenceRow } from './store.ts';

/**
 * The SQL of sequences that follow a list (`list-follow.ts`): the marks the triggers of migration 1040
 * write, the membership rows (`sequence_list_members`) and the enrollments a list makes and cancels.
 */

/** A contact whose membership of a list may have changed. */
export interface ListMark {
  org_id: string;
  client_id: string;
  contact_id: string;
}

/**
 * A following sequence, with its list's version now and the one it synced, as text (exact), and whether
 * its list's members move with time alone and were last synced whole longer ago than the resync period.
 */
export type FollowingSequence = SequenceRow & {
  list_id: string;
  version: string | null;
  synced: string | null;
  resync_due: boolean;
};

/** How the pass reads the list a sequence follows: SQL pieces of the lists module, and the resync period. */
export interface FollowedList {
  /** The list's version: what changes when its definition does. */
  version: (orgId: unknown, listId: unknown) => RawBuilder<Date | null>;
  /** True when time alone moves the list's members (a smart list with a condition relative to now). */
  timeRelative: (orgId: unknown, listId: unknown) => RawBuilder<boolean>;
  /** How often such a list is synced whole again. */
  resyncMs: number;
}

/**
 * Takes up to `limit` marks, oldest first, skipping those another pass holds; they are gone once the
 * transaction commits, and back if it rolls back.
 */
export async function takeListMarks(trx: Trx, limit: number): Promise<ListMark[]> {
  // Not leased work: a batch of marks and the joins it makes commit or roll back as one (docs/architecture.md).
  const { rows } = await sql<ListMark>`
    DELETE FROM sequence_list_marks m
    WHERE (m.org_id, m.id) IN (
      SELECT org_id, id FROM sequence_list_marks ORDER BY id LIMIT ${limit} FOR UPDATE SKIP LOCKED)
    RETURNING m.org_id, m.client_id, m.contact_id`.execute(trx);
  return rows;
}

function followingColumns(list: FollowedList) {
  return sql`s.*, ${list.version(sql.ref('s.org_id'), sql.ref('s.list_id'))}::text AS version,
    s.list_synced_version::text AS synced, ${resyncDue(list)} AS resync_due`;
}

/** A time-relative list's members last synced whole longer ago than the period: nothing marks who time moved. */
function resyncDue(list: FollowedList) {
  return sql<boolean>`(s.list_synced_at IS NULL
      OR s.list_synced_at < now() - ${list.resyncMs}::float8 * interval '1 millisecond')
    AND ${list.timeRelative(sql.ref('s.org_id'), sql.ref('s.list_id'))}`;
}

/**
 * Sequences of any tenant whose whole list is to be synced (just linked, re-activated, the list
 * changed, or its resync is due), up to `limit`, leaving out `skip`.
 */
export async function sequencesToSync(
  trx: Trx,
  list: FollowedList,
  skip: string[],
  limit: number,
): Promise<{ org_id: string; client_id: string; id: string }[]> {
  const { rows } = await sql<{ org_id: string; client_id: string; id: string }>`
    SELECT s.org_id, s.client_id, s.id FROM sequences s
    WHERE s.list_id IS NOT NULL AND s.status = 'active'
      AND (s.list_synced_version IS DISTINCT FROM ${list.version(sql.ref('s.org_id'), sql.ref('s.list_id'))}
        OR ${resyncDue(list)})
      AND s.id <> ALL(${skip}::uuid[])
    ORDER BY s.org_id, s.id
    LIMIT ${limit}`.execute(trx);
  return rows;
}

/**
 * The sequence, if it still follows a list and is active: one pass at a time per sequence (an advisory
 * lock), and a share lock that an archive waits for, as an enrollment's does.
 */
export async function lockFollowingSequence(
  trx: Trx,
  sequence: { org_id: string; id: string },
  list: FollowedList,
): Promise<FollowingSequence | undefined> {
  // Orders the passes of one sequence, as no lease can: a lease holds rows, not a sequence's joins and leaves.
  await sql`SELECT pg_advisory_xact_lock(hashtextextended(${`sequence-list:${sequence.id}`}, 0))`.execute(
    trx,
  );
  const { rows } = await sql<FollowingSequence>`
    SELECT ${followingColumns(list)} FROM sequences s
    WHERE s.org_id = ${sequence.org_id} AND s.id = ${sequence.id}
      AND s.list_id IS NOT NULL AND s.status = 'active'
    FOR SHARE OF s`.execute(trx);
  return rows[0];
}

/** The active sequences of a client that follow a list, in id order. */
export async function followingSequencesOf(
  trx: Trx,
  tenant: { orgId: string; clientId: string },
): Promise<{ org_id: string; id: string }[]> {
  return trx
    .selectFrom('sequences')
    .select(['org_id', 'id'])
    .where('org_id', '=', tenant.orgId)
    .where('client_id', '=', tenant.clientId)
    .where('list_id', 'is not', null)
    .where('status', '=', 'active')
    .orderBy('id')
    .execute();
}

/** Records a whole-list sync: the list's version it read, and when. */
export async function setSyncedVersion(
  trx: Trx,
  sequence: { org_id: string; id: string },
  version: string,
): Promise<void> {
  await sql`UPDATE sequences SET list_synced_version = ${version}::timestamptz, list_synced_at = now()
    WHERE org_id = ${sequence.org_id} AND id = ${sequence.id}`.execute(trx);
}

export interface MembershipChanges {
  joined: string[];
  left: { contact_id: string; enrollment_id: string | null }[];
}

/**
 * Brings the sequence's membership rows in line with `members` (a query of contact ids): a member
 * without a row joins, a row (among `among`, or any when null) whose contact is not a member leaves.
 * The insert and the delete are the unique keys of a join and a leave: two passes cannot both make one.
 */
export async function syncMembership(
  trx: Trx,
  sequence: FollowingSequence,
  members: RawBuilder<{ id: string }>,
  among: string[] | null,
): Promise<MembershipChanges> {
  const scope = among === null ? sql`true` : sql`r.contact_id = ANY(${among}::uuid[])`;
  const { rows } = await sql<{ change: 'joined' | 'left'; contact_id: string; enrollment_id: string | null }>`
    WITH members AS (${members}),
    joined AS (
      INSERT INTO sequence_list_members (org_id, client_id, sequence_id, contact_id, list_id)
      SELECT ${sequence.org_id}::uuid, ${sequence.client_id}::uuid, ${sequence.id}::uuid, m.id, ${sequence.list_id}::uuid
      FROM members m
      ON CONFLICT (org_id, sequence_id, contact_id) DO NOTHING
      RETURNING contact_id),
    gone AS (
      DELETE FROM sequence_list_members r
      WHERE r.org_id = ${sequence.org_id} AND r.sequence_id = ${sequence.id} AND ${scope}
        AND NOT EXISTS (SELECT 1 FROM members m WHERE m.id = r.contact_id)
      RETURNING r.contact_id, r.enrollment_id)
    SELECT 'joined' AS change, contact_id, NULL::uuid AS enrollment_id FROM joined
    UNION ALL
    SELECT 'left', contact_id, enrollment_id FROM gone`.execute(trx);
  return {
    joined: rows.filter((row) => row.change === 'joined').map((row) => row.contact_id),
    left: rows.filter((row) => row.change === 'left'),
  };
}

/**
 * Enrolls the contacts (`ids[i]` for `contactIds[i]`) unless actively enrolled already, and records on
 * their membership rows the enrollment each join made. Returns the new enrollments.
 */
export async function insertListEnrollments(
  trx: Trx,
  sequence: FollowingSequence,
  enrollments: { ids: string[]; contactIds: string[]; nextRunAt: Date; metadata: string },
): Promise<EnrollmentRow[]> {
  if (enrollments.ids.length === 0) return [];
  const { rows } = await sql<EnrollmentRow>`
    WITH made AS (
      INSERT INTO sequence_enrollments (id, org_id, client_id, sequence_id, contact_id, next_run_at, metadata)
      SELECT t.id, ${sequence.org_id}::uuid, ${sequence.client_id}::uuid, ${sequence.id}::uuid, t.contact_id,
        ${enrollments.nextRunAt}::timestamptz, ${enrollments.metadata}::jsonb
      FROM unnest(${enrollments.ids}::uuid[], ${enrollments.contactIds}::uuid[]) AS t(id, contact_id)
      ON CONFLICT (org_id, sequence_id, contact_id) WHERE status = 'active' DO NOTHING
      RETURNING *),
    recorded AS (
      UPDATE sequence_list_members r SET enrollment_id = made.id
      FROM made
      WHERE r.org_id = ${sequence.org_id} AND r.sequence_id = ${sequence.id} AND r.contact_id = made.contact_id)
    SELECT * FROM made`.execute(trx);
  return rows;
}

/**
 * True when one of the contact's addresses (`addresses`, a query of `email`) left the client's
 * sequences by a one-click unsubscribe.
 */
export function emailUnsubscribed(tenant: TenantScope, addresses: RawBuilder<{ email: string }>) {
  return sql<boolean>`EXISTS (SELECT 1 FROM sequence_email_unsubscribes u
    WHERE u.org_id = ${tenant.orgId} AND u.client_id = ${tenant.clientId} AND u.email IN (${addresses}))`;
}

/** Cancels those of the enrollments that are still active, with `reason`; returns them as they are now. */
export async function cancelActiveEnrollments(
  trx: Trx,
  orgId: string,
  ids: string[],
  reason: string,
): Promise<EnrollmentRow[]> {
  if (ids.length === 0) return [];
  const { rows } = await sql<EnrollmentRow>`
    UPDATE sequence_enrollments
    SET status = 'cancelled', paused_reason = ${reason}, lease_id = NULL, lease_until = NULL, updated_at = now()
    WHERE org_id = ${orgId} AND id = ANY(${ids}::uuid[]) AND status = 'active'
    RETURNING *`.execute(trx);
  return rows;
}
