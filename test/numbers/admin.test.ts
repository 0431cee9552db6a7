import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  ADMIN_TOKEN,
  adminCall,
  buildTestApp,
  createTenant,
  type TestApp,
  type TestTenant,
} from '../helpers.ts';

const UNKNOWN = '00000000-0000-7000-8000-000000000000';

describe('admin API: phone numbers', () => {
  let t: TestApp;
  let tenant: TestTenant;

  const call = (method: 'GET' | 'POST' | 'DELETE', url: string, payload?: object) =>
    t.app.inject({
      method,
      url: `/admin/v1${url}`,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      ...(payload ? { payload } : {}),
    });
  const addNumber = (orgId: string, payload: object) => call('POST', `/orgs/${orgId}/numbers`, payload);

  before(async () => {
    t = await buildTestApp();
    tenant = await createTenant(t.app);
  });
  after(() => t.close());

  test('POST /orgs/{orgId}/numbers gives the house client a number by default, normalised to E.164', async () => {
    const response = await addNumber(tenant.orgId, { number: '+1 (202) 555-0110' });
    assert.equal(response.statusCode, 201, response.body);
    const { number } = response.json();
    assert.deepEqual(Object.keys(number).sort(), [
      'agent_id',
      'client_id',
      'created_at',
      'id',
      'label',
      'number',
      'org_id',
    ]);
    assert.equal(number.number, '+12025550110');
    assert.equal(number.org_id, tenant.orgId);
    assert.equal(number.client_id, tenant.houseClientId);
    assert.equal(number.label, null);
    assert.match(number.created_at, /Z$/);
  });

  test('a number given without a country code is read in PHONE_DEFAULT_COUNTRY; client_id and label are kept', async () => {
    const response = await addNumber(tenant.orgId, {
      number: '(202) 555-0111',
      client_id: tenant.clientId,
      label: 'Support line',
    });
    assert.equal(response.statusCode, 201, response.body);
    const { number } = response.json();
    assert.equal(number.number, '+12025550111');
    assert.equal(number.client_id, tenant.clientId);
    assert.equal(number.label, 'Support line');
  });

  test('a number any org holds is 409 number_taken, however it is written', async () => {
    await adminCall(t.app, 'POST', `/orgs/${tenant.orgId}/numbers`, { number: '+12025550112' });
    const other = await createTenant(t.app);
    for (const [orgId, written] of [
      [tenant.orgId, '+12025550112'],
      [other.orgId, '+1 202-555-0112'],
    ]) {
      const response = await addNumber(orgId, { number: written });
      assert.equal(response.statusCode, 409);
      assert.equal(response.json().error, 'number_taken');
      assert.deepEqual(response.json().details, { number: '+12025550112' });
    }
  });

  test('an invalid number is 400 validation_error naming number, and nothing is written', async () => {
    for (const number of ['12345', '+1555', 'not a number', '+12025550113 ext. 12']) {
      const response = await addNumber(tenant.orgId, { number });
      assert.equal(response.statusCode, 400, number);
      assert.equal(response.json().error, 'validation_error');
      assert.equal(response.json().details.fields[0].field, 'number');
    }
    assert.equal((await addNumber(tenant.orgId, {})).statusCode, 400);
    assert.equal(
      (await addNumber(tenant.orgId, { number: '+12025550113', agent_id: UNKNOWN })).statusCode,
      400,
    );
    const { rows } = await t.database.pool.query('SELECT 1 FROM phone_numbers WHERE number = $1', [
      '+12025550113',
    ]);
    assert.equal(rows.length, 0);
  });

  test('a client of another org, an unknown client or an unknown org is 404', async () => {
    const other = await createTenant(t.app);
    const foreign = await addNumber(tenant.orgId, { number: '+12025550114', client_id: other.clientId });
    assert.equal(foreign.statusCode, 404);
    assert.equal(foreign.json().error, 'not_found');
    assert.equal(
      (await addNumber(tenant.orgId, { number: '+12025550114', client_id: UNKNOWN })).statusCode,
      404,
    );
    assert.equal((await addNumber(UNKNOWN, { number: '+12025550114' })).statusCode, 404);
    assert.equal((await call('GET', `/orgs/${UNKNOWN}/numbers`)).statusCode, 404);
  });

  test("agent_id names the agent that answers the number: an agent of the number's own client, else 400", async () => {
    const agentOf = async (headers: Record<string, string>, slug: string) => {
      const response = await t.app.inject({
        method: 'POST',
        url: '/v1/agents',
        headers,
        payload: { name: slug, slug, kind: 'inbound_voice' },
      });
      return response.json().agent.id as string;
    };
    const clientAgent = await agentOf(tenant.client, 'numbers-client-desk');
    const houseAgent = await agentOf(tenant.agency, 'numbers-house-desk');
    const other = await createTenant(t.app);
    const foreignAgent = await agentOf(other.client, 'numbers-foreign-desk');

    const assigned = await addNumber(tenant.orgId, {
      number: '+12025550115',
      client_id: tenant.clientId,
      agent_id: clientAgent,
    });
    assert.equal(assigned.statusCode, 201, assigned.body);
    assert.equal(assigned.json().number.agent_id, clientAgent);
    const listed = await call('GET', `/orgs/${tenant.orgId}/numbers?limit=200`);
    assert.equal(
      listed.json().data.find((n: { number: string }) => n.number === '+12025550115').agent_id,
      clientAgent,
    );

    for (const [clientId, agentId] of [
      [tenant.clientId, houseAgent],
      [undefined, clientAgent],
      [tenant.clientId, foreignAgent],
      [tenant.clientId, UNKNOWN],
    ]) {
      const refused = await addNumber(tenant.orgId, {
        number: '+12025550116',
        client_id: clientId,
        agent_id: agentId,
      });
      assert.equal(refused.statusCode, 400, `${clientId} ${agentId}`);
      assert.equal(refused.json().details.fields[0].field, 'agent_id');
    }
    const house = await addNumber(tenant.orgId, { number: '+12025550116', agent_id: houseAgent });
    assert.equal(house.statusCode, 201, 'the house client takes its own agent');
  });

  test("GET /orgs/{orgId}/numbers lists every client's numbers of that org only, oldest first, paginated", async () => {
    const org = await createTenant(t.app);
    const added = [];
    for (const [number, clientId] of [
      ['+12025550120', org.houseClientId],
      ['+12025550121', org.clientId],
      ['+12025550122', org.clientId],
    ]) {
      added.push(
        (await adminCall(t.app, 'POST', `/orgs/${org.orgId}/numbers`, { number, client_id: clientId }))
          .number,
      );
    }
    const all = (await call('GET', `/orgs/${org.orgId}/numbers`)).json();
    assert.deepEqual(all, { data: added, next_page_token: null, limit: 50 });

    const first = (await call('GET', `/orgs/${org.orgId}/numbers?limit=2`)).json();
    assert.deepEqual(first.data, added.slice(0, 2));
    const rest = (
      await call('GET', `/orgs/${org.orgId}/numbers?limit=2&page_token=${first.next_page_token}`)
    ).json();
    assert.deepEqual(rest.data, added.slice(2));
    assert.equal(rest.next_page_token, null);
  });

  test('DELETE /numbers/{numberId} is 204, then 404; the number can be registered again', async () => {
    const { number } = await adminCall(t.app, 'POST', `/orgs/${tenant.orgId}/numbers`, {
      number: '+12025550130',
    });
    assert.equal((await call('DELETE', `/numbers/${number.id}`)).statusCode, 204);
    const again = await call('DELETE', `/numbers/${number.id}`);
    assert.equal(again.statusCode, 404);
    assert.equal(again.json().error, 'not_found');
    assert.equal((await call('DELETE', `/numbers/${UNKNOWN}`)).statusCode, 404);
    const other = await createTenant(t.app);
    assert.equal((await addNumber(other.orgId, { number: '+12025550130' })).statusCode, 201);
  });

  test('the numbers admin API needs the admin token', async () => {
    const response = await t.app.inject({
      method: 'GET',
      url: `/admin/v1/orgs/${tenant.orgId}/numbers`,
      headers: { authorization: `Bearer ${tenant.agencyKey}` },
    });
    assert.equal(response.statusCode, 401);
  });
});
