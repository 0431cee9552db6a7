import { type Selectable, sql } from 'kysely';
import type { Executor, Trx } from '../../platform/db/pool.ts';
import { prepare } from '../../platform/db/prepared.ts';
import type { FuelLedgerTable } from '../../platform/db/schema.ts';
import type { PageRequest } from '../../platform/http/pagination.ts';

export type LedgerRow = Selectable<FuelLedgerTable>;
export type FuelReason = FuelLedgerTable['reason'];

export interface NewLedgerEntry {
  id: string;
  orgId: string;
  clientId: string | null;
  amount: number;
  reason: FuelReason;
  referenceType: string | null;
  referenceId: string | null;
  note: string | null;
}

/**
 * Adds `amount` (negative for a debit) to the org's balance unless that takes it below zero, and
 * returns the new balance; undefined when the balance is too low or the org unknown. The row stays
 * locked until the caller's transaction ends: FUEL changes of one org apply one after another.
 */
const addToBalanceStatement = prepare((db, p: { orgId: string; amount: number }) =>
  db
    .updateTable('orgs')
    .set({ fuel_balance: sql`fuel_balance + ${p.amount}` })
    .where('id', '=', p.orgId)
    .where(sql<boolean>`fuel_balance + ${p.amount} >= 0`)
    .returning('fuel_balance'),
);

export async function addToBalance(trx: Trx, orgId: string, amount: number) {
  const [row] = await addToBalanceStatement.run(trx, { orgId, amount });
  return row?.fuel_balance;
}

const insertEntryStatement = prepare((db, p: NewLedgerEntry & { balanceAfter: number }) =>
  db
    .insertInto('fuel_ledger')
    .values({
      id: p.id,
      org_id: p.orgId,
      client_id: p.clientId,
      amount: p.amount,
      balance_after: p.balanceAfter,
      reason: p.reason,
      reference_type: p.referenceType,
      reference_id: p.referenceId,
      note: p.note,
    })
    .onConflict((conflict) =>
      conflict.columns(['org_id', 'reference_type', 'reference_id', 'reason']).doNothing(),
    )
    .returningAll(),
);

/** Appends the entry, or returns undefined when its cause already has an entry of this reason. */
export async function insertEntryOnce(trx: Trx, entry: NewLedgerEntry, balanceAfter: number) {
  const [row] = await insertEntryStatement.run(trx, { ...entry, balanceAfter });
  return row;
}

export function findBalance(db: Executor, orgId: string) {
  return db.selectFrom('orgs').select('fuel_balance').where('id', '=', orgId).executeTakeFirst();
}

/** The entries a cause has: at most one per reason. */
function entriesOfCause(db: Executor, orgId: string, cause: { referenceType: string; referenceId: string }) {
  return db
    .selectFrom('fuel_ledger')
    .selectAll()
    .where('org_id', '=', orgId)
    .where('reference_type', '=', cause.referenceType)
    .where('reference_id', '=', cause.referenceId);
}

export function findEntryOfCause(
  db: Executor,
  orgId: string,
  cause: { reason: FuelReason; referenceType: string; referenceId: string },
) {
  return entriesOfCause(db, orgId, cause).where('reason', '=', cause.reason).executeTakeFirst();
}

/** The debit a cause was charged, the entry a refund gives back. */
export function findDebitOfCause(
  db: Executor,
  orgId: string,
  cause: { referenceType: string; referenceId: string },
) {
  return entriesOfCause(db, orgId, cause).where('amount', '<', 0).executeTakeFirst();
}

/**
 * Ledger entries newest first, a page of them: one client's when `clientId` is
 * given, else the whole org's.
 */
export function listEntries(
  db: Executor,
  scope: { orgId: string; clientId: string | null },
  page: PageRequest<string>,
) {
  let query = db.selectFrom('fuel_ledger').selectAll().where('org_id', '=', scope.orgId);
  if (scope.clientId !== null) query = query.where('client_id', '=', scope.clientId);
  if (page.after !== undefined) query = query.where('id', '<', page.after);
  return query.orderBy('id', 'desc').limit(page.limit).execute();
}
