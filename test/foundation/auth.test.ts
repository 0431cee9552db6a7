import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { adminCall, buildTestApp, createTenant, type TestApp, type TestTenant } from '../helpers.ts';

describe('authentication and tenancy', () => {
  let t: TestApp;
  let tenant: TestTenant;
  let other: TestTenant;

  before(async () => {
    t = await buildTestApp();
    tenant = await createTenant(t.app);
    other = await createTenant(t.app);
  });
  after(() => t.close());

  const me = (headers: Record<string, string>) => t.app.inject({ method: 'GET', url: '/v1/me', headers });

  test('a missing, malformed, unknown or revoked key is 401 unauthorized with WWW-Authenticate', async () => {
    const revoked = await adminCall(t.app, 'POST', `/orgs/${tenant.orgId}/keys`, {
      name: 'soon revoked',
      kind: 'agency',
    });
    assert.equal((await me({ authorization: `Bearer ${revoked.key}` })).statusCode, 200);
    await adminCall(t.app, 'DELETE', `/keys/${revoked.api_key.id}`);

    const cases: Record<string, Record<string, string>> = {
      missing: {},
      'not bearer': { authorization: `Basic ${tenant.agencyKey}` },
      'empty bearer': { authorization: 'Bearer ' },
      malformed: { authorization: 'Bearer not-a-key' },
      unknown: { authorization: `Bearer gc_live_${'A'.repeat(43)}` },
      revoked: { authorization: `Bearer ${revoked.key}` },
    };
    for (const [name, headers] of Object.entries(cases)) {
      const response = await me(headers);
      assert.equal(response.statusCode, 401, name);
      assert.equal(response.json().error, 'unauthorized', name);
      assert.equal(typeof response.json().message, 'string');
      assert.match(String(response.headers['www-authenticate']), /^Bearer/, name);
    }
  });

  test('an expired key is 401 key_expired', async () => {
    const expiresAt = new Date(Date.now() + 1500).toISOString();
    const key = await adminCall(t.app, 'POST', `/orgs/${tenant.orgId}/keys`, {
      name: 'short',
      kind: 'agency',
      expires_at: expiresAt,
    });
    assert.equal((await me({ authorization: `Bearer ${key.key}` })).statusCode, 200);
    await new Promise((resolve) => setTimeout(resolve, 1700));
    const response = await me({ authorization: `Bearer ${key.key}` });
    assert.equal(response.statusCode, 401);
    assert.equal(response.json().error, 'key_expired');
    assert.match(String(response.headers['www-authenticate']), /^Bearer/);
  });

  test('GET /me for an agency key acting as itself', async () => {
    const response = await me(tenant.agency);
    assert.equal(response.statusCode, 200);
    const body = response.json();
    assert.deepEqual(Object.keys(body).sort(), ['api_key', 'tenant']);
    assert.deepEqual(Object.keys(body.api_key).sort(), [
      'expires_at',
      'id',
      'kind',
      'name',
      'prefix',
      'rate_limit_per_minute',
      'tag',
    ]);
    assert.equal(body.api_key.kind, 'agency');
    assert.equal(body.api_key.prefix, 'gc_live_');
    assert.deepEqual(body.tenant, { org_id: tenant.orgId, client_id: null, is_client_scoped: false });
  });

  test('GET /me for a client key', async () => {
    const body = (await me(tenant.client)).json();
    assert.equal(body.api_key.kind, 'client');
    assert.equal(body.api_key.prefix, 'cl_live_');
    assert.deepEqual(body.tenant, {
      org_id: tenant.orgId,
      client_id: tenant.clientId,
      is_client_scoped: true,
    });
  });

  test('GET /me for an agency key acting as a client through X-Service-Client-Id', async () => {
    const body = (await me(tenant.agencyAsClient)).json();
    assert.equal(body.api_key.kind, 'agency');
    assert.deepEqual(body.tenant, {
      org_id: tenant.orgId,
      client_id: tenant.clientId,
      is_client_scoped: true,
    });
  });

  test('GET /me for a legacy SMS key, with its fields as minted', async () => {
    const expiresAt = new Date(Date.now() + 86_400_000).toISOString();
    const legacy = await adminCall(t.app, 'POST', `/orgs/${tenant.orgId}/keys`, {
      name: 'old sms',
      kind: 'legacy_sms',
      rate_limit_per_minute: 30,
      expires_at: expiresAt,
      tag: 'migration',
    });
    const body = (await me({ authorization: `Bearer ${legacy.key}` })).json();
    assert.equal(body.api_key.kind, 'legacy_sms');
    assert.equal(body.api_key.rate_limit_per_minute, 30);
    assert.equal(body.api_key.expires_at, expiresAt);
    assert.equal(body.api_key.tag, 'migration');
    assert.equal(body.api_key.prefix, 'sms_live_');
    assert.ok(legacy.key.startsWith('sms_live_'));
    assert.deepEqual(body.tenant, { org_id: tenant.orgId, client_id: null, is_client_scoped: false });
  });

  test('a legacy SMS key is 403 forbidden outside /me and /sms', async () => {
    const legacy = await adminCall(t.app, 'POST', `/orgs/${tenant.orgId}/keys`, {
      name: 'old sms',
      kind: 'legacy_sms',
    });
    const response = await t.app.inject({
      method: 'GET',
      url: '/v1/events',
      headers: { authorization: `Bearer ${legacy.key}` },
    });
    assert.equal(response.statusCode, 403);
    assert.equal(response.json().error, 'forbidden');
  });

  test('X-Service-Client-Id rules', async () => {
    const notUuid = await me({ ...tenant.agency, 'x-service-client-id': 'abc' });
    assert.equal(notUuid.statusCode, 400);
    assert.equal(notUuid.json().error, 'invalid_request');

    const otherOrgsClient = await me({ ...tenant.agency, 'x-service-client-id': other.clientId });
    assert.equal(otherOrgsClient.statusCode, 404);
    assert.equal(otherOrgsClient.json().error, 'not_found');

    const unknown = await me({
      ...tenant.agency,
      'x-service-client-id': '00000000-0000-7000-8000-000000000000',
    });
    assert.equal(unknown.statusCode, 404);

    const fromClientKey = await me({ ...tenant.client, 'x-service-client-id': tenant.clientId });
    assert.equal(fromClientKey.statusCode, 400);
    assert.equal(fromClientKey.json().error, 'invalid_request');

    const house = await me({ ...tenant.agency, 'x-service-client-id': tenant.houseClientId });
    assert.equal(house.statusCode, 200);
    assert.equal(house.json().tenant.client_id, tenant.houseClientId);
  });

  test('a revoked key is refused at once, even after it was cached', async () => {
    const key = await adminCall(t.app, 'POST', `/orgs/${tenant.orgId}/keys`, {
      name: 'cached',
      kind: 'agency',
    });
    const headers = { authorization: `Bearer ${key.key}` };
    assert.equal((await me(headers)).statusCode, 200);
    assert.equal((await me(headers)).statusCode, 200);
    await adminCall(t.app, 'DELETE', `/keys/${key.api_key.id}`);
    assert.equal((await me(headers)).statusCode, 401);
  });

  test('a revocation through another process reaches this one through NOTIFY', async () => {
    const key = await adminCall(t.app, 'POST', `/orgs/${tenant.orgId}/keys`, {
      name: 'elsewhere',
      kind: 'agency',
    });
    const headers = { authorization: `Bearer ${key.key}` };
    assert.equal((await me(headers)).statusCode, 200);
    // What the admin API of another process does: revoke in the database and notify.
    await t.database.pool.query('UPDATE api_keys SET revoked_at = now() WHERE id = $1', [key.api_key.id]);
    await t.database.pool.query("SELECT pg_notify('api_keys_changed', $1)", [key.api_key.id]);
    const deadline = Date.now() + 2000;
    let status = 200;
    while (Date.now() < deadline && status === 200) {
      status = (await me(headers)).statusCode;
      if (status === 200) await new Promise((resolve) => setTimeout(resolve, 20));
    }
    assert.equal(status, 401);
  });

  test('the stored key is a digest: no cleartext in the table', async () => {
    const { rows } = await t.database.pool.query('SELECT secret_hash, prefix, last4 FROM api_keys');
    const all = JSON.stringify(rows);
    assert.ok(!all.includes(tenant.agencyKey));
    assert.ok(!all.includes(tenant.agencyKey.slice(8)));
    assert.ok(rows.some((row) => row.last4 === tenant.agencyKey.slice(-4)));
  });
});
