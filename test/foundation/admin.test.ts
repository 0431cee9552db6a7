import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ADMIN_TOKEN, buildTestApp, type TestApp } from '../helpers.ts';

describe('admin API', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp();
  });
  after(() => t.close());

  const call = (method: string, url: string, payload?: object, token = ADMIN_TOKEN) =>
    t.app.inject({
      method: method as 'GET',
      url: `/admin/v1${url}`,
      headers: { authorization: `Bearer ${token}` },
      ...(payload ? { payload } : {}),
    });

  test('a wrong or missing admin token is 401', async () => {
    assert.equal((await call('POST', '/orgs', { name: 'x' }, 'wrong')).statusCode, 401);
    const missing = await t.app.inject({ method: 'POST', url: '/admin/v1/orgs', payload: { name: 'x' } });
    assert.equal(missing.statusCode, 401);
    assert.equal(missing.json().error, 'unauthorized');
  });

  test('orgs: create with a house client, read, rename, flip features', async () => {
    const created = await call('POST', '/orgs', { name: 'Acme Agency' });
    assert.equal(created.statusCode, 201);
    const { org } = created.json();
    assert.deepEqual(Object.keys(org).sort(), ['features', 'house_client_id', 'id', 'name', 'timezone']);
    assert.equal(org.timezone, null);
    assert.equal(org.name, 'Acme Agency');
    assert.deepEqual(org.features, { sdr_outbound: false });

    const read = await call('GET', `/orgs/${org.id}`);
    assert.deepEqual(read.json(), { org });

    const patched = await call('PATCH', `/orgs/${org.id}`, {
      name: 'Acme',
      features: { sdr_outbound: true },
    });
    assert.equal(patched.statusCode, 200);
    assert.deepEqual(patched.json().org, { ...org, name: 'Acme', features: { sdr_outbound: true } });

    assert.equal((await call('GET', '/orgs/00000000-0000-7000-8000-000000000000')).statusCode, 404);
    assert.equal((await call('GET', '/orgs/not-a-uuid')).statusCode, 400);
    assert.equal((await call('POST', '/orgs', {})).statusCode, 400);
    assert.equal((await call('PATCH', `/orgs/${org.id}`, { features: { other: true } })).statusCode, 400);
  });

  test('orgs: an IANA time zone is set, read and cleared; anything else is 400 naming timezone', async () => {
    const { org } = (await call('POST', '/orgs', { name: 'Zoned Agency' })).json();
    const zoned = await call('PATCH', `/orgs/${org.id}`, { timezone: 'America/New_York' });
    assert.equal(zoned.statusCode, 200, zoned.body);
    assert.equal(zoned.json().org.timezone, 'America/New_York');
    assert.equal((await call('GET', `/orgs/${org.id}`)).json().org.timezone, 'America/New_York');
    assert.equal(
      (await call('PATCH', `/orgs/${org.id}`, { name: 'Renamed' })).json().org.timezone,
      'America/New_York',
      'kept when not given',
    );
    for (const timezone of ['Mars/Olympus_Mons', 'EST', 'america/new_york', '+02:00', 'not a zone']) {
      const refused = await call('PATCH', `/orgs/${org.id}`, { timezone });
      assert.equal(refused.statusCode, 400, timezone);
      assert.equal(refused.json().details.fields[0].field, 'timezone');
    }
    assert.equal((await call('GET', `/orgs/${org.id}`)).json().org.timezone, 'America/New_York');
    const cleared = await call('PATCH', `/orgs/${org.id}`, { timezone: null });
    assert.equal(cleared.json().org.timezone, null);
  });

  test('clients and keys', async () => {
    const { org } = (await call('POST', '/orgs', { name: 'Keys Agency' })).json();
    const clientResponse = await call('POST', `/orgs/${org.id}/clients`, { name: 'Bakery' });
    assert.equal(clientResponse.statusCode, 201);
    const { client } = clientResponse.json();
    assert.deepEqual(client, { id: client.id, org_id: org.id, name: 'Bakery' });

    const agency = await call('POST', `/orgs/${org.id}/keys`, { name: 'main', kind: 'agency', tag: 'ops' });
    assert.equal(agency.statusCode, 201);
    assert.match(agency.json().key, /^gc_live_[A-Za-z0-9_-]{43}$/);
    assert.deepEqual(agency.json().api_key, {
      id: agency.json().api_key.id,
      name: 'main',
      prefix: 'gc_live_',
      kind: 'agency',
      rate_limit_per_minute: 60,
      expires_at: null,
      tag: 'ops',
    });

    const clientKey = await call('POST', `/orgs/${org.id}/keys`, {
      name: 'c',
      kind: 'client',
      client_id: client.id,
    });
    assert.equal(clientKey.statusCode, 201);
    assert.match(clientKey.json().key, /^cl_live_/);

    const missingClient = await call('POST', `/orgs/${org.id}/keys`, { name: 'c', kind: 'client' });
    assert.equal(missingClient.statusCode, 400);
    const clientOnAgency = await call('POST', `/orgs/${org.id}/keys`, {
      name: 'a',
      kind: 'agency',
      client_id: client.id,
    });
    assert.equal(clientOnAgency.statusCode, 400);
    const { org: otherOrg } = (await call('POST', '/orgs', { name: 'Other' })).json();
    const foreignClient = await call('POST', `/orgs/${otherOrg.id}/keys`, {
      name: 'c',
      kind: 'client',
      client_id: client.id,
    });
    assert.equal(foreignClient.statusCode, 404);
    const badKind = await call('POST', `/orgs/${org.id}/keys`, { name: 'x', kind: 'root' });
    assert.equal(badKind.statusCode, 400);
    const past = await call('POST', `/orgs/${org.id}/keys`, {
      name: 'x',
      kind: 'agency',
      expires_at: '2001-01-01T00:00:00Z',
    });
    assert.equal(past.statusCode, 400);

    const key = agency.json().key;
    assert.equal(
      (await t.app.inject({ method: 'GET', url: '/v1/me', headers: { authorization: `Bearer ${key}` } }))
        .statusCode,
      200,
    );
    assert.equal((await call('DELETE', `/keys/${agency.json().api_key.id}`)).statusCode, 204);
    assert.equal(
      (await t.app.inject({ method: 'GET', url: '/v1/me', headers: { authorization: `Bearer ${key}` } }))
        .statusCode,
      401,
    );
    assert.equal((await call('DELETE', '/keys/00000000-0000-7000-8000-000000000000')).statusCode, 404);
  });

  test('FUEL grants append to the ledger and never go below zero', async () => {
    const { org } = (await call('POST', '/orgs', { name: 'Fuel Agency' })).json();
    const grant = await call('POST', `/orgs/${org.id}/fuel`, { amount: 100, reason: 'welcome' });
    assert.equal(grant.statusCode, 200);
    assert.deepEqual(grant.json(), { fuel: { balance: 100 } });
    assert.deepEqual((await call('POST', `/orgs/${org.id}/fuel`, { amount: -40 })).json(), {
      fuel: { balance: 60 },
    });
    const over = await call('POST', `/orgs/${org.id}/fuel`, { amount: -61 });
    assert.equal(over.statusCode, 402);
    assert.equal(over.json().error, 'fuel_exhausted');
    assert.equal((await call('POST', `/orgs/${org.id}/fuel`, { amount: 0 })).statusCode, 400);
    assert.equal((await call('POST', `/orgs/${org.id}/fuel`, { amount: 1.5 })).statusCode, 400);
    const { rows } = await t.database.pool.query(
      'SELECT amount, balance_after FROM fuel_ledger WHERE org_id = $1 ORDER BY created_at',
      [org.id],
    );
    assert.deepEqual(rows, [
      { amount: 100, balance_after: 100 },
      { amount: -40, balance_after: 60 },
    ]);
  });
});
