import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { buildTestApp, createTenant, type TestApp, type TestTenant } from '../helpers.ts';
import { type Call, caller, errorOf, insertCompany, insertContact } from './fixtures.ts';

const UNKNOWN = '00000000-0000-7000-8000-000000000000';

describe('activities', () => {
  let t: TestApp;
  let tenant: TestTenant;
  let call: Call;
  let scope: { orgId: string; clientId: string };

  before(async () => {
    t = await buildTestApp();
    tenant = await createTenant(t.app);
    call = caller(t.app, tenant.client);
    scope = { orgId: tenant.orgId, clientId: tenant.clientId };
  });
  after(() => t.close());

  const log = async (body: Record<string, unknown>, as: Call = call) => {
    const response = await as('POST', '/v1/crm/activities', body);
    assert.equal(response.statusCode, 201, response.body);
    return response.json().activity;
  };

  test('POST /v1/crm/activities logs each activity type; performed_at defaults to now', async () => {
    const contactId = await insertContact(t.database.pool, scope);
    const companyId = await insertCompany(t.database.pool, scope);
    const { deal } = (await call('POST', '/v1/crm/deals', { name: 'Linked' })).json();
    for (const type of ['call', 'note', 'email', 'meeting', 'sms', 'task']) {
      const startedAt = Date.now();
      const activity = await log({ activity_type: type });
      assert.equal(activity.activity_type, type);
      const performed = Date.parse(activity.performed_at);
      assert.ok(performed >= startedAt - 5 && performed <= Date.now() + 5, 'performed_at is now');
      assert.equal(activity.direction, null);
      assert.equal(activity.pinned, false);
      assert.equal(activity.visibility, 'internal');
    }
    const full = await log({
      activity_type: 'call',
      direction: 'outbound',
      contact_id: contactId,
      company_id: companyId,
      deal_id: deal.id,
      subject: 'Discovery call',
      body: 'Talked budget.',
      outcome: 'connected',
      duration_seconds: 312,
      pinned: true,
      visibility: 'public',
      performed_at: '2025-02-03T10:11:12.123456Z',
    });
    assert.deepEqual(
      {
        direction: full.direction,
        contact_id: full.contact_id,
        company_id: full.company_id,
        deal_id: full.deal_id,
        subject: full.subject,
        body: full.body,
        outcome: full.outcome,
        duration_seconds: full.duration_seconds,
        pinned: full.pinned,
        visibility: full.visibility,
        performed_at: full.performed_at,
      },
      {
        direction: 'outbound',
        contact_id: contactId,
        company_id: companyId,
        deal_id: deal.id,
        subject: 'Discovery call',
        body: 'Talked budget.',
        outcome: 'connected',
        duration_seconds: 312,
        pinned: true,
        visibility: 'public',
        performed_at: '2025-02-03T10:11:12.123Z',
      },
    );
    const read = await call('GET', `/v1/crm/activities/${full.id}`);
    assert.equal(read.statusCode, 200);
    assert.deepEqual(read.json(), { activity: full });
  });

  test('Idempotency-Key: a repeat replays the first response and logs nothing more', async () => {
    const fresh = await createTenant(t.app);
    const freshCall = caller(t.app, fresh.client);
    const key = { 'idempotency-key': 'log-call-1' };
    const body = { activity_type: 'note', body: 'Once only' };
    const first = await freshCall('POST', '/v1/crm/activities', body, key);
    const second = await freshCall('POST', '/v1/crm/activities', body, key);
    assert.equal(first.statusCode, 201);
    assert.equal(second.statusCode, 201);
    assert.equal(second.headers['idempotent-replayed'], 'true');
    assert.deepEqual(second.json(), first.json());
    const concurrent = await Promise.all(
      Array.from({ length: 5 }, () =>
        freshCall(
          'POST',
          '/v1/crm/activities',
          { activity_type: 'note', body: 'race' },
          { 'idempotency-key': 'r' },
        ),
      ),
    );
    for (const response of concurrent) assert.ok([201, 409].includes(response.statusCode), response.body);
    const timeline = (await freshCall('GET', '/v1/crm/activities')).json().data;
    assert.equal(timeline.length, 2);
    errorOf(await freshCall('POST', '/v1/crm/activities', { activity_type: 'call' }, key), 422);
  });

  test('the timeline is newest performed_at first, keyset-paginated, with filters', async () => {
    const fresh = await createTenant(t.app);
    const freshCall = caller(t.app, fresh.client);
    const freshScope = { orgId: fresh.orgId, clientId: fresh.clientId };
    const contactA = await insertContact(t.database.pool, freshScope, 'A');
    const contactB = await insertContact(t.database.pool, freshScope, 'B');
    const companyId = await insertCompany(t.database.pool, freshScope);
    const { deal } = (await freshCall('POST', '/v1/crm/deals', { name: 'D' })).json();
    // Logged out of order, several sharing one performed_at: the (performed_at, id) order decides.
    const at = (minute: number) => `2025-03-01T10:${String(minute).padStart(2, '0')}:00.000Z`;
    const created: any[] = [];
    const plan: Record<string, unknown>[] = [
      { activity_type: 'call', contact_id: contactA, performed_at: at(5) },
      { activity_type: 'note', contact_id: contactA, performed_at: at(1) },
      { activity_type: 'email', contact_id: contactB, performed_at: at(5) },
      { activity_type: 'meeting', company_id: companyId, performed_at: at(9) },
      { activity_type: 'sms', deal_id: deal.id, contact_id: contactB, performed_at: at(5) },
      { activity_type: 'note', deal_id: deal.id, performed_at: at(3) },
      { activity_type: 'task', performed_at: at(7) },
    ];
    for (const body of plan) created.push(await log(body, freshCall));
    const expected = [...created]
      .sort((a, b) =>
        a.performed_at === b.performed_at ? (a.id < b.id ? 1 : -1) : a.performed_at < b.performed_at ? 1 : -1,
      )
      .map((a) => a.id);

    const seen: string[] = [];
    let token: string | null = null;
    do {
      const url = `/v1/crm/activities?limit=2${token ? `&page_token=${token}` : ''}`;
      const page: any = (await freshCall('GET', url)).json();
      assert.ok(page.data.length <= 2);
      seen.push(...page.data.map((a: any) => a.id));
      token = page.next_page_token;
    } while (token);
    assert.deepEqual(seen, expected, 'pages walk the whole timeline in order, no gaps or repeats');

    const ids = async (query: string) =>
      (await freshCall('GET', `/v1/crm/activities?${query}`)).json().data.map((a: any) => a.id);
    const expectIds = (predicate: (a: any) => boolean) =>
      expected.filter((id) => predicate(created.find((a) => a.id === id)));
    assert.deepEqual(
      await ids(`contact_id=${contactA}`),
      expectIds((a) => a.contact_id === contactA),
    );
    assert.deepEqual(
      await ids(`contact_id=${contactB}`),
      expectIds((a) => a.contact_id === contactB),
    );
    assert.deepEqual(
      await ids(`company_id=${companyId}`),
      expectIds((a) => a.company_id === companyId),
    );
    assert.deepEqual(
      await ids(`deal_id=${deal.id}`),
      expectIds((a) => a.deal_id === deal.id),
    );
    assert.deepEqual(
      await ids('activity_type=note'),
      expectIds((a) => a.activity_type === 'note'),
    );
    assert.deepEqual(
      await ids(`activity_type=sms&contact_id=${contactB}`),
      expectIds((a) => a.activity_type === 'sms' && a.contact_id === contactB),
    );
    assert.deepEqual(await ids(`contact_id=${UNKNOWN}`), []);

    const filteredPage = (await freshCall('GET', `/v1/crm/activities?contact_id=${contactB}&limit=1`)).json();
    const rest = (
      await freshCall(
        'GET',
        `/v1/crm/activities?contact_id=${contactB}&limit=1&page_token=${filteredPage.next_page_token}`,
      )
    ).json();
    errorOf(
      await freshCall(
        'GET',
        `/v1/crm/activities?contact_id=${contactA}&page_token=${filteredPage.next_page_token}`,
      ),
      400,
    );
    assert.deepEqual(
      [...filteredPage.data, ...rest.data].map((a: any) => a.id),
      expectIds((a) => a.contact_id === contactB),
    );
  });

  test('PATCH updates subject, body, outcome, pinned, visibility (and clears with null)', async () => {
    const activity = await log({
      activity_type: 'call',
      subject: 'Old',
      body: 'Old body',
      outcome: 'no answer',
    });
    const response = await call('PATCH', `/v1/crm/activities/${activity.id}`, {
      subject: 'New',
      body: null,
      outcome: 'connected',
      pinned: true,
      visibility: 'public',
    });
    assert.equal(response.statusCode, 200);
    const updated = response.json().activity;
    assert.equal(updated.subject, 'New');
    assert.equal(updated.body, null);
    assert.equal(updated.outcome, 'connected');
    assert.equal(updated.pinned, true);
    assert.equal(updated.visibility, 'public');
    assert.equal(updated.activity_type, 'call');
    assert.equal(updated.performed_at, activity.performed_at);
    assert.ok(updated.updated_at >= activity.updated_at);
    assert.deepEqual((await call('GET', `/v1/crm/activities/${activity.id}`)).json().activity, updated);

    const moved = (
      await call('PATCH', `/v1/crm/activities/${activity.id}`, {
        performed_at: '2024-12-24T18:00:00Z',
        direction: 'inbound',
        duration_seconds: 60,
      })
    ).json().activity;
    assert.equal(moved.performed_at, '2024-12-24T18:00:00.000Z');
    assert.equal(moved.direction, 'inbound');

    assert.deepEqual((await call('PATCH', `/v1/crm/activities/${activity.id}`, {})).json().activity, moved);
    const badRef = errorOf(
      await call('PATCH', `/v1/crm/activities/${activity.id}`, { deal_id: UNKNOWN }),
      400,
    );
    assert.equal(badRef.details.fields[0].field, 'deal_id');
    errorOf(await call('PATCH', `/v1/crm/activities/${UNKNOWN}`, { subject: 'x' }), 404);
    errorOf(await call('PATCH', `/v1/crm/activities/${UNKNOWN}`, {}), 404);
  });

  test('DELETE removes the activity for good', async () => {
    const activity = await log({ activity_type: 'note', body: 'Temporary' });
    const response = await call('DELETE', `/v1/crm/activities/${activity.id}`);
    assert.equal(response.statusCode, 204);
    assert.equal(response.body, '');
    errorOf(await call('GET', `/v1/crm/activities/${activity.id}`), 404);
    errorOf(await call('DELETE', `/v1/crm/activities/${activity.id}`), 404);
    const { rows } = await t.database.pool.query('SELECT 1 FROM activities WHERE id = $1', [activity.id]);
    assert.equal(rows.length, 0);
  });

  test('references must be records of the tenant: 400 naming the field, nothing written', async () => {
    const other = await createTenant(t.app);
    const foreignContact = await insertContact(t.database.pool, {
      orgId: other.orgId,
      clientId: other.clientId,
    });
    const foreignDeal = (
      await caller(t.app, other.client)('POST', '/v1/crm/deals', { name: 'Theirs' })
    ).json().deal;
    const houseContact = await insertContact(t.database.pool, {
      orgId: tenant.orgId,
      clientId: tenant.houseClientId,
    });
    for (const [field, id] of [
      ['contact_id', foreignContact],
      ['contact_id', houseContact],
      ['deal_id', foreignDeal.id],
      ['company_id', UNKNOWN],
    ]) {
      const error = errorOf(
        await call('POST', '/v1/crm/activities', { activity_type: 'note', [field]: id }),
        400,
      );
      assert.equal(error.error, 'validation_error');
      assert.equal(error.details.fields[0].field, field);
      assert.ok(!JSON.stringify(error).includes('Theirs'));
    }
  });

  test('bad input is a 400 envelope, never a 500', async () => {
    const activity = await log({ activity_type: 'note' });
    const bodies: [string, unknown][] = [
      ['no type', { subject: 'x' }],
      ['unknown type', { activity_type: 'fax' }],
      ['type an array', { activity_type: ['call', 'note'] }],
      ['unknown direction', { activity_type: 'call', direction: 'sideways' }],
      ['unknown visibility', { activity_type: 'call', visibility: 'secret' }],
      ['contact_id not a uuid', { activity_type: 'call', contact_id: 'abc' }],
      ['deal_id a number', { activity_type: 'call', deal_id: 42 }],
      ['subject too long', { activity_type: 'call', subject: 'x'.repeat(501) }],
      ['body too long', { activity_type: 'note', body: 'x'.repeat(65_537) }],
      ['outcome an object', { activity_type: 'call', outcome: { ok: true } }],
      ['duration negative', { activity_type: 'call', duration_seconds: -1 }],
      ['duration fractional', { activity_type: 'call', duration_seconds: 1.5 }],
      ['duration a word', { activity_type: 'call', duration_seconds: 'long' }],
      ['pinned a word', { activity_type: 'call', pinned: 'very' }],
      ['performed_at not a time', { activity_type: 'call', performed_at: 'yesterday' }],
      ['unknown field', { activity_type: 'call', mood: 'happy' }],
    ];
    for (const [label, body] of bodies) {
      const error = errorOf(await call('POST', '/v1/crm/activities', body), 400);
      assert.equal(error.error, 'validation_error', label);
    }
    const patches: [string, unknown][] = [
      ['activity_type is not mutable', { activity_type: 'call' }],
      ['visibility unknown', { visibility: 'everyone' }],
      ['pinned an object', { pinned: { on: true } }],
      ['subject too long', { subject: 'x'.repeat(501) }],
    ];
    for (const [label, body] of patches) {
      const error = errorOf(await call('PATCH', `/v1/crm/activities/${activity.id}`, body), 400);
      assert.equal(error.error, 'validation_error', label);
    }
    for (const url of [
      '/v1/crm/activities/123',
      '/v1/crm/activities?activity_type=fax',
      '/v1/crm/activities?contact_id=abc',
      '/v1/crm/activities?company_id=abc',
      '/v1/crm/activities?deal_id=abc',
      '/v1/crm/activities?limit=-1',
      '/v1/crm/activities?page_token=abc.def',
      '/v1/crm/activities?before=2024-01-01',
    ]) {
      errorOf(await call('GET', url), 400);
    }
    errorOf(await call('DELETE', '/v1/crm/activities/xyz'), 400);
    errorOf(await call('PATCH', '/v1/crm/activities/xyz', { subject: 'x' }), 400);
  });
});
