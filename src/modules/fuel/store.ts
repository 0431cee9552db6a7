import { type Selectable, sql } from 'kysely';
import { firstIdAt } from '../../platform/db/ids.ts';
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

/**
 * The balance change and its ledger entry in one statement (one round trip while the org's balance
 * row is locked): `balance` is the new balance, or null when it would go below zero (or the org is
 * unknown) and nothing changed; `entry` is the new entry, or null when the cause had one already, in
 * which case the balance did change and the caller undoes it.
 */
const applyStatement = prepare(
  (_db, p: NewLedgerEntry) =>
    sql<{ balance: number | null; entry: LedgerRow | null }>`
    WITH balance AS (
      UPDATE orgs SET fuel_balance = fuel_balance + ${p.amount}
      WHERE id = ${p.orgId} AND fuel_balance + ${p.amount} >= 0
      RETURNING fuel_balance),
    entry AS (
      INSERT INTO fuel_ledger
        (id, org_id, client_id, amount, balance_after, reason, reference_type, reference_id, note)
      SELECT ${p.id}, ${p.orgId}, ${p.clientId}, ${p.amount}, fuel_balance, ${p.reason}, ${p.referenceType},
             ${p.referenceId}, ${p.note}
      FROM balance
      ON CONFLICT (org_id, reference_type, reference_id, reason) DO NOTHING
      RETURNING *)
    SELECT (SELECT fuel_balance FROM balance) AS balance, (SELECT to_jsonb(entry) FROM entry) AS entry`,
);

export async function applyEntry(trx: Trx, entry: NewLedgerEntry) {
  const [row] = await applyStatement.run(trx, entry);
  return {
    balance: row.balance === null ? undefined : Number(row.balance),
    entry: row.entry ? ledgerRowOfJson(row.entry) : undefined,
  };
}

/** A ledger row read back through JSON: its numbers and dates as the driver gives them. */
function ledgerRowOfJson(json: LedgerRow): LedgerRow {
  const row = json as unknown as Record<string, unknown>;
  return {
    ...json,
    amount: Number(row.amount),
    balance_after: Number(row.balance_after),
    created_at: new Date(row.created_at as string),
  } as LedgerRow;
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

/** FUEL spent per UTC day and reason from `since` on: debits, less what was refunded of them. */
export function spendPerDay(db: Executor, orgId: string, since: Date) {
  return db
    .selectFrom('fuel_ledger as entry')
    .leftJoin('fuel_ledger as debit', (join) =>
      join
        .onRef('debit.org_id', '=', 'entry.org_id')
        .onRef('debit.reference_type', '=', 'entry.reference_type')
        .onRef('debit.reference_id', '=', 'entry.reference_id')
        .on('debit.amount', '<', 0)
        .on('entry.reason', '=', 'refund'),
    )
    .select([
      sql<string>`to_char(entry.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD')`.as('day'),
      sql<FuelReason>`coalesce(debit.reason, entry.reason)`.as('reason'),
      sql<number>`(-sum(entry.amount))::int`.as('spent'),
    ])
    .where('entry.org_id', '=', orgId)
    .where('entry.id', '>=', firstIdAt(since))
    .where((where) => where.or([where('entry.amount', '<', 0), where('entry.reason', '=', 'refund')]))
    .groupBy(['day', sql`coalesce(debit.reason, entry.reason)`])
    .orderBy('day')
    .execute();
}
