import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  debitFuel,
  type FuelDebit,
  fuelBalance,
  refundFuel,
  spendPerDay,
} from '../../src/modules/fuel/service.ts';
import { newId } from '../../src/platform/db/ids.ts';
import type { Trx } from '../../src/platform/db/pool.ts';
import { inTransaction as runInTransaction } from '../../src/platform/db/transaction.ts';
import { ApiError } from '../../src/platform/http/errors.ts';
import { adminCall, buildTestApp, createTenant, type TestApp } from '../helpers.ts';

/** FUEL spent by other modules inside their own transactions, on real concurrent transactions of the pool. */
describe('FUEL debits and refunds', () => {
  let t: TestApp;

  before(async () => {
    t = await buildTestApp();
  });
  after(() => t.close());

  /** A fresh org with `balance` FUEL; its client is the one debits are made for. */
  const fundedTenant = async (balance: number) => {
    const tenant = await createTenant(t.app);
    if (balance > 0) await adminCall(t.app, 'POST', `/orgs/${tenant.orgId}/fuel`, { amount: balance });
    return { orgId: tenant.orgId, clientId: tenant.clientId };
  };
  const smsDebit = (amount = 1, referenceId = newId()): FuelDebit => ({
    amount,
    reason: 'sms',
    referenceType: 'sms_message',
    referenceId,
  });
  const inTransaction = <T>(work: (trx: Trx) => Promise<T>) => runInTransaction(t.platform.db, work);
  const ledger = async (orgId: string) =>
    (
      await t.database.pool.query(
        `SELECT amount, balance_after, reason, reference_type, reference_id, client_id
         FROM fuel_ledger WHERE org_id = $1 ORDER BY id`,
        [orgId],
      )
    ).rows;
  const ledgerSum = async (orgId: string) =>
    Number(
      (
        await t.database.pool.query(
          'SELECT coalesce(sum(amount), 0) AS sum FROM fuel_ledger WHERE org_id = $1',
          [orgId],
        )
      ).rows[0].sum,
    );

  test('a debit takes the amount, names its cause and client, and returns its entry', async () => {
    const tenant = await fundedTenant(10);
    const debit = smsDebit(3);
    const change = await inTransaction((trx) => debitFuel(trx, tenant, debit));
    assert.equal(change.applied, true);
    assert.equal(change.entry.amount, -3);
    assert.equal(change.entry.balance_after, 7);
    assert.equal(await fuelBalance(t.platform.db, tenant.orgId), 7);
    assert.deepEqual((await ledger(tenant.orgId)).at(-1), {
      amount: -3,
      balance_after: 7,
      reason: 'sms',
      reference_type: 'sms_message',
      reference_id: debit.referenceId,
      client_id: tenant.clientId,
    });
  });

  test('too little FUEL is 402 fuel_exhausted with {required, balance}, and nothing changes', async () => {
    const tenant = await fundedTenant(2);
    const refused = await inTransaction((trx) => debitFuel(trx, tenant, smsDebit(3))).catch((error) => error);
    assert.ok(refused instanceof ApiError);
    assert.equal(refused.statusCode, 402);
    assert.equal(refused.code, 'fuel_exhausted');
    assert.deepEqual(refused.details, { required: 3, balance: 2 });
    assert.equal(await fuelBalance(t.platform.db, tenant.orgId), 2);
    assert.equal((await ledger(tenant.orgId)).length, 1, 'only the grant');
  });

  test('a refused debit leaves the caller transaction usable and unchanged', async () => {
    const tenant = await fundedTenant(1);
    await inTransaction(async (trx) => {
      await assert.rejects(debitFuel(trx, tenant, smsDebit(5)), { code: 'fuel_exhausted' });
      const change = await debitFuel(trx, tenant, smsDebit(1));
      assert.equal(change.entry.balance_after, 0);
    });
    assert.equal(await fuelBalance(t.platform.db, tenant.orgId), 0);
  });

  test('500 concurrent debits of 1 against 300 FUEL: exactly 300 succeed, the balance ends at 0', async () => {
    const tenant = await fundedTenant(300);
    const outcomes = await Promise.allSettled(
      Array.from({ length: 500 }, () => inTransaction((trx) => debitFuel(trx, tenant, smsDebit(1)))),
    );
    const succeeded = outcomes.filter((outcome) => outcome.status === 'fulfilled');
    const refused = outcomes.filter((outcome) => outcome.status === 'rejected');
    assert.equal(succeeded.length, 300);
    assert.equal(refused.length, 200);
    for (const outcome of refused) assert.equal((outcome.reason as ApiError).code, 'fuel_exhausted');
    assert.equal(await fuelBalance(t.platform.db, tenant.orgId), 0);
    const entries = await ledger(tenant.orgId);
    assert.equal(entries.length, 301);
    assert.ok(entries.every((entry) => entry.balance_after >= 0));
    // Each debit saw the balance the one before it left.
    assert.deepEqual(
      entries
        .slice(1)
        .map((entry) => entry.balance_after)
        .sort((a, b) => b - a),
      Array.from({ length: 300 }, (_, i) => 299 - i),
    );
    assert.equal(await ledgerSum(tenant.orgId), 0);
  });

  test('the same cause debited twice, one after the other, is debited once', async () => {
    const tenant = await fundedTenant(10);
    const debit = smsDebit(2);
    const first = await inTransaction((trx) => debitFuel(trx, tenant, debit));
    const second = await inTransaction((trx) => debitFuel(trx, tenant, debit));
    assert.equal(first.applied, true);
    assert.equal(second.applied, false);
    assert.equal(second.entry.id, first.entry.id);
    assert.equal(await fuelBalance(t.platform.db, tenant.orgId), 8);
    assert.equal(await ledgerSum(tenant.orgId), 8);
  });

  test('a replayed cause is a no-op even when the balance could no longer pay for it', async () => {
    const tenant = await fundedTenant(2);
    const debit = smsDebit(2);
    await inTransaction((trx) => debitFuel(trx, tenant, debit));
    const replay = await inTransaction((trx) => debitFuel(trx, tenant, debit));
    assert.equal(replay.applied, false);
    assert.equal(await fuelBalance(t.platform.db, tenant.orgId), 0);
  });

  test('the same cause debited by 20 concurrent transactions is debited once', async () => {
    const tenant = await fundedTenant(100);
    const debit = smsDebit(3);
    const changes = await Promise.all(
      Array.from({ length: 20 }, () => inTransaction((trx) => debitFuel(trx, tenant, debit))),
    );
    assert.equal(changes.filter((change) => change.applied).length, 1);
    assert.equal(new Set(changes.map((change) => change.entry.id)).size, 1);
    assert.equal(await fuelBalance(t.platform.db, tenant.orgId), 97);
    assert.equal(await ledgerSum(tenant.orgId), 97);
  });

  test('a debit rolled back with its transaction leaves the cause free to be debited again', async () => {
    const tenant = await fundedTenant(5);
    const debit = smsDebit(1);
    await assert.rejects(
      inTransaction(async (trx) => {
        await debitFuel(trx, tenant, debit);
        throw new Error('the send failed');
      }),
      /the send failed/,
    );
    assert.equal(await fuelBalance(t.platform.db, tenant.orgId), 5);
    assert.equal((await inTransaction((trx) => debitFuel(trx, tenant, debit))).applied, true);
    assert.equal(await fuelBalance(t.platform.db, tenant.orgId), 4);
  });

  test('the same cause in another org is another cause', async () => {
    const first = await fundedTenant(5);
    const second = await fundedTenant(5);
    const debit = smsDebit(1);
    assert.equal((await inTransaction((trx) => debitFuel(trx, first, debit))).applied, true);
    assert.equal((await inTransaction((trx) => debitFuel(trx, second, debit))).applied, true);
    assert.equal(await fuelBalance(t.platform.db, first.orgId), 4);
    assert.equal(await fuelBalance(t.platform.db, second.orgId), 4);
  });

  test('a refund gives back what its cause was debited, once, with its own ledger entry', async () => {
    const tenant = await fundedTenant(10);
    const debit = smsDebit(4);
    await inTransaction((trx) => debitFuel(trx, tenant, debit));
    const cause = { referenceType: debit.referenceType, referenceId: debit.referenceId };
    const refund = await inTransaction((trx) => refundFuel(trx, tenant, cause));
    assert.equal(refund.applied, true);
    assert.equal(refund.entry.amount, 4);
    assert.equal(refund.entry.reason, 'refund');
    assert.equal(refund.entry.reference_id, debit.referenceId);
    assert.equal(refund.entry.client_id, tenant.clientId);
    assert.equal(refund.entry.balance_after, 10);

    const again = await inTransaction((trx) => refundFuel(trx, tenant, cause));
    assert.equal(again.applied, false);
    assert.equal(again.entry.id, refund.entry.id);
    const concurrent = await Promise.all(
      Array.from({ length: 10 }, () => inTransaction((trx) => refundFuel(trx, tenant, cause))),
    );
    assert.ok(concurrent.every((change) => !change.applied));
    assert.equal(await fuelBalance(t.platform.db, tenant.orgId), 10);
    assert.equal(await ledgerSum(tenant.orgId), 10);
    // The refunded cause stays debited once: debiting it again is still a no-op.
    assert.equal((await inTransaction((trx) => debitFuel(trx, tenant, debit))).applied, false);
  });

  test('concurrent refunds of one cause refund once', async () => {
    const tenant = await fundedTenant(10);
    const debit = smsDebit(2);
    await inTransaction((trx) => debitFuel(trx, tenant, debit));
    const cause = { referenceType: debit.referenceType, referenceId: debit.referenceId };
    const changes = await Promise.all(
      Array.from({ length: 10 }, () => inTransaction((trx) => refundFuel(trx, tenant, cause))),
    );
    assert.equal(changes.filter((change) => change.applied).length, 1);
    assert.equal(await fuelBalance(t.platform.db, tenant.orgId), 10);
  });

  test('refunding a cause that was never debited, or another org debited, is refused', async () => {
    const tenant = await fundedTenant(10);
    const other = await fundedTenant(10);
    const debit = smsDebit(1);
    await inTransaction((trx) => debitFuel(trx, other, debit));
    const cause = { referenceType: debit.referenceType, referenceId: debit.referenceId };
    await assert.rejects(
      inTransaction((trx) => refundFuel(trx, tenant, cause)),
      /No FUEL debit/,
    );
    await assert.rejects(
      inTransaction((trx) => refundFuel(trx, tenant, { referenceType: 'sms_message', referenceId: newId() })),
      /No FUEL debit/,
    );
    assert.equal(await fuelBalance(t.platform.db, tenant.orgId), 10);
    assert.equal(await fuelBalance(t.platform.db, other.orgId), 9);
  });

  test('a debit amount must be a positive integer', async () => {
    const tenant = await fundedTenant(10);
    for (const amount of [0, -1, 1.5]) {
      await assert.rejects(
        inTransaction((trx) => debitFuel(trx, tenant, smsDebit(amount))),
        TypeError,
      );
    }
    assert.equal(await fuelBalance(t.platform.db, tenant.orgId), 10);
  });

  test('the spend per day and reason counts debits, less what was refunded, against their own reason', async () => {
    const tenant = await fundedTenant(20);
    const refunded = smsDebit(3);
    await inTransaction((trx) => debitFuel(trx, tenant, smsDebit(2)));
    await inTransaction((trx) => debitFuel(trx, tenant, refunded));
    const { referenceType, referenceId } = refunded;
    await inTransaction((trx) => refundFuel(trx, tenant, { referenceType, referenceId }));
    await inTransaction((trx) =>
      debitFuel(trx, tenant, { amount: 4, reason: 'gist', referenceType: 'gist', referenceId: newId() }),
    );
    await adminCall(t.app, 'POST', `/orgs/${tenant.orgId}/fuel`, { amount: -1, reason: 'correction' });
    const today = new Date().toISOString().slice(0, 10);
    const spend = await spendPerDay(t.platform.db, tenant.orgId, 30);
    assert.deepEqual(
      spend.sort((a, b) => a.reason.localeCompare(b.reason)),
      [
        { day: today, reason: 'adjustment', spent: 1 },
        { day: today, reason: 'gist', spent: 4 },
        { day: today, reason: 'sms', spent: 2 },
      ],
    );
  });
});
