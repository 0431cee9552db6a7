import { type RawBuilder, sql } from 'kysely';
import type { TenantScope } from '../../platform/auth/tenant.ts';
import { newId } from '../../platform/db/ids.ts';
import type { Db, Trx } from '../../platform/db/pool.ts';
import { inTransaction } from '../../platform/db/transaction.ts';
import { contactEmailAddresses } from '../contacts/service.ts';
import {
  findListRecord,
  type ListRecord,
  listContactIds,
  listTimeRelative,
  listVersion,
} from '../lists/service.ts';
import {
  cancelActiveEnrollments,
  emailUnsubscribed,
  type FollowedList,
  type FollowingSequence,
  followingSequencesOf,
  insertListEnrollments,
  lockFollowingSequence,
  type MembershipChanges,
  sequencesToSync,
  setSyncedVersion,
  syncMembership,
  takeListMarks,
} from './list-store.ts';
import { emitEnrollmentEvent } from './service.ts';
import type { Step } from './store.ts';

/**
 * Sequences that follow a CRM list. While a sequence is active, a contact that joins its list is
 * enrolled once (`metadata {source: "list", list_id}`) and one that leaves has the enrollment the list
 * gave it cancelled (`list_change`, `sequence.contact_unenrolled`). The list's exclusions count, the
 * sequences' own email unsubscribes among them; a list with `emit_flow_triggers: false` moves nothing.
 *
 * Two passes, on every worker, share the work: a whole-list sync of each sequence just linked,
 * re-activated or whose list's definition changed (its version, the list's updated_at), and the marked
 * contacts: every write of a contact, its phones and emails, its company, a static list's members or an
 * email unsubscribe marks the contact in its transaction (triggers of migrations 1040 and 1062), so a
 * write never rescans a list. A smart list relative to now (`within_last_days`) changes with no write:
 * it is synced whole again every `resyncMs`.
 * One pass at a time per sequence (an advisory lock), and the membership row's insert or delete is the
 * unique key of each join and leave: two workers, or a pass that is retried, enroll and cancel once.
 */

/** The reason of an enrollment cancelled because its contact left the list. */
export const LIST_CHANGE = 'list_change';

/** Enrollments written per statement. */
const CHUNK = 1000;
/** Batches of marks one round takes before it yields to the other loops. */
const MAX_BATCHES = 100;

export interface ListFollowContext {
  db: Db;
  minuteMs: number;
  /** Marks taken per transaction. */
  batchSize: number;
  /** How often a list whose members move with time alone is synced whole again. */
  resyncMs: number;
}

function followedList(context: ListFollowContext): FollowedList {
  return { version: listVersion, timeRelative: listTimeRelative, resyncMs: context.resyncMs };
}

/** One round: whole-list syncs, then the marked contacts; true when marks were left for the next round. */
export async function followLists(context: ListFollowContext): Promise<boolean> {
  await syncWholeLists(context);
  for (let batch = 0; batch < MAX_BATCHES; batch++) {
    const taken = await inTransaction(context.db, (trx) => followMarks(context, trx));
    if (taken < context.batchSize) return false;
  }
  return true;
}

async function syncWholeLists(context: ListFollowContext): Promise<void> {
  const seen: string[] = [];
  for (;;) {
    const due = await inTransaction(context.db, (trx) =>
      sequencesToSync(trx, followedList(context), seen, 20),
    );
    if (due.length === 0) return;
    for (const candidate of due) {
      seen.push(candidate.id);
      await inTransaction(context.db, (trx) => syncWholeList(context, trx, candidate));
    }
  }
}

async function syncWholeList(
  context: ListFollowContext,
  trx: Trx,
  candidate: { org_id: string; id: string },
): Promise<void> {
  const sequence = await lockFollowingSequence(trx, candidate, followedList(context));
  if (!sequence || sequence.version === null) return;
  if (sequence.version === sequence.synced && !sequence.resync_due) return;
  const tenant = tenantOf(sequence);
  const list = await findListRecord(trx, tenant, sequence.list_id);
  if (!list) return;
  if (list.emit_flow_triggers) {
    const changes = await syncMembership(trx, sequence, membersNow(tenant, list), null);
    await applyChanges(context, trx, sequence, changes);
  }
  await setSyncedVersion(trx, sequence, sequence.version);
}

