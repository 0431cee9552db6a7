/**
 * The known bad inputs of issue 17, each a 500 (or Fastify's own body) before the shared checks in
 * src/platform/http/validation.ts, formats.ts and errors.ts `frameworkErrors`: every one is now a
 * 4xx envelope and changes nothing.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { caller } from '../crm/crm-client.ts';
import { buildTestApp, createTenant, type TestApp, type TestTenant } from '../helpers.ts';

function assertEnvelope(reply: { status: number; body: any }, status: number, code?: string) {
  assert.equal(reply.status, status, JSON.stringify(reply.body));
  assert.equal(typeof reply.body.error, 'string');
  assert.equal(typeof reply.body.message, 'string');
  for (const key of Object.keys(reply.body)) assert.ok(['error', 'message', 'details'].includes(key), key);
  if (code) assert.equal(reply.body.error, code);
}

describe('bad input answers the envelope and changes nothing', () => {
  let t: TestApp;
  let tenant: TestTenant;
  let call: ReturnType<typeof caller>;
  before(async () => {
    t = await buildTestApp();
    tenant = await createTenant(t.app);
    call = caller(t, tenant.client);
  });
  after(() => t.close());

  const count = async (table: string) =>
    Number((await t.database.pool.query(`SELECT count(*) FROM ${table}`)).rows[0].count);

  test('a NUL byte in a body string, an object key, a query parameter or a path parameter is a 400', async () => {
    const before = await count('contacts');
    assertEnvelope(
      await call('POST', '/crm/contacts', { first_name: 'Ada\u0000', email: 'n@example.com' }),
      400,
      'validation_error',
    );
    assertEnvelope(
      await call('POST', '/crm/contacts', {
        first_name: 'Ada',
        email: 'k@example.com',
        custom_fields: { 'k\u0000': 1 },
      }),
      400,
      'validation_error',
    );
    assertEnvelope(await call('GET', '/crm/contacts?q=a%00b'), 400, 'validation_error');
    assertEnvelope(await call('GET', '/agents/slug%00x'), 400, 'validation_error');
    const created = await call('POST', '/crm/companies', { name: 'Acme' });
    assertEnvelope(
      await call('PATCH', `/crm/companies/${created.body.company.id}`, { name: 'A\u0000cme' }),
      400,
      'validation_error',
    );
    assert.equal((await call('GET', `/crm/companies/${created.body.company.id}`)).body.company.name, 'Acme');
    assert.equal(await count('contacts'), before);
  });

  test('a lone UTF-16 surrogate in a contact name is a 400; a surrogate pair is fine', async () => {
    const before = await count('contacts');
    const lone = await call('POST', '/crm/contacts', { first_name: '\ud800', email: 's@example.com' });
    assertEnvelope(lone, 400, 'validation_error');
    assert.match(lone.body.message, /first_name/);
    assertEnvelope(
      await call('POST', '/crm/contacts', { last_name: 'x\udc00', email: 't@example.com' }),
      400,
      'validation_error',
    );
    assert.equal(await count('contacts'), before);
    const pair = await call('POST', '/crm/contacts', { first_name: 'Ada 😀', email: 'p@example.com' });
    assert.equal(pair.status, 201);
    assert.equal(pair.body.contact.first_name, 'Ada 😀');
  });

  test('a leap-second timestamp is a 400 in activities, tasks, due_before and webhook recovery', async () => {
    const leap = '2024-12-31T23:59:60Z';
    assertEnvelope(
      await call('POST', '/crm/activities', { activity_type: 'note', performed_at: leap }),
      400,
      'validation_error',
    );
    assertEnvelope(await call('POST', '/crm/tasks', { title: 'x', due_at: leap }), 400, 'validation_error');
    assertEnvelope(
      await call('GET', `/crm/tasks?due_before=${encodeURIComponent(leap)}`),
      400,
      'validation_error',
    );
    const hook = await call('POST', '/webhooks', { url: 'https://example.com/hook', events: ['*'] });
    assert.equal(hook.status, 201, JSON.stringify(hook.body));
    assertEnvelope(
      await call('POST', `/webhooks/${hook.body.webhook.id}/recover`, { since: leap }),
      400,
      'validation_error',
    );
    // The last second before it still works.
    const fine = await call('POST', '/crm/tasks', { title: 'x', due_at: '2024-12-31T23:59:59Z' });
    assert.equal(fine.status, 201);
  });

  test('a deal expected_close_date of 0000-01-01 or 2025-02-30 is a 400', async () => {
    const before = await count('deals');
    for (const date of ['0000-01-01', '2025-02-30', '2025-13-01']) {
      assertEnvelope(
        await call('POST', '/crm/deals', { name: 'D', expected_close_date: date }),
        400,
        'validation_error',
      );
    }
    assert.equal(await count('deals'), before);
    const leapDay = await call('POST', '/crm/deals', { name: 'D', expected_close_date: '2024-02-29' });
    assert.equal(leapDay.status, 201, JSON.stringify(leapDay.body));
  });

  test('a smart-list date of 2025-02-30 is refused, so reads of the list never fail', async () => {
    for (const value of ['2025-02-30T00:00:00Z', '2024-12-31T23:59:60Z', '0000-01-01T00:00:00Z']) {
      const list = await call('POST', '/crm/lists', {
        name: 'Smart',
        processing_type: 'smart',
        filter_branch: { field: 'created_at', operator: 'before', value },
      });
      assertEnvelope(list, 400, 'validation_error');
    }
    const good = await call('POST', '/crm/lists', {
      name: 'Smart',
      processing_type: 'smart',
      filter_branch: { field: 'created_at', operator: 'before', value: '2025-02-28T00:00:00Z' },
    });
    assert.equal(good.status, 201);
    assert.equal((await call('GET', `/crm/lists/${good.body.list.id}/members`)).status, 200);
  });

  test('a body nested 100,000 deep is a 400, not a stack overflow (found by the fuzzer)', async () => {
    let nested = '"x"';
    for (let i = 0; i < 100_000; i++) nested = i % 2 ? `[${nested}]` : `{"a":${nested}}`;
    const reply = await t.app.inject({
      method: 'POST',
      url: '/v1/crm/lists',
      headers: { ...tenant.client, 'content-type': 'application/json', 'idempotency-key': 'deep' },
      payload: `{"name":"L","processing_type":"smart","filter_branch":{"a":${nested}}}`,
    });
    assertEnvelope({ status: reply.statusCode, body: reply.json() }, 400, 'validation_error');
  });

  test('a path id over 100 characters is a 414 in the envelope, without echoing the URL', async () => {
    const long = 'a'.repeat(150);
    const reply = await call('GET', `/crm/contacts/${long}`);
    assertEnvelope(reply, 414, 'uri_too_long');
    assert.ok(!JSON.stringify(reply.body).includes(long));
  });

  test('a malformed percent-encoding in the path is a 400 in the envelope', async () => {
    const reply = await call('GET', '/crm/contacts/%E0%A4%A');
    assertEnvelope(reply, 400, 'invalid_request');
  });
});
