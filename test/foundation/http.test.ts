import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { emit } from '../../src/platform/events/emit.ts';
import { errors } from '../../src/platform/http/errors.ts';
import { runIdempotent } from '../../src/platform/http/idempotency.ts';
import { Body, IdempotencyHeaders } from '../../src/platform/http/schemas.ts';
import { buildTestApp, createTenant, type TestApp, type TestTenant } from '../helpers.ts';

/** A creating route used only here: it records a `test.widget.created` event per widget. */
const widgetRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.post(
    '/test-widgets',
    {
      schema: {
        hide: true,
        headers: IdempotencyHeaders,
        body: Body({
          name: Type.String({ maxLength: 50 }),
          fail: Type.Optional(Type.Boolean()),
          delay_ms: Type.Optional(Type.Integer()),
        }),
      },
    },
    async (request, reply) =>
      runIdempotent(app.platform.db, request, reply, 24, async (trx) => {
        const event = await emit(trx, request.tenant, 'test.widget.created', { name: request.body.name });
        if (request.body.delay_ms) await new Promise((resolve) => setTimeout(resolve, request.body.delay_ms));
        if (request.body.fail) throw errors.invalidField('name', 'was refused on purpose');
        return { status: 201, body: { widget: { id: event.id, name: request.body.name } } };
      }),
  );
  app.get('/test-boom', { schema: { hide: true } }, async () => {
    throw new Error('secret internal detail');
  });
};

