import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { seedDemo } from '../../src/seed/demo.ts';
import { caller } from '../crm/crm-client.ts';
import { adminCall, buildTestApp, type TestApp } from '../helpers.ts';

describe('the demo seed', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp();
  });
  after(() => t.close());

  test('a newcomer with the demo client key can send an SMS at once and read its conversation', async () => {
    const demo = await seedDemo(t.platform.db);
    assert.ok(demo);
    const client = caller(t, { authorization: `Bearer ${demo.clientKey}` });
    const sent = await client('POST', '/sms/messages', { to: '+12025550123', body: 'Hello from the demo' });
    assert.equal(sent.status, 202, JSON.stringify(sent.body));
    assert.equal(sent.body.message.from, '+12025550101');
    const house = caller(t, { authorization: `Bearer ${demo.agencyKey}` });
    const fromHouse = await house('POST', '/sms/messages', { to: '+12025550124', body: 'From the agency' });
    assert.equal(fromHouse.status, 202);
    assert.equal(fromHouse.body.message.from, '+12025550100');
    const conversations = (await client('GET', '/sms/conversations')).body.data;
    assert.equal(conversations.length, 1);
  });

  test('a legacy SMS key sends and reads under /v1/sms and nothing else', async () => {
    const [org] = await t.platform.db.selectFrom('orgs').select('id').execute();
    const minted = await adminCall(t.app, 'POST', `/orgs/${org.id}/keys`, {
      name: 'legacy',
      kind: 'legacy_sms',
    });
    const legacy = caller(t, { authorization: `Bearer ${minted.key}` });
    const sent = await legacy('POST', '/sms/messages', { to: '+12025550125', body: 'Legacy hello' });
    assert.equal(sent.status, 202, JSON.stringify(sent.body));
    assert.equal((await legacy('GET', '/sms/conversations')).status, 200);
    assert.equal((await legacy('GET', '/crm/contacts')).status, 403);
  });
});
