import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
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
    // Its own connection: the app's pool is busy with the sends.
    const watch = new pg.Client({ connectionString: t.database.url });
    await watch.connect();
    const watcher = (async () => {
      while (watching) {
        const { rows } = await watch.query('SELECT fuel_balance FROM orgs WHERE id = $1', [tenant.orgId]);
        lowest = Math.min(lowest, Number(rows[0].fuel_balance));
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    })();
    // A 503 (no database connection within the pool's wait, on a busy machine) changed nothing: the
    // client retries it, as the Retry-After header asks.
    const sendOnce = async (i: number) => {
      for (;;) {
        const reply = await client('POST', '/sms/messages', {
          to: `+1415557${String(1000 + i)}`,
          body: `Offer ${i}`,
        });
        if (reply.status !== 503) return reply;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    };
    const replies = await Promise.all(Array.from({ length: 500 }, (_, i) => sendOnce(i)));
    watching = false;
    await watcher;
    await watch.end();
    const statuses = replies.map((r) => r.status);
    assert.deepEqual(
      [...new Set(statuses)].sort(),
      [202, 402],
      JSON.stringify(replies.find((r) => r.status >= 500)),
    );
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