describe('HTTP conventions', () => {
  let t: TestApp;
  let tenant: TestTenant;

  before(async () => {
    t = await buildTestApp({}, { extraTenantRoutes: [widgetRoutes] });
    tenant = await createTenant(t.app);
  });
  after(() => t.close());

  const widgets = async () => {
    const { rows } = await t.database.pool.query(
      "SELECT count(*)::int AS n FROM events WHERE type = 'test.widget.created' AND org_id = $1",
      [tenant.orgId],
    );
    return rows[0].n as number;
  };

  test('unknown routes are 404 not_found in the envelope', async () => {
    for (const url of ['/nope', '/v1/nope', '/v1/crm/nothing/here']) {
      const response = await t.app.inject({ method: 'GET', url, headers: tenant.agency });
      assert.equal(response.statusCode, 404, url);
      assert.equal(response.json().error, 'not_found');
      assert.equal(typeof response.json().message, 'string');
    }
  });

  test('malformed JSON is 400 invalid_request', async () => {
    const response = await t.app.inject({
      method: 'POST',
      url: '/v1/test-widgets',
      headers: { ...tenant.agency, 'content-type': 'application/json' },
      payload: '{"name": ',
    });
    assert.equal(response.statusCode, 400);
    assert.equal(response.json().error, 'invalid_request');
  });

  test('schema violations are 400 validation_error with the failing fields', async () => {
    const response = await t.app.inject({
      method: 'POST',
      url: '/v1/test-widgets',
      headers: tenant.agency,
      payload: { name: 5, extra: true },
    });
    assert.equal(response.statusCode, 400);
    const body = response.json();
    assert.equal(body.error, 'validation_error');
    const fields = body.details.fields.map((f: { field: string }) => f.field).sort();
    assert.deepEqual(fields, ['extra', 'name']);
  });

  test('a body over the limit is 413 in the envelope', async () => {
    const response = await t.app.inject({
      method: 'POST',
      url: '/v1/test-widgets',
      headers: { ...tenant.agency, 'content-type': 'application/json' },
      payload: JSON.stringify({ name: 'x'.repeat(2_000_000) }),
    });
    assert.equal(response.statusCode, 413);
    assert.equal(response.json().error, 'payload_too_large');
  });

  test('an unexpected failure is 500 internal_error without a stack trace, with the request id', async () => {
    const response = await t.app.inject({
      method: 'GET',
      url: '/v1/test-boom',
      headers: { ...tenant.agency, 'x-request-id': 'req-123' },
    });
    assert.equal(response.statusCode, 500);
    assert.equal(response.json().error, 'internal_error');
    assert.ok(!response.body.includes('secret internal detail'));
    assert.ok(!response.body.includes('at '));
    assert.equal(response.headers['x-request-id'], 'req-123');
  });

  test('every response carries an X-Request-Id', async () => {
    const response = await t.app.inject({ method: 'GET', url: '/v1/me', headers: tenant.agency });
    assert.match(String(response.headers['x-request-id']), /^[0-9a-f-]{36}$/);
  });

  test('idempotency: a replay returns the original response with no second side effect', async () => {
    const headers = { ...tenant.agency, 'idempotency-key': 'replay-1' };
    const first = await t.app.inject({
      method: 'POST',
      url: '/v1/test-widgets',
      headers,
      payload: { name: 'a' },
    });
    assert.equal(first.statusCode, 201);
    assert.equal(first.headers['idempotent-replayed'], undefined);
    const before = await widgets();
    const second = await t.app.inject({
      method: 'POST',
      url: '/v1/test-widgets',
      headers,
      payload: { name: 'a' },
    });
    assert.equal(second.statusCode, 201);
    assert.equal(second.headers['idempotent-replayed'], 'true');
    assert.deepEqual(second.json(), first.json());
    assert.equal(await widgets(), before);
  });

  test('idempotency: the same key with another body is 422 idempotency_key_reused', async () => {
    const headers = { ...tenant.agency, 'idempotency-key': 'reuse-1' };
    await t.app.inject({ method: 'POST', url: '/v1/test-widgets', headers, payload: { name: 'a' } });
    const other = await t.app.inject({
      method: 'POST',
      url: '/v1/test-widgets',
      headers,
      payload: { name: 'b' },
    });
    assert.equal(other.statusCode, 422);
    assert.equal(other.json().error, 'idempotency_key_reused');
  });

  test('idempotency: keys are scoped to the tenant', async () => {
    const key = 'scoped-1';
    const a = await t.app.inject({
      method: 'POST',
      url: '/v1/test-widgets',
      headers: { ...tenant.agency, 'idempotency-key': key },
      payload: { name: 'a' },
    });
    const b = await t.app.inject({
      method: 'POST',
      url: '/v1/test-widgets',
      headers: { ...tenant.client, 'idempotency-key': key },
      payload: { name: 'b' },
    });
    assert.equal(a.statusCode, 201);
    assert.equal(b.statusCode, 201);
    assert.notEqual(a.json().widget.id, b.json().widget.id);
  });

  test('idempotency: a failed request releases its key and changes nothing', async () => {
    const headers = { ...tenant.agency, 'idempotency-key': 'fail-1' };
    const before = await widgets();
    const failed = await t.app.inject({
      method: 'POST',
      url: '/v1/test-widgets',
      headers,
      payload: { name: 'f', fail: true },
    });
    assert.equal(failed.statusCode, 400);
    assert.equal(await widgets(), before);
    const retried = await t.app.inject({
      method: 'POST',
      url: '/v1/test-widgets',
      headers,
      payload: { name: 'f', fail: true },
    });
    assert.equal(retried.statusCode, 400);
    assert.equal(await widgets(), before);
  });

  test('idempotency: a duplicate while the first runs is 409 idempotency_in_progress', async () => {
    const headers = { ...tenant.agency, 'idempotency-key': 'slow-1' };
    const slow = t.app.inject({
      method: 'POST',
      url: '/v1/test-widgets',
      headers,
      payload: { name: 's', delay_ms: 400 },
    });
    await new Promise((resolve) => setTimeout(resolve, 100));
    const duplicate = await t.app.inject({
      method: 'POST',
      url: '/v1/test-widgets',
      headers,
      payload: { name: 's', delay_ms: 400 },
    });
    assert.equal(duplicate.statusCode, 409);
    assert.equal(duplicate.json().error, 'idempotency_in_progress');
    assert.equal((await slow).statusCode, 201);
  });

  test('idempotency: 20 concurrent requests with one key leave exactly one row', async () => {
    const before = await widgets();
    const headers = { ...tenant.agency, 'idempotency-key': 'burst-1' };
    const responses = await Promise.all(
      Array.from({ length: 20 }, () =>
        t.app.inject({ method: 'POST', url: '/v1/test-widgets', headers, payload: { name: 'burst' } }),
      ),
    );
    assert.equal(await widgets(), before + 1);
    for (const response of responses)
      assert.ok([201, 409].includes(response.statusCode), String(response.statusCode));
    assert.ok(responses.some((response) => response.statusCode === 201));
    const replay = await t.app.inject({
      method: 'POST',
      url: '/v1/test-widgets',
      headers,
      payload: { name: 'burst' },
    });
    assert.equal(replay.headers['idempotent-replayed'], 'true');
  });

  test('idempotency: a key over 255 characters is 400', async () => {
    const response = await t.app.inject({
      method: 'POST',
      url: '/v1/test-widgets',
      headers: { ...tenant.agency, 'idempotency-key': 'k'.repeat(256) },
      payload: { name: 'a' },
    });
    assert.equal(response.statusCode, 400);
    assert.equal(response.json().error, 'validation_error');
  });
});
