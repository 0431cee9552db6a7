import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { caller } from '../crm/crm-client.ts';
import { buildTestApp, createTenant, type TestApp, type TestTenant } from '../helpers.ts';
import { balanceOf, smsSetup } from './support.ts';

describe('FUEL under concurrent sends', () => {
  let t: TestApp;
  let tenant: TestTenant;

  before(async () => {
    t = await buildTestApp();
    tenant = await createTenant(t.app);
    await smsSetup(t, tenant, '+14155550600', 300);
  });
  after(() => t.close());

  test('500 concurrent sends against a balance of 300: exactly 300 segments accepted, never below zero', async () => {
    const client = caller(t, tenant.client);
    let lowest = Number.POSITIVE_INFINITY;
    let watching = true;
    const watcher = (async () => {
      while (watching) {
        const row = await t.platform.db
          .selectFrom('orgs')
          .select('fuel_balance')
          .where('id', '=', tenant.orgId)
          .executeTakeFirstOrThrow();
        lowest = Math.min(lowest, Number(row.fuel_balance));
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    })();
    const replies = await Promise.all(
      Array.from({ length: 500 }, (_, i) =>
        client('POST', '/sms/messages', { to: `+1415557${String(1000 + i)}`, body: `Offer ${i}` }),
      ),
    );
    watching = false;
    await watcher;
    const statuses = replies.map((r) => r.status);
    assert.equal(statuses.filter((s) => s === 202).length, 300);
    assert.equal(statuses.filter((s) => s === 402).length, 200);
    assert.ok(replies.filter((r) => r.status === 402).every((r) => r.body.error === 'fuel_exhausted'));
    assert.equal(await balanceOf(t, tenant), 0);
    assert.ok(lowest >= 0);
    const messages = await t.platform.db.selectFrom('sms_messages').select('id').execute();
    assert.equal(messages.length, 300);
    const debits = await t.platform.db
      .selectFrom('fuel_ledger')
      .select((eb) => eb.fn.sum<string>('amount').as('total'))
      .where('org_id', '=', tenant.orgId)
      .where('reason', '=', 'sms')
      .executeTakeFirstOrThrow();
    assert.equal(Number(debits.total), -300);
  });
});
