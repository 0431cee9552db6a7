import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { sealSecret } from '../../src/modules/webhooks/signing.ts';
import { newId } from '../../src/platform/db/ids.ts';
import {
  adminCall,
  buildTestApp,
  createTenant,
  eventually,
  sleep,
  type TestApp,
  type TestTenant,
} from '../helpers.ts';
import { createWebhook, deliveryLog, emitEvent, startReceiver } from './receiver.ts';

const URL = 'https://hooks.example.com/agency';

describe('webhook subscriptions (private addresses not allowed)', () => {
  let t: TestApp;
  let tenant: TestTenant;
  let other: TestTenant;

  before(async () => {
    t = await buildTestApp();
    tenant = await createTenant(t.app);
    other = await createTenant(t.app);
  });
  after(() => t.close());

  const call = (method: string, url: string, headers: Record<string, string>, payload?: unknown) =>
    t.app.inject({
      method: method as 'GET',
      url,
      headers,
      ...(payload === undefined ? {} : { payload: payload as object }),
    });

  test('POST /v1/webhooks returns the subscription, the secret once and the signing header', async () => {
    const response = await call('POST', '/v1/webhooks', tenant.agency, {
      url: URL,
      events: ['contact.created', 'deal.stage_changed'],
      description: 'CRM sync',
    });
    assert.equal(response.statusCode, 201);
    const body = response.json();
    assert.deepEqual(Object.keys(body).sort(), ['secret', 'signing_header', 'webhook']);
    assert.equal(body.signing_header, 'X-Service-Signature');
    assert.match(body.secret, /^whsec_[A-Za-z0-9_-]{43,}$/);
    assert.ok(Buffer.from(body.secret.slice(6), 'base64url').length >= 32);
    const { webhook } = body;
    assert.deepEqual(Object.keys(webhook).sort(), [
      'active',
      'client_id',
      'consecutive_failures',
      'created_at',
      'description',
      'disabled_at',
      'events',
      'id',
      'secret_last4',
      'updated_at',
      'url',
    ]);
    assert.equal(webhook.url, URL);
    assert.deepEqual(webhook.events, ['contact.created', 'deal.stage_changed']);
    assert.equal(webhook.active, true);
    assert.equal(webhook.description, 'CRM sync');
    assert.equal(webhook.client_id, null, 'an agency key acting as itself makes an agency-wide subscription');
    assert.equal(webhook.secret_last4, body.secret.slice(-4));
    assert.equal(webhook.consecutive_failures, 0);
    assert.equal(webhook.disabled_at, null);

    const read = await call('GET', `/v1/webhooks/${webhook.id}`, tenant.agency);
    assert.equal(read.statusCode, 200);
    assert.deepEqual(read.json(), { webhook });
    assert.ok(!read.body.includes(body.secret), 'the secret is never returned again');
    const list = await call('GET', '/v1/webhooks', tenant.agency);
    assert.ok(!list.body.includes(body.secret));
  });

  test('the secret is stored encrypted: no table holds it in plaintext, even an idempotent replay record', async () => {
    const headers = { ...tenant.agency, 'idempotency-key': `create-${newId()}` };
    const first = await call('POST', '/v1/webhooks', headers, { url: URL, events: ['*'] });
    assert.equal(first.statusCode, 201);
    const replay = await call('POST', '/v1/webhooks', headers, { url: URL, events: ['*'] });
    assert.equal(replay.statusCode, 201);
    assert.equal(replay.headers['idempotent-replayed'], 'true');
    assert.deepEqual(replay.json(), first.json(), 'the replay shows the same secret');

    const { secret, webhook } = first.json();
    const randomPart = secret.slice(6);
    for (const table of ['webhook_subscriptions', 'idempotency_keys']) {
      const { rows } = await t.database.pool.query(`SELECT * FROM ${table}`);
      const dump = JSON.stringify(rows, (_key, value) =>
        value?.type === 'Buffer' ? Buffer.from(value.data).toString('latin1') : value,
      );
      assert.ok(!dump.includes(randomPart), `${table} holds the secret in plaintext`);
      assert.ok(!dump.includes(Buffer.from(randomPart).toString('hex')), `${table} holds the secret in hex`);
    }
    const { rows } = await t.database.pool.query(
      'SELECT secret_ciphertext, secret_last4 FROM webhook_subscriptions WHERE id = $1',
      [webhook.id],
    );
    assert.equal(rows[0].secret_last4, secret.slice(-4));
    assert.ok(rows[0].secret_ciphertext.length >= 1 + 12 + 16 + secret.length);
  });

  test('PATCH rotate_secret returns a fresh secret once; other fields change in place', async () => {
    const { id, secret } = await createWebhook(t, tenant.agency, { url: URL, events: ['*'] });
    const rotated = await call('PATCH', `/v1/webhooks/${id}`, tenant.agency, {
      rotate_secret: true,
      url: 'https://hooks.example.com/v2',
      events: ['task.completed'],
      description: null,
    });
    assert.equal(rotated.statusCode, 200);
    const body = rotated.json();
    assert.match(body.secret, /^whsec_/);
    assert.notEqual(body.secret, secret);
    assert.equal(body.signing_header, 'X-Service-Signature');
    assert.equal(body.webhook.secret_last4, body.secret.slice(-4));
    assert.equal(body.webhook.url, 'https://hooks.example.com/v2');
    assert.deepEqual(body.webhook.events, ['task.completed']);
    assert.equal(body.webhook.description, null);

    const plain = await call('PATCH', `/v1/webhooks/${id}`, tenant.agency, { description: 'again' });
    assert.equal(plain.statusCode, 200);
    assert.deepEqual(Object.keys(plain.json()), ['webhook']);
    assert.equal(plain.json().webhook.secret_last4, body.secret.slice(-4));
  });

  test('PATCH active=false disables, active=true re-enables and resets the counter', async () => {
    const { id } = await createWebhook(t, tenant.agency, { url: URL, events: ['*'] });
    await t.database.pool.query('UPDATE webhook_subscriptions SET consecutive_failures = 7 WHERE id = $1', [
      id,
    ]);
    const off = (await call('PATCH', `/v1/webhooks/${id}`, tenant.agency, { active: false })).json().webhook;
    assert.equal(off.active, false);
    assert.ok(off.disabled_at);
    const on = (await call('PATCH', `/v1/webhooks/${id}`, tenant.agency, { active: true })).json().webhook;
    assert.equal(on.active, true);
    assert.equal(on.disabled_at, null);
    assert.equal(on.consecutive_failures, 0);
  });

  test('DELETE /v1/webhooks/{id} is 204, then 404', async () => {
    const { id } = await createWebhook(t, tenant.agency, { url: URL, events: ['*'] });
    assert.equal((await call('DELETE', `/v1/webhooks/${id}`, tenant.agency)).statusCode, 204);
    assert.equal((await call('GET', `/v1/webhooks/${id}`, tenant.agency)).statusCode, 404);
    assert.equal((await call('DELETE', `/v1/webhooks/${id}`, tenant.agency)).statusCode, 404);
  });

  test('scope: a client sees its own subscriptions; the agency sees all of its org; other orgs see none', async () => {
    const agencyWide = await createWebhook(t, tenant.agency, { url: URL, events: ['*'] });
    const clientOwn = await createWebhook(t, tenant.client, { url: URL, events: ['*'] });
    assert.equal(clientOwn.webhook.client_id, tenant.clientId);
    const viaHeader = await createWebhook(t, tenant.agencyAsClient, { url: URL, events: ['*'] });
    assert.equal(viaHeader.webhook.client_id, tenant.clientId);

    const ids = async (headers: Record<string, string>) =>
      (await call('GET', '/v1/webhooks?limit=200', headers)).json().data.map((w: any) => w.id);
    const clientSees = await ids(tenant.client);
    assert.ok(clientSees.includes(clientOwn.id) && clientSees.includes(viaHeader.id));
    assert.ok(!clientSees.includes(agencyWide.id), 'a client does not see agency-wide subscriptions');
    const agencySees = await ids(tenant.agency);
    for (const id of [agencyWide.id, clientOwn.id, viaHeader.id]) assert.ok(agencySees.includes(id));
    assert.deepEqual(await ids(other.agency), []);

    assert.equal((await call('GET', `/v1/webhooks/${agencyWide.id}`, tenant.client)).statusCode, 404);
    assert.equal(
      (await call('PATCH', `/v1/webhooks/${agencyWide.id}`, tenant.client, { active: false })).statusCode,
      404,
    );
    assert.equal((await call('DELETE', `/v1/webhooks/${clientOwn.id}`, other.agency)).statusCode, 404);
    assert.equal(
      (await call('GET', `/v1/webhooks/${clientOwn.id}/deliveries`, other.agency)).statusCode,
      404,
    );
    assert.equal((await call('POST', `/v1/webhooks/${clientOwn.id}/test`, other.client)).statusCode, 404);
  });

  test('GET /v1/webhooks pages newest first with page_token', async () => {
    const org = await createTenant(t.app);
    const made: string[] = [];
    for (let i = 0; i < 5; i++)
      made.push((await createWebhook(t, org.agency, { url: URL, events: ['*'] })).id);
    const first = (await call('GET', '/v1/webhooks?limit=3', org.agency)).json();
    assert.deepEqual(
      first.data.map((w: any) => w.id),
      made.slice(-3).reverse(),
    );
    assert.ok(first.next_page_token);
    const second = (
      await call('GET', `/v1/webhooks?limit=3&page_token=${first.next_page_token}`, org.agency)
    ).json();
    assert.deepEqual(
      second.data.map((w: any) => w.id),
      made.slice(0, 2).reverse(),
    );
    assert.equal(second.next_page_token, null);
    const foreign = await call('GET', `/v1/webhooks?page_token=${first.next_page_token}`, tenant.agency);
    assert.equal(foreign.statusCode, 400);
    assert.equal(foreign.json().error, 'invalid_request');
  });

  test('events must be catalog names or * alone; the URL must be https, public and without credentials', async () => {
    const invalid = async (body: unknown, field: string) => {
      const response = await call('POST', '/v1/webhooks', tenant.agency, body);
      assert.equal(response.statusCode, 400, JSON.stringify(body));
      assert.equal(response.json().error, 'validation_error');
      const fields = response.json().details.fields.map((f: any) => f.field);
      assert.ok(fields.includes(field), `${JSON.stringify(body)} → ${JSON.stringify(fields)}`);
    };
    await invalid({ url: URL, events: ['contact.created', 'contact.exploded'] }, 'events.1');
    await invalid({ url: URL, events: ['*', 'contact.created'] }, 'events');
    await invalid({ url: URL, events: [] }, 'events');
    await invalid({ url: URL }, 'events');
    await invalid({ events: ['*'] }, 'url');
    await invalid({ url: 'hooks.example.com/x', events: ['*'] }, 'url');
    await invalid({ url: 'http://hooks.example.com/x', events: ['*'] }, 'url');
    await invalid({ url: 'ftp://hooks.example.com/x', events: ['*'] }, 'url');
    await invalid({ url: 'https://user:pass@hooks.example.com/x', events: ['*'] }, 'url');
    await invalid({ url: 'http://127.0.0.1:8080/hook', events: ['*'] }, 'url');
    for (const host of [
      '127.0.0.1',
      '10.1.2.3',
      '169.254.169.254',
      '[::1]',
      '[::ffff:127.0.0.1]',
      'localhost',
      '2130706433',
    ])
      await invalid({ url: `https://${host}/hook`, events: ['*'] }, 'url');
    await invalid({ url: URL, events: ['*'], secret: 'mine' }, 'secret');
    await invalid({ url: URL, events: ['*'], description: 'x'.repeat(501) }, 'description');

    const { id } = await createWebhook(t, tenant.agency, { url: URL, events: ['*'] });
    const patch = await call('PATCH', `/v1/webhooks/${id}`, tenant.agency, {
      events: ['nope'],
      url: 'https://10.0.0.1/',
    });
    assert.equal(patch.statusCode, 400);
    assert.deepEqual(
      patch
        .json()
        .details.fields.map((f: any) => f.field)
        .sort(),
      ['events.0', 'url'],
    );
  });

  test('bad input on every route is a 400 envelope, never a 500', async () => {
    const { id } = await createWebhook(t, tenant.agency, { url: URL, events: ['*'] });
    const cases: Array<[string, string, unknown?]> = [
      ['GET', '/v1/webhooks/not-a-uuid'],
      ['GET', '/v1/webhooks?limit=0'],
      ['GET', '/v1/webhooks?limit=201'],
      ['GET', '/v1/webhooks?page_token=garbage'],
      ['GET', '/v1/webhooks?colour=blue'],
      ['PATCH', '/v1/webhooks/not-a-uuid', { active: true }],
      ['PATCH', `/v1/webhooks/${id}`, { active: 'yes please' }],
      ['PATCH', `/v1/webhooks/${id}`, { secret: 'x' }],
      ['DELETE', '/v1/webhooks/not-a-uuid'],
      ['GET', `/v1/webhooks/${id}/deliveries?status=exploded`],
      ['GET', `/v1/webhooks/${id}/deliveries?page_token=garbage`],
      ['POST', '/v1/webhooks/not-a-uuid/test'],
      ['POST', `/v1/webhooks/${id}/deliveries/not-a-uuid/retry`],
      ['POST', `/v1/webhooks/${id}/recover`, {}],
      ['POST', `/v1/webhooks/${id}/recover`, { since: 'yesterday' }],
      [
        'POST',
        `/v1/webhooks/${id}/recover`,
        { since: new Date().toISOString(), until: new Date(Date.now() - 1000).toISOString() },
      ],
      ['POST', `/v1/webhooks/${id}/recover`, { since: new Date(Date.now() - 15 * 86_400_000).toISOString() }],
    ];
    for (const [method, url, payload] of cases) {
      const response = await call(method, url, tenant.agency, payload);
      assert.equal(response.statusCode, 400, `${method} ${url} ${JSON.stringify(payload)}: ${response.body}`);
      assert.ok(['validation_error', 'invalid_request'].includes(response.json().error));
      assert.equal(typeof response.json().message, 'string');
    }
    const invalidJson = await t.app.inject({
      method: 'POST',
      url: '/v1/webhooks',
      headers: { ...tenant.agency, 'content-type': 'application/json' },
      payload: '{"url": ',
    });
    assert.equal(invalidJson.statusCode, 400);
    const unknownDelivery = await call(
      'POST',
      `/v1/webhooks/${id}/deliveries/${newId()}/retry`,
      tenant.agency,
    );
    assert.equal(unknownDelivery.statusCode, 404);
  });

  test('the connect-time guard refuses loopback even when the URL got past validation (DNS rebinding)', async () => {
    const receiver = await startReceiver();
    try {
      await t.startWorker();
      const port = new globalThis.URL(receiver.url).port;
      const ids: string[] = [];
      for (const url of [`http://127.0.0.1:${port}/literal`, `http://localhost:${port}/name`]) {
        // Written straight to the table: what a name that resolved elsewhere at validation would look like.
        const id = newId();
        const secret = 'whsec_test';
        await t.platform.db
          .insertInto('webhook_subscriptions')
          .values({
            id,
            org_id: tenant.orgId,
            client_id: tenant.houseClientId,
            all_clients: true,
            url,
            events: ['contact.created'],
            description: null,
            secret_ciphertext: sealSecret(
              t.platform.secrets.encryptionKey,
              { id, org_id: tenant.orgId, client_id: tenant.houseClientId },
              secret,
            ),
            secret_last4: 'test',
          })
          .execute();
        ids.push(id);
      }
      await emitEvent(t, { orgId: tenant.orgId, clientId: tenant.clientId }, 'contact.created', { id: 'c1' });
      for (const id of ids) {
        const [record] = await eventually(async () => {
          const log = await deliveryLog(t, tenant.agency, id);
          return log.length ? log : undefined;
        });
        assert.equal(record.status, 'failed', 'a refused address is not retried');
        assert.equal(record.error_class, 'blocked_address');
        assert.match(record.error, /loopback/);
        assert.equal(record.response_status, null);
      }
      await sleep(300);
      assert.equal(receiver.requests.length, 0, 'nothing reached the loopback receiver');
      const { rows } = await sql<{ n: number }>`
        SELECT count(*)::int AS n FROM webhook_deliveries
        WHERE status = 'pending' AND subscription_id = ANY(${ids}::uuid[])`.execute(t.platform.db);
      assert.equal(rows[0].n, 0);
    } finally {
      await receiver.close();
    }
  });

  test('the agency key sees the subscriptions of a client it made through a client key of another client', async () => {
    const { client: second } = await adminCall(t.app, 'POST', `/orgs/${tenant.orgId}/clients`, {
      name: 'Client B',
    });
    const key = await adminCall(t.app, 'POST', `/orgs/${tenant.orgId}/keys`, {
      name: 'b',
      kind: 'client',
      client_id: second.id,
      rate_limit_per_minute: 100_000,
    });
    const bHeaders = { authorization: `Bearer ${key.key}` };
    const made = await createWebhook(t, bHeaders, { url: URL, events: ['*'] });
    assert.equal(made.webhook.client_id, second.id);
    assert.equal(
      (await call('GET', `/v1/webhooks/${made.id}`, tenant.client)).statusCode,
      404,
      'client A cannot see B',
    );
    assert.equal((await call('GET', `/v1/webhooks/${made.id}`, tenant.agency)).statusCode, 200);
  });
});
