import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { chooseSender, numberOwner } from '../../src/modules/numbers/service.ts';
import type { ApiError } from '../../src/platform/http/errors.ts';
import { adminCall, buildTestApp, createTenant, type TestApp, type TestTenant } from '../helpers.ts';

const UNKNOWN = '00000000-0000-7000-8000-000000000000';

describe('phone numbers: tenant reads, inbound owner and the sender rule', () => {
  let t: TestApp;
  let tenant: TestTenant;
  let other: TestTenant;
  const numbers: Record<string, any> = {};

  const get = (url: string, headers: Record<string, string>) => t.app.inject({ method: 'GET', url, headers });
  const addNumber = async (orgId: string, number: string, clientId?: string) =>
    (await adminCall(t.app, 'POST', `/orgs/${orgId}/numbers`, { number, client_id: clientId })).number;
  const sender = (scope: { orgId: string; clientId: string }, from?: string) =>
    chooseSender(t.platform.db, scope, from, 'US');
  const refusal = (promise: Promise<unknown>) =>
    promise.then(
      () => assert.fail('expected a refusal'),
      (error: ApiError) => error,
    );

  before(async () => {
    t = await buildTestApp();
    tenant = await createTenant(t.app);
    other = await createTenant(t.app);
    numbers.house = await addNumber(tenant.orgId, '+12025550140');
    numbers.clientFirst = await addNumber(tenant.orgId, '+12025550141', tenant.clientId);
    numbers.clientSecond = await addNumber(tenant.orgId, '+12025550142', tenant.clientId);
    numbers.otherOrg = await addNumber(other.orgId, '+12025550143', other.clientId);
  });
  after(() => t.close());

  test("GET /v1/numbers lists the caller's client's numbers, oldest first", async () => {
    for (const headers of [tenant.client, tenant.agencyAsClient]) {
      const response = await get('/v1/numbers', headers);
      assert.equal(response.statusCode, 200);
      assert.deepEqual(response.json(), {
        data: [numbers.clientFirst, numbers.clientSecond],
        next_page_token: null,
        limit: 50,
      });
    }
    const page = (await get('/v1/numbers?limit=1', tenant.client)).json();
    assert.deepEqual(page.data, [numbers.clientFirst]);
    const next = (await get(`/v1/numbers?limit=1&page_token=${page.next_page_token}`, tenant.client)).json();
    assert.deepEqual(next.data, [numbers.clientSecond]);
  });

  test("an agency key acting as itself sees the house client's numbers only", async () => {
    assert.deepEqual((await get('/v1/numbers', tenant.agency)).json().data, [numbers.house]);
  });

  test("client A never sees client B's numbers, nor another org's", async () => {
    assert.deepEqual((await get('/v1/numbers', other.client)).json().data, [numbers.otherOrg]);
    assert.deepEqual((await get('/v1/numbers', other.agency)).json().data, []);
    for (const [headers, id] of [
      [tenant.client, numbers.house.id],
      [tenant.client, numbers.otherOrg.id],
      [tenant.agency, numbers.clientFirst.id],
      [other.client, numbers.clientFirst.id],
      [tenant.client, UNKNOWN],
    ]) {
      const response = await get(`/v1/numbers/${id}`, headers);
      assert.equal(response.statusCode, 404);
      assert.equal(response.json().error, 'not_found');
    }
    assert.deepEqual((await get(`/v1/numbers/${numbers.clientFirst.id}`, tenant.client)).json(), {
      number: numbers.clientFirst,
    });
  });

  test("a tenant key cannot delete a number: that is the operator's", async () => {
    const response = await t.app.inject({
      method: 'DELETE',
      url: `/v1/numbers/${numbers.clientFirst.id}`,
      headers: tenant.agency,
    });
    assert.equal(response.statusCode, 404);
    assert.equal((await get(`/v1/numbers/${numbers.clientFirst.id}`, tenant.client)).statusCode, 200);
  });

  test('numberOwner finds the org and client of a number, or null', async () => {
    assert.deepEqual(await numberOwner(t.platform.db, '+12025550141'), {
      id: numbers.clientFirst.id,
      org_id: tenant.orgId,
      client_id: tenant.clientId,
      number: '+12025550141',
      agent_id: null,
    });
    assert.equal((await numberOwner(t.platform.db, '+12025550143'))?.org_id, other.orgId);
    assert.equal(await numberOwner(t.platform.db, '+12025550199'), null);
  });

  test('chooseSender: a given from that is one of the client numbers is used, in any notation', async () => {
    const client = { orgId: tenant.orgId, clientId: tenant.clientId };
    assert.equal((await sender(client, '+12025550142')).id, numbers.clientSecond.id);
    assert.equal((await sender(client, '(202) 555-0142')).id, numbers.clientSecond.id);
  });

  test("chooseSender: a from that is not the client's own is 400 validation_error naming from", async () => {
    const client = { orgId: tenant.orgId, clientId: tenant.clientId };
    for (const from of ['+12025550140', '+12025550143', '+12025550199', 'nope']) {
      const error = await refusal(sender(client, from));
      assert.equal(error.statusCode, 400, from);
      assert.equal(error.code, 'validation_error');
      assert.equal((error.details as any).fields[0].field, 'from');
    }
  });

  test("chooseSender: without from, the client's first number", async () => {
    assert.equal(
      (await sender({ orgId: tenant.orgId, clientId: tenant.clientId })).id,
      numbers.clientFirst.id,
    );
    assert.equal(
      (await sender({ orgId: tenant.orgId, clientId: tenant.houseClientId })).id,
      numbers.house.id,
    );
  });

  test("chooseSender: without from, a client with no number sends from the house client's first", async () => {
    const { client } = await adminCall(t.app, 'POST', `/orgs/${tenant.orgId}/clients`, { name: 'No number' });
    const scope = { orgId: tenant.orgId, clientId: client.id };
    assert.equal((await sender(scope)).id, numbers.house.id);
    // The fallback is for the default only: the house number is not the client's to name.
    assert.equal((await refusal(sender(scope, '+12025550140'))).statusCode, 400);
  });

  test('chooseSender: with no number anywhere, 422 no_sender_number naming the admin call', async () => {
    await adminCall(t.app, 'DELETE', `/numbers/${numbers.otherOrg.id}`);
    for (const clientId of [other.clientId, other.houseClientId]) {
      const error = await refusal(sender({ orgId: other.orgId, clientId }));
      assert.equal(error.statusCode, 422);
      assert.equal(error.code, 'no_sender_number');
      assert.match(error.message, new RegExp(`POST /admin/v1/orgs/${other.orgId}/numbers`));
    }
  });
});
