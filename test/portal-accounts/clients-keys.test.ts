import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { listAudit } from '../../src/modules/audit/service.ts';
import { adminCall, buildTestApp, createTenant, type TestApp, type TestTenant } from '../helpers.ts';

describe('REST parity: /v1/clients and /v1/api-keys, and the audit log of every change', () => {
  let t: TestApp;
  let tenant: TestTenant;
  let other: TestTenant;
  before(async () => {
    t = await buildTestApp();
    tenant = await createTenant(t.app);
    other = await createTenant(t.app);
  });
  after(() => t.close());

  const call = (headers: Record<string, string>, method: string, url: string, payload?: object) =>
    t.app.inject({ method: method as 'GET', url: `/v1${url}`, headers, ...(payload ? { payload } : {}) });
  const audit = (filters: Record<string, string>) =>
    listAudit(t.platform.db, tenant.orgId, { limit: 50 }, filters);

  test('a client key is refused with 403 agency_key_required on every route', async () => {
    const id = tenant.clientId;
    for (const [method, url, body] of [
      ['GET', '/clients'],
      ['POST', '/clients', { name: 'x' }],
      ['GET', `/clients/${id}`],
      ['PATCH', `/clients/${id}`, { name: 'x' }],
      ['GET', '/api-keys'],
      ['POST', '/api-keys', { name: 'x', kind: 'agency' }],
      ['DELETE', `/api-keys/${id}`],
    ] as const) {
      const response = await call(tenant.client, method, url, body);
      assert.equal(response.statusCode, 403, `${method} ${url}`);
      assert.equal(response.json().error, 'agency_key_required');
    }
  });

  test('clients: create (idempotent), read, list with search, rename; another org’s client is 404', async () => {
    const headers = { ...tenant.agency, 'idempotency-key': 'new-client-1' };
    const created = await call(headers, 'POST', '/clients', { name: 'Northwind Bakery' });
    assert.equal(created.statusCode, 201, created.body);
    const { client } = created.json();
    assert.equal(client.name, 'Northwind Bakery');
    assert.equal(client.org_id, tenant.orgId);
    assert.equal(client.is_house, false);
    const replay = await call(headers, 'POST', '/clients', { name: 'Northwind Bakery' });
    assert.equal(replay.headers['idempotent-replayed'], 'true');
    assert.equal(replay.json().client.id, client.id);

    assert.deepEqual((await call(tenant.agency, 'GET', `/clients/${client.id}`)).json(), { client });
    const found = (await call(tenant.agency, 'GET', '/clients?q=northWIND')).json();
    assert.deepEqual(
      found.data.map((c: { id: string }) => c.id),
      [client.id],
    );
    const all = (await call(tenant.agency, 'GET', '/clients?limit=200')).json();
    assert.ok(all.data.some((c: { is_house: boolean }) => c.is_house));

    const renamed = await call(tenant.agency, 'PATCH', `/clients/${client.id}`, {
      name: 'Northwind Bakery & Co',
    });
    assert.equal(renamed.statusCode, 200);
    assert.equal(renamed.json().client.name, 'Northwind Bakery & Co');
    assert.equal((await call(tenant.agency, 'PATCH', `/clients/${client.id}`, { name: '' })).statusCode, 400);

    assert.equal((await call(other.agency, 'GET', `/clients/${client.id}`)).statusCode, 404);
    assert.equal(
      (await call(other.agency, 'PATCH', `/clients/${client.id}`, { name: 'Mine' })).statusCode,
      404,
    );
    assert.ok(
      !(await call(other.agency, 'GET', '/clients?limit=200'))
        .json()
        .data.some((c: { id: string }) => c.id === client.id),
    );

    const entries = await audit({ record_id: client.id });
    assert.deepEqual(
      entries.map((entry) => [entry.action, entry.actor.type, entry.actor.id]),
      [
        ['client.updated', 'api_key', (await me(tenant.agency)).id],
        ['client.created', 'api_key', (await me(tenant.agency)).id],
      ],
    );
    assert.deepEqual(entries[0].details, { name: { from: 'Northwind Bakery', to: 'Northwind Bakery & Co' } });
  });

  const me = async (headers: Record<string, string>) => (await call(headers, 'GET', '/me')).json().api_key;

  test('api keys: mint a client key, it acts as its client; revoke it, it answers 401 at once', async () => {
    const headers = { ...tenant.agency, 'idempotency-key': 'mint-1' };
    const body = { name: 'Zapier', kind: 'client', client_id: tenant.clientId, rate_limit_per_minute: 120 };
    const minted = await call(headers, 'POST', '/api-keys', body);
    assert.equal(minted.statusCode, 201, minted.body);
    const { api_key, key } = minted.json();
    assert.match(key, /^cl_live_/);
    assert.equal(api_key.client_id, tenant.clientId);
    assert.equal(api_key.last4, key.slice(-4));
    const replay = await call(headers, 'POST', '/api-keys', body);
    assert.equal(replay.json().key, key);
    // The replayable answer is stored without the key in the clear.
    const stored = await sql<{
      body: string;
    }>`SELECT response_body::text AS body FROM idempotency_keys WHERE key = 'mint-1'`.execute(t.platform.db);
    assert.ok(!stored.rows[0].body.includes(key));

    const asClient = { authorization: `Bearer ${key}` };
    const identity = (await call(asClient, 'GET', '/me')).json();
    assert.equal(identity.tenant.client_id, tenant.clientId);
    assert.equal(identity.api_key.kind, 'client');

    const listed = (await call(tenant.agency, 'GET', `/api-keys?client_id=${tenant.clientId}`)).json();
    assert.ok(listed.data.some((k: { id: string }) => k.id === api_key.id));
    assert.ok(listed.data.every((k: { client_id: string }) => k.client_id === tenant.clientId));

    assert.equal((await call(other.agency, 'DELETE', `/api-keys/${api_key.id}`)).statusCode, 404);
    assert.equal((await call(asClient, 'GET', '/me')).statusCode, 200);
    const revoked = await call(tenant.agency, 'DELETE', `/api-keys/${api_key.id}`);
    assert.equal(revoked.statusCode, 204);
    const refused = await call(asClient, 'GET', '/me');
    assert.equal(refused.statusCode, 401);
    const after = (await call(tenant.agency, 'GET', '/api-keys?limit=200')).json();
    assert.ok(!after.data.some((k: { id: string }) => k.id === api_key.id));

    const entries = await audit({ record_id: api_key.id });
    assert.deepEqual(
      entries.map((entry) => entry.action),
      ['api_key.revoked', 'api_key.created'],
    );
    assert.equal(JSON.stringify(entries).includes(key), false);
  });

  test('api keys: agency keys too; a client of another org, or a legacy SMS kind, is refused', async () => {
    const minted = await call(tenant.agency, 'POST', '/api-keys', { name: 'CI', kind: 'agency' });
    assert.equal(minted.statusCode, 201);
    assert.match(minted.json().key, /^gc_live_/);
    const foreign = await call(tenant.agency, 'POST', '/api-keys', {
      name: 'x',
      kind: 'client',
      client_id: other.clientId,
    });
    assert.equal(foreign.statusCode, 404);
    assert.equal(
      (await call(tenant.agency, 'POST', '/api-keys', { name: 'x', kind: 'legacy_sms' })).statusCode,
      400,
    );
    assert.equal(
      (await call(tenant.agency, 'POST', '/api-keys', { name: 'x', kind: 'client' })).statusCode,
      400,
    );
  });

  test('the admin API records the operator; webhook changes record the key', async () => {
    const { client } = await adminCall(t.app, 'POST', `/orgs/${tenant.orgId}/clients`, {
      name: 'Operator-made',
    });
    const [created] = await audit({ record_id: client.id });
    assert.equal(created.action, 'client.created');
    assert.deepEqual(created.actor, { type: 'operator', id: null, label: 'operator' });
    assert.ok(created.ip);
    const { api_key } = await adminCall(t.app, 'POST', `/orgs/${tenant.orgId}/keys`, {
      name: 'op',
      kind: 'agency',
    });
    await adminCall(t.app, 'DELETE', `/keys/${api_key.id}`);
    assert.deepEqual(
      (await audit({ record_id: api_key.id })).map((entry) => [entry.action, entry.actor.type]),
      [
        ['api_key.revoked', 'operator'],
        ['api_key.created', 'operator'],
      ],
    );

    const made = await call(tenant.agency, 'POST', '/webhooks', {
      url: 'https://example.com/hook',
      events: ['*'],
    });
    assert.equal(made.statusCode, 201, made.body);
    const id = made.json().webhook.id;
    await call(tenant.agency, 'PATCH', `/webhooks/${id}`, { description: 'CRM sync' });
    await call(tenant.agency, 'PATCH', `/webhooks/${id}`, { rotate_secret: true });
    await call(tenant.agency, 'PATCH', `/webhooks/${id}`, { active: false });
    await call(tenant.agency, 'PATCH', `/webhooks/${id}`, { active: true });
    assert.equal((await call(tenant.agency, 'DELETE', `/webhooks/${id}`)).statusCode, 204);
    const entries = await audit({ record_type: 'webhook', record_id: id });
    assert.deepEqual(
      entries.map((entry) => entry.action),
      [
        'webhook.deleted',
        'webhook.enabled',
        'webhook.disabled',
        'webhook.secret_rotated',
        'webhook.updated',
        'webhook.created',
      ],
    );
    const agencyKeyId = (await me(tenant.agency)).id;
    assert.ok(entries.every((entry) => entry.actor.type === 'api_key' && entry.actor.id === agencyKeyId));
    assert.deepEqual(entries[4].details, { fields: ['description'] });
  });
});