/** Takes a batch of marks and looks at those contacts for every following sequence of their client. */
async function followMarks(context: ListFollowContext, trx: Trx): Promise<number> {
  const marks = await takeListMarks(trx, context.batchSize);
  const byTenant = new Map<string, { tenant: TenantScope; ids: Set<string> }>();
  for (const mark of marks) {
    const key = `${mark.org_id}:${mark.client_id}`;
    const entry = byTenant.get(key) ?? {
      tenant: { orgId: mark.org_id, clientId: mark.client_id },
      ids: new Set<string>(),
    };
    entry.ids.add(mark.contact_id);
    byTenant.set(key, entry);
  }
  // Sequences are locked in one order, (org, client, id), by every pass.
  for (const key of [...byTenant.keys()].sort()) {
    const { tenant, ids } = byTenant.get(key) as { tenant: TenantScope; ids: Set<string> };
    const contactIds = [...ids];
    for (const candidate of await followingSequencesOf(trx, tenant)) {
      const sequence = await lockFollowingSequence(trx, candidate, followedList(context));
      // A whole-list sync is due: it reads these contacts as they are then.
      if (!sequence || sequence.version !== sequence.synced) continue;
      const list = await findListRecord(trx, tenant, sequence.list_id);
      if (!list?.emit_flow_triggers) continue;
      const changes = await syncMembership(trx, sequence, membersAmong(tenant, list, contactIds), contactIds);
      await applyChanges(context, trx, sequence, changes);
    }
  }
  return marks.length;
}

/** Every member of the list now. */
function membersNow(tenant: TenantScope, list: ListRecord): RawBuilder<{ id: string }> {
  return sql<{ id: string }>`SELECT l.id FROM (${listContactIds(tenant, list)}) l
    WHERE NOT ${unsubscribed(tenant, list, sql.ref('l.id'))}`;
}

/** Which of the contacts are members of the list now: each looked up alone, the list never scanned. */
function membersAmong(tenant: TenantScope, list: ListRecord, ids: string[]): RawBuilder<{ id: string }> {
  return sql<{ id: string }>`SELECT t.id FROM unnest(${ids}::uuid[]) AS t(id)
    WHERE EXISTS (${listContactIds(tenant, list, sql.ref('t.id'))})
      AND NOT ${unsubscribed(tenant, list, sql.ref('t.id'))}`;
}

/** A list's exclude_unsubscribed covers the one-click unsubscribes of sequence emails too. */
function unsubscribed(tenant: TenantScope, list: ListRecord, contactId: RawBuilder<unknown>) {
  if (!list.exclude_unsubscribed) return sql<boolean>`false`;
  return emailUnsubscribed(tenant, contactEmailAddresses(contactId));
}

/** Enrolls who joined (unless actively enrolled already) and cancels what the leavers' joins enrolled. */
async function applyChanges(
  context: ListFollowContext,
  trx: Trx,
  sequence: FollowingSequence,
  changes: MembershipChanges,
): Promise<void> {
  const steps = sequence.steps as Step[];
  const wait = (steps[0]?.wait_minutes ?? 0) * context.minuteMs;
  const metadata = JSON.stringify({ source: 'list', list_id: sequence.list_id });
  for (let start = 0; start < changes.joined.length; start += CHUNK) {
    const contactIds = changes.joined.slice(start, start + CHUNK);
    const made = await insertListEnrollments(trx, sequence, {
      ids: contactIds.map(() => newId()),
      contactIds,
      nextRunAt: new Date(Date.now() + wait),
      metadata,
    });
    for (const row of made) await emitEnrollmentEvent(trx, 'sequence.enrollment.created', row);
  }
  const enrolledByList = changes.left
    .map((row) => row.enrollment_id)
    .filter((id): id is string => id !== null);
  const cancelled = await cancelActiveEnrollments(trx, sequence.org_id, enrolledByList, LIST_CHANGE);
  for (const row of cancelled) await emitEnrollmentEvent(trx, 'sequence.contact_unenrolled', row);
}

function tenantOf(sequence: { org_id: string; client_id: string }): TenantScope {
  return { orgId: sequence.org_id, clientId: sequence.client_id };
}
