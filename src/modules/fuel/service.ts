import type { Tenant, TenantScope } from '../../platform/auth/tenant.ts';
import { newId } from '../../platform/db/ids.ts';
import type { Executor, Trx } from '../../platform/db/pool.ts';
import { errors } from '../../platform/http/errors.ts';
import type { PageRequest } from '../../platform/http/pagination.ts';
import * as store from './store.ts';

/**
 * FUEL: an org-level credit balance with an append-only ledger. Other modules spend it inside their
 * own transaction with `debitFuel` and give it back with `refundFuel`; each entry names its cause
 * (`referenceType`, `referenceId`), and a cause is debited, and refunded, at most once.
 *
 * Call these last in the transaction, right before it commits: the org's balance row stays locked
 * from the debit to the commit, and every other FUEL change of the org waits for it. Callers run at
 * READ COMMITTED (the default), so a change that waited sees the one it waited for.
 */

export type FuelReason = store.FuelReason;
/** Why FUEL is spent: the reasons a debit may give. */
export type FuelSpendReason = Extract<FuelReason, 'sms' | 'gist' | 'ai_job'>;
export type FuelLedgerEntry = store.LedgerRow;

export interface FuelCause {
  /** What caused the change, in the product's words: `sms_message`, `gist`, … */
  referenceType: string;
  /** The id of that cause, unique within its type for the org. */
  referenceId: string;
}

export interface FuelDebit extends FuelCause {
  /** FUEL to take, a positive integer. */
  amount: number;
  reason: FuelSpendReason;
}

/** The outcome of a debit or refund. `applied` is false when the cause had it already: nothing changed. */
export interface FuelChange {
  applied: boolean;
  /** The ledger entry of this cause: the new one, or the earlier one when `applied` is false. */
  entry: FuelLedgerEntry;
}

/**
 * Takes `amount` FUEL for a cause, in the caller's transaction. A second debit of the same cause
 * (a replayed request, a retried job) changes nothing and says so with `applied: false`. With too
 * little FUEL it throws 402 `fuel_exhausted` (`details: {required, balance}`) and changes nothing.
 */
export async function debitFuel(trx: Trx, tenant: TenantScope, debit: FuelDebit): Promise<FuelChange> {
  assertPositiveAmount(debit.amount);
  const cause = { reason: debit.reason, referenceType: debit.referenceType, referenceId: debit.referenceId };
  const change = await applyOnce(trx, {
    id: newId(),
    orgId: tenant.orgId,
    clientId: tenant.clientId,
    amount: -debit.amount,
    ...cause,
    note: null,
  });
  if (change) return change;
  // Too little FUEL now; but a replay of a cause paid before is a no-op, not a refusal.
  const earlier = await store.findEntryOfCause(trx, tenant.orgId, cause);
  if (earlier) return { applied: false, entry: earlier };
  throw await exhausted(trx, tenant.orgId, debit.amount);
}

/**
 * Gives back, in the caller's transaction, what the cause was debited: the refund entry has reason
 * `refund` and the debit's reference. A second refund of the same cause changes nothing
 * (`applied: false`). A cause that was never debited is a programming error and throws.
 */
export async function refundFuel(trx: Trx, tenant: TenantScope, cause: FuelCause): Promise<FuelChange> {
  const debit = await store.findDebitOfCause(trx, tenant.orgId, cause);
  if (!debit) {
    throw new Error(`No FUEL debit of ${cause.referenceType} ${cause.referenceId} to refund`);
  }
  const change = await applyOnce(trx, {
    id: newId(),
    orgId: tenant.orgId,
    clientId: debit.client_id,
    amount: -debit.amount,
    reason: 'refund',
    ...cause,
    note: null,
  });
  // A credit cannot take the balance below zero, so only the org's absence stops it.
  if (!change) throw errors.notFound('Org', tenant.orgId);
  return change;
}

/**
 * An operator's change of the org's balance (the admin API): a positive amount is a `grant`, a
 * negative one an `adjustment`, each its own entry with reference type `admin_grant`. Returns the
 * new balance; 402 `fuel_exhausted` when an adjustment takes more than the balance.
 */
export async function grantFuel(
  trx: Trx,
  orgId: string,
  grant: { amount: number; note: string | null },
): Promise<number> {
  const change = await applyOnce(trx, {
    id: newId(),
    orgId,
    clientId: null,
    amount: grant.amount,
    reason: grant.amount > 0 ? 'grant' : 'adjustment',
    referenceType: 'admin_grant',
    referenceId: null,
    note: grant.note,
  });
  if (!change) throw await exhausted(trx, orgId, -grant.amount);
  return change.entry.balance_after;
}

export async function fuelBalance(db: Executor, orgId: string): Promise<number> {
  const org = await store.findBalance(db, orgId);
  if (!org) throw errors.notFound('Org', orgId);
  return org.fuel_balance;
}

/** One ledger entry as the API shows it. */
export function publicLedgerEntry(row: FuelLedgerEntry) {
  return {
    id: row.id,
    amount: row.amount,
    balance_after: row.balance_after,
    reason: row.reason,
    reference_type: row.reference_type,
    reference_id: row.reference_id,
    client_id: row.client_id,
    note: row.note,
    created_at: row.created_at,
  };
}

/**
 * `GET /fuel/ledger`, newest first. A caller acting as a client sees that client's entries; an
 * agency key acting as itself sees the whole org's, grants included, since the balance is the org's.
 */
export async function listLedger(
  db: Executor,
  tenant: Pick<Tenant, 'orgId' | 'clientId' | 'isClientScoped'>,
  page: PageRequest<string>,
) {
  const rows = await store.listEntries(
    db,
    { orgId: tenant.orgId, clientId: tenant.isClientScoped ? tenant.clientId : null },
    page,
  );
  return rows.map(publicLedgerEntry);
}

/**
 * The balance change and its ledger entry, in one statement: the conditional UPDATE of the balance
 * and an INSERT whose unique cause key makes a repeat skip (one round trip with the balance row
 * locked, so concurrent FUEL changes of the org wait as little as possible). Undefined when the
 * balance is too low (or the org unknown): nothing changed. A repeated cause passed the UPDATE too,
 * so it is undone: the rare path pays the extra statements, the common one stays at one.
 */
async function applyOnce(trx: Trx, entry: store.NewLedgerEntry): Promise<FuelChange | undefined> {
  const applied = await store.applyEntry(trx, entry);
  if (applied.balance === undefined) return undefined;
  if (applied.entry) return { applied: true, entry: applied.entry };
  await store.addToBalance(trx, entry.orgId, -entry.amount);
  const earlier = await store.findEntryOfCause(trx, entry.orgId, {
    reason: entry.reason,
    referenceType: entry.referenceType!,
    referenceId: entry.referenceId!,
  });
  return { applied: false, entry: earlier! };
}

async function exhausted(trx: Trx, orgId: string, required: number) {
  return errors.fuelExhausted(required, await fuelBalance(trx, orgId));
}

function assertPositiveAmount(amount: number): void {
  if (!Number.isSafeInteger(amount) || amount <= 0) {
    throw new TypeError(`A FUEL debit is a positive integer, not ${amount}`);
  }
}

/**
 * What the org spent per UTC day and reason over the last `days` days (today included), a refund
 * counted against the reason it gave back: the portal's FUEL chart.
 */
export async function spendPerDay(db: Executor, orgId: string, days: number, now = new Date()) {
  const since = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() - (days - 1)));
  const rows = await store.spendPerDay(db, orgId, since);
  return rows.map((row) => ({ day: row.day, reason: row.reason, spent: Number(row.spent) }));
}
