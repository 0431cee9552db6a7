import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { chooseSender } from '../../src/modules/numbers/service.ts';
import { seedDemo } from '../../src/seed/demo.ts';
import { buildTestApp, type TestApp } from '../helpers.ts';

describe('the demo seed', () => {
  let t: TestApp;

  before(async () => {
    t = await buildTestApp();
  });
  after(() => t.close());

  test('gives the house client and the demo client a fictional 555-01xx number each, and FUEL', async () => {
    const demo = await seedDemo(t.platform.db);
    assert.ok(demo);
    const numbersOf = async (key: string) =>
      (
        await t.app.inject({ method: 'GET', url: '/v1/numbers', headers: { authorization: `Bearer ${key}` } })
      ).json().data;
    const [house] = await numbersOf(demo.agencyKey);
    const [client] = await numbersOf(demo.clientKey);
    assert.equal(house.number, '+12025550100');
    assert.equal(client.number, '+12025550101');
    assert.equal(client.client_id, demo.clientId);
    const sender = await chooseSender(
      t.platform.db,
      { orgId: demo.orgId, clientId: demo.clientId },
      undefined,
      'US',
    );
    assert.equal(sender.number, '+12025550101');
    const balance = await t.app.inject({
      method: 'GET',
      url: '/v1/fuel',
      headers: { authorization: `Bearer ${demo.clientKey}` },
    });
    assert.deepEqual(balance.json(), { fuel: { balance: 1000 } });
  });

  test("the demo client's number is answered by a demo inbound voice agent", async () => {
    const demo = await seedDemo(t.platform.db);
    assert.equal(demo, null, 'seeded once, by the test before');
    const answered = await t.database.pool.query(
      `SELECT a.name, a.kind, n.number FROM phone_numbers n JOIN agents a ON a.id = n.agent_id`,
    );
    assert.deepEqual(answered.rows, [
      { name: 'Demo Receptionist', kind: 'inbound_voice', number: '+12025550101' },
    ]);
  });
});
