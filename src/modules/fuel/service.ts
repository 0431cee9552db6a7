import { sql } from 'kysely';
import { newId } from '../../platform/db/ids.ts';
import type { Executor } from '../../platform/db/pool.ts';
import { errors } from '../../platform/http/errors.ts';

/**
 * FUEL: an org-level credit balance with an append-only ledger. A change never takes the balance
 * below zero; the balance row is updated and the ledger appended in the caller's transaction.
 */
export async function changeFuel(
  trx: Executor,
  orgId: string,
  amount: number,
  reason: string | null,
): Promise<number> {
  const updated = await trx
    .updateTable('orgs')
    .set({ fuel_balance: sql`fuel_balance + ${amount}`, updated_at: new Date() })
    .where('id', '=', orgId)
    .where(sql<boolean>`fuel_balance + ${amount} >= 0`)
    .returning('fuel_balance')
    .executeTakeFirst();
  if (!updated) {
    const org = await trx
      .selectFrom('orgs')
      .select('fuel_balance')
      .where('id', '=', orgId)
      .executeTakeFirst();
    if (!org) throw errors.notFound('Org', orgId);
    throw errors.fuelExhausted(-amount, org.fuel_balance);
  }
  await trx
    .insertInto('fuel_ledger')
    .values({ id: newId(), org_id: orgId, amount, balance_after: updated.fuel_balance, reason })
    .execute();
  return updated.fuel_balance;
}

/** Spends FUEL, or fails with 402 `fuel_exhausted` and changes nothing. */
export function spendFuel(trx: Executor, orgId: string, amount: number, reason: string): Promise<number> {
  return changeFuel(trx, orgId, -amount, reason);
}

export async function fuelBalance(db: Executor, orgId: string): Promise<number> {
  const org = await db.selectFrom('orgs').select('fuel_balance').where('id', '=', orgId).executeTakeFirst();
  if (!org) throw errors.notFound('Org', orgId);
  return org.fuel_balance;
}
