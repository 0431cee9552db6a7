import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { buildTestApp, createTenant, type TestApp, type TestTenant } from '../helpers.ts';
import { type Call, caller, errorOf, eventsOfType, insertCompany, insertContact } from './fixtures.ts';

const UNKNOWN = '00000000-0000-7000-8000-000000000000';

describe('deals', () => {
  let t: TestApp;
  let tenant: TestTenant;
  let call: Call;
  let scope: { orgId: string; clientId: string };
  let defaultPipeline: any;
  let otherPipeline: any;

  before(async () => {
    t = await buildTestApp();
    tenant = await createTenant(t.app);
    call = caller(t.app, tenant.client);
    scope = { orgId: tenant.orgId, clientId: tenant.clientId };
    defaultPipeline = (await call('GET', '/v1/crm/pipelines')).json().data[0];
    otherPipeline = (
      await call('POST', '/v1/crm/pipelines', {
        name: 'Partners',
        stages: [{ name: 'Intro' }, { name: 'Pilot' }, { name: 'Signed' }],
      })
    ).json().pipeline;
  });
  after(() => t.close());

  const createDeal = async (body: Record<string, unknown>) => {
    const response = await call('POST', '/v1/crm/deals', body);
    assert.equal(response.statusCode, 201, response.body);
    return response.json().deal;
  };

  test('POST /v1/crm/deals with a name only: default pipeline, first stage, open, USD; deal.created', async () => {
    const response = await call('POST', '/v1/crm/deals', { name: 'Website redesign' });
    assert.equal(response.statusCode, 201);
    const { deal } = response.json();
    assert.deepEqual(Object.keys(response.json()), ['deal']);
    assert.equal(deal.name, 'Website redesign');
    assert.equal(deal.pipeline_id, defaultPipeline.id);
    assert.equal(deal.stage_id, defaultPipeline.stages[0].id);
    assert.equal(deal.status, 'open');
    assert.equal(deal.currency, 'USD');
    assert.equal(deal.amount, null);
    assert.deepEqual(deal.tags, []);
    assert.deepEqual(deal.custom_fields, {});
    assert.equal(deal.archived_at, null);
    assert.equal(deal.expected_close_date, null);
    assert.match(deal.created_at, /^\d{4}-\d\d-\d\dT.*Z$/);

    const events = await eventsOfType(t.app, tenant.client, 'deal.created');
    const event = events.find((e) => e.data.id === deal.id);
    assert.ok(event, 'deal.created emitted');
    assert.deepEqual(event.data, deal, 'the event carries the deal as the API returns it');
    assert.match(event.id, /^evt_/);
  });

  test('POST with every field', async () => {
    const companyId = await insertCompany(t.database.pool, scope);
    const contactId = await insertContact(t.database.pool, scope);
    const ownerId = '0191d3a0-0000-7000-8000-00000000beef';
    const deal = await createDeal({
      name: 'Annual plan',
      amount: 12500.5,
      currency: 'eur',
      pipeline_id: otherPipeline.id,
      stage_id: otherPipeline.stages[1].id,
      status: 'won',
      owner_user_id: ownerId,
      primary_contact_id: contactId,
      company_id: companyId,
      expected_close_date: '2025-12-31',
      tags: ['vip', 'q4', 'vip'],
      custom_fields: { source: 'referral', seats: 25, nested: { a: [1, 2] } },
    });
    assert.equal(deal.amount, 12500.5);
    assert.equal(deal.currency, 'EUR');
    assert.equal(deal.pipeline_id, otherPipeline.id);
    assert.equal(deal.stage_id, otherPipeline.stages[1].id);
    assert.equal(deal.status, 'won');
    assert.equal(deal.owner_user_id, ownerId);
    assert.equal(deal.primary_contact_id, contactId);
    assert.equal(deal.company_id, companyId);
    assert.equal(deal.expected_close_date, '2025-12-31');
    assert.deepEqual(deal.tags, ['vip', 'q4']);
    assert.deepEqual(deal.custom_fields, { source: 'referral', seats: 25, nested: { a: [1, 2] } });
    const read = (await call('GET', `/v1/crm/deals/${deal.id}`)).json().deal;
    assert.deepEqual(read, deal);
  });

  test('a create in one statement (default pipeline) returns and emits what the transactional one does', async () => {
    const companyId = await insertCompany(t.database.pool, scope);
    const contactId = await insertContact(t.database.pool, scope);
    const deal = await createDeal({
      name: 'Renewal',
      amount: 990.25,
      currency: 'gbp',
      status: 'lost',
      owner_user_id: '0191d3a0-0000-7000-8000-00000000beef',
      primary_contact_id: contactId,
      company_id: companyId,
      expected_close_date: '2026-02-28',
      tags: ['b', 'a', 'b'],
      custom_fields: { zeta: 1, a: { nested: true } },
    });
    assert.equal(deal.pipeline_id, defaultPipeline.id);
    assert.equal(deal.stage_id, defaultPipeline.stages[0].id);
    assert.deepEqual(deal.tags, ['b', 'a']);
    assert.equal(deal.expected_close_date, '2026-02-28');
    assert.deepEqual((await call('GET', `/v1/crm/deals/${deal.id}`)).json().deal, deal);
    const event = (await eventsOfType(t.app, tenant.client, 'deal.created')).find(
      (e) => e.data.id === deal.id,
    );
    assert.deepEqual(event?.data, deal);

    // Another tenant's company is refused as an unknown one is, and nothing is written.
    const other = await createTenant(t.app);
    const theirs = await insertCompany(t.database.pool, { orgId: other.orgId, clientId: other.clientId });
    const error = errorOf(await call('POST', '/v1/crm/deals', { name: 'X', company_id: theirs }), 400);
    assert.deepEqual(
      error.details.fields.map((f: any) => f.field),
      ['company_id'],
    );

    // A client's first deal, before it has a default pipeline, lands in the one it creates.
    const first = (await caller(t.app, other.client)('POST', '/v1/crm/deals', { name: 'First' })).json().deal;
    const pipelines = (await caller(t.app, other.client)('GET', '/v1/crm/pipelines')).json().data;
    assert.equal(first.pipeline_id, pipelines[0].id);
    assert.equal(first.stage_id, pipelines[0].stages[0].id);
    const [created] = await eventsOfType(t.app, other.client, 'deal.created');
    assert.deepEqual(created.data, first);
  });

  test('pipeline_id alone puts the deal in that pipeline first stage', async () => {
    const deal = await createDeal({ name: 'Pilot', pipeline_id: otherPipeline.id });
    assert.equal(deal.stage_id, otherPipeline.stages[0].id);
  });

  test('a stage_id outside the deal pipeline is 400', async () => {
    const cases: [string, Record<string, unknown>][] = [
      ['stage of another pipeline, pipeline defaulted', { stage_id: otherPipeline.stages[0].id }],
      [
        'stage of the default pipeline in another pipeline',
        { pipeline_id: otherPipeline.id, stage_id: defaultPipeline.stages[0].id },
      ],
      ['unknown stage', { stage_id: UNKNOWN }],
    ];
    for (const [label, body] of cases) {
      const error = errorOf(await call('POST', '/v1/crm/deals', { name: 'X', ...body }), 400);
      assert.equal(error.error, 'validation_error', label);
      assert.equal(error.details.fields[0].field, 'stage_id', label);
    }
    const error = errorOf(await call('POST', '/v1/crm/deals', { name: 'X', pipeline_id: UNKNOWN }), 400);
    assert.equal(error.details.fields[0].field, 'pipeline_id');
  });

  test('unknown company and contact ids are 400 naming the fields, and nothing is written', async () => {
    const before = (await call('GET', '/v1/crm/deals?limit=200')).json().data.length;
    const error = errorOf(
      await call('POST', '/v1/crm/deals', { name: 'X', company_id: UNKNOWN, primary_contact_id: UNKNOWN }),
      400,
    );
    assert.equal(error.error, 'validation_error');
    assert.deepEqual(error.details.fields.map((f: any) => f.field).sort(), [
      'company_id',
      'primary_contact_id',
    ]);
    assert.equal((await call('GET', '/v1/crm/deals?limit=200')).json().data.length, before);
  });

  test('Idempotency-Key: a repeat replays the first response with no second deal or event', async () => {
    const key = { 'idempotency-key': `deal-${Date.now()}` };
    const body = { name: 'Idempotent deal', amount: 10 };
    const first = await call('POST', '/v1/crm/deals', body, key);
    assert.equal(first.statusCode, 201);
    const second = await call('POST', '/v1/crm/deals', body, key);
    assert.equal(second.statusCode, 201);
    assert.equal(second.headers['idempotent-replayed'], 'true');
    assert.deepEqual(second.json(), first.json());

    const reused = errorOf(await call('POST', '/v1/crm/deals', { name: 'Another' }, key), 422);
    assert.equal(reused.error, 'idempotency_key_reused');

    const deals = (await call('GET', '/v1/crm/deals?limit=200')).json().data;
    assert.equal(deals.filter((d: any) => d.name === 'Idempotent deal').length, 1);
    const events = await eventsOfType(t.app, tenant.client, 'deal.created');
    assert.equal(events.filter((e) => e.data.id === first.json().deal.id).length, 1);

    const tooLong = errorOf(
      await call('POST', '/v1/crm/deals', body, { 'idempotency-key': 'k'.repeat(256) }),
      400,
    );
    assert.ok(['invalid_request', 'validation_error'].includes(tooLong.error));
  });

  test('PATCH stage_id emits deal.stage_changed with prior_stage_id and new_stage_id', async () => {
    const deal = await createDeal({ name: 'Moving' });
    const target = defaultPipeline.stages[2].id;
    const response = await call('PATCH', `/v1/crm/deals/${deal.id}`, { stage_id: target });
    assert.equal(response.statusCode, 200);
    const updated = response.json().deal;
    assert.equal(updated.stage_id, target);

    const events = (await eventsOfType(t.app, tenant.client, 'deal.stage_changed')).filter(
      (e) => e.data.id === deal.id,
    );
    assert.equal(events.length, 1);
    assert.equal(events[0].data.prior_stage_id, deal.stage_id);
    assert.equal(events[0].data.new_stage_id, target);
    assert.equal(events[0].data.stage_id, target);
    assert.equal(events[0].data.name, 'Moving');
    assert.equal(events[0].data.updated_at, updated.updated_at);

    await call('PATCH', `/v1/crm/deals/${deal.id}`, { stage_id: target, name: 'Moving still' });
    await call('PATCH', `/v1/crm/deals/${deal.id}`, { amount: 5 });
    const after = (await eventsOfType(t.app, tenant.client, 'deal.stage_changed')).filter(
      (e) => e.data.id === deal.id,
    );
    assert.equal(after.length, 1, 'no event when the stage does not change');
  });

  test('concurrent stage moves are applied one after another: the events form a chain', async () => {
    const deal = await createDeal({ name: 'Contended' });
    const targets = defaultPipeline.stages.slice(1, 6).map((s: any) => s.id);
    const results = await Promise.all(
      targets.map((stageId: string) => call('PATCH', `/v1/crm/deals/${deal.id}`, { stage_id: stageId })),
    );
    for (const response of results) assert.equal(response.statusCode, 200);
    const events = (await eventsOfType(t.app, tenant.client, 'deal.stage_changed')).filter(
      (e) => e.data.id === deal.id,
    );
    assert.equal(events.length, targets.length);
    let prior = deal.stage_id;
    for (const event of events) {
      assert.equal(event.data.prior_stage_id, prior);
      prior = event.data.new_stage_id;
    }
    assert.equal((await call('GET', `/v1/crm/deals/${deal.id}`)).json().deal.stage_id, prior);
  });

  test('PATCH pipeline_id moves the deal to that pipeline (first stage unless stage_id given)', async () => {
    const deal = await createDeal({ name: 'Switcher' });
    const moved = (await call('PATCH', `/v1/crm/deals/${deal.id}`, { pipeline_id: otherPipeline.id })).json()
      .deal;
    assert.equal(moved.pipeline_id, otherPipeline.id);
    assert.equal(moved.stage_id, otherPipeline.stages[0].id);
    const event = (await eventsOfType(t.app, tenant.client, 'deal.stage_changed')).find(
      (e) => e.data.id === deal.id,
    );
    assert.equal(event.data.prior_stage_id, deal.stage_id);
    assert.equal(event.data.new_stage_id, otherPipeline.stages[0].id);
    assert.equal(event.data.prior_pipeline_id, defaultPipeline.id);

    const back = (
      await call('PATCH', `/v1/crm/deals/${deal.id}`, {
        pipeline_id: defaultPipeline.id,
        stage_id: defaultPipeline.stages[3].id,
      })
    ).json().deal;
    assert.equal(back.stage_id, defaultPipeline.stages[3].id);

    const outside = errorOf(
      await call('PATCH', `/v1/crm/deals/${deal.id}`, { stage_id: otherPipeline.stages[1].id }),
      400,
    );
    assert.equal(outside.details.fields[0].field, 'stage_id');
    const mismatched = errorOf(
      await call('PATCH', `/v1/crm/deals/${deal.id}`, {
        pipeline_id: otherPipeline.id,
        stage_id: defaultPipeline.stages[1].id,
      }),
      400,
    );
    assert.equal(mismatched.details.fields[0].field, 'stage_id');
    assert.equal(
      (await call('GET', `/v1/crm/deals/${deal.id}`)).json().deal.stage_id,
      defaultPipeline.stages[3].id,
    );
  });

  test('PATCH updates fields, clears them with null, replaces tags and merges custom_fields', async () => {
    const companyId = await insertCompany(t.database.pool, scope, 'Patch Co');
    const deal = await createDeal({
      name: 'Patchable',
      amount: 100,
      tags: ['a', 'b'],
      custom_fields: { keep: 1, drop: 2, change: 'x' },
      expected_close_date: '2025-01-15',
    });
    const response = await call('PATCH', `/v1/crm/deals/${deal.id}`, {
      name: 'Patched',
      amount: null,
      status: 'lost',
      company_id: companyId,
      expected_close_date: null,
      tags: ['c'],
      custom_fields: { drop: null, change: 'y', added: true },
    });
    assert.equal(response.statusCode, 200);
    const updated = response.json().deal;
    assert.equal(updated.name, 'Patched');
    assert.equal(updated.amount, null);
    assert.equal(updated.status, 'lost');
    assert.equal(updated.company_id, companyId);
    assert.equal(updated.expected_close_date, null);
    assert.deepEqual(updated.tags, ['c']);
    assert.deepEqual(updated.custom_fields, { keep: 1, change: 'y', added: true });
    assert.ok(updated.updated_at > deal.updated_at);

    const unchanged = (await call('PATCH', `/v1/crm/deals/${deal.id}`, {})).json().deal;
    assert.deepEqual(unchanged, updated, 'an empty PATCH changes nothing');

    const cleared = (await call('PATCH', `/v1/crm/deals/${deal.id}`, { company_id: null })).json().deal;
    assert.equal(cleared.company_id, null);

    const badRef = errorOf(
      await call('PATCH', `/v1/crm/deals/${deal.id}`, { primary_contact_id: UNKNOWN }),
      400,
    );
    assert.equal(badRef.details.fields[0].field, 'primary_contact_id');
  });

  test('DELETE archives: 204, still readable, out of lists unless include_archived=true, restorable', async () => {
    const deal = await createDeal({ name: 'To archive' });
    const response = await call('DELETE', `/v1/crm/deals/${deal.id}`);
    assert.equal(response.statusCode, 204);
    assert.equal(response.body, '');
    const read = (await call('GET', `/v1/crm/deals/${deal.id}`)).json().deal;
    assert.ok(read.archived_at);
    const listed = (await call('GET', '/v1/crm/deals?limit=200')).json().data;
    assert.ok(!listed.some((d: any) => d.id === deal.id));
    const withArchived = (await call('GET', '/v1/crm/deals?limit=200&include_archived=true')).json().data;
    assert.ok(withArchived.some((d: any) => d.id === deal.id));

    const again = await call('DELETE', `/v1/crm/deals/${deal.id}`);
    assert.equal(again.statusCode, 204);
    assert.equal((await call('GET', `/v1/crm/deals/${deal.id}`)).json().deal.archived_at, read.archived_at);

    const restored = (await call('PATCH', `/v1/crm/deals/${deal.id}`, { archived: false })).json().deal;
    assert.equal(restored.archived_at, null);
    assert.ok((await call('GET', '/v1/crm/deals?limit=200')).json().data.some((d: any) => d.id === deal.id));

    errorOf(await call('DELETE', `/v1/crm/deals/${UNKNOWN}`), 404);
    errorOf(await call('GET', `/v1/crm/deals/${UNKNOWN}`), 404);
    errorOf(await call('PATCH', `/v1/crm/deals/${UNKNOWN}`, { name: 'x' }), 404);
  });

  test('list filters: pipeline_id, stage_id, status, company_id, contact_id; newest first; pages', async () => {
    const fresh = await createTenant(t.app);
    const freshCall = caller(t.app, fresh.client);
    const freshScope = { orgId: fresh.orgId, clientId: fresh.clientId };
    const companyId = await insertCompany(t.database.pool, freshScope);
    const contactId = await insertContact(t.database.pool, freshScope);
    const pipelines = (await freshCall('GET', '/v1/crm/pipelines')).json().data;
    const second = (
      await freshCall('POST', '/v1/crm/pipelines', {
        name: 'Second',
        stages: [{ name: 'One' }, { name: 'Two' }],
      })
    ).json().pipeline;
    const make = async (body: Record<string, unknown>) =>
      (await freshCall('POST', '/v1/crm/deals', body)).json().deal;
    const plain = await make({ name: 'plain' });
    const won = await make({ name: 'won', status: 'won' });
    const withCompany = await make({ name: 'company', company_id: companyId });
    const withContact = await make({ name: 'contact', primary_contact_id: contactId });
    const inSecond = await make({ name: 'second', pipeline_id: second.id, stage_id: second.stages[1].id });

    const names = async (query: string) =>
      (await freshCall('GET', `/v1/crm/deals${query}`)).json().data.map((d: any) => d.name);
    assert.deepEqual(await names(''), ['second', 'contact', 'company', 'won', 'plain']);
    assert.deepEqual(await names(`?pipeline_id=${second.id}`), ['second']);
    assert.deepEqual(await names(`?pipeline_id=${pipelines[0].id}`), ['contact', 'company', 'won', 'plain']);
    assert.deepEqual(await names(`?stage_id=${second.stages[1].id}`), ['second']);
    assert.deepEqual(await names(`?stage_id=${second.stages[0].id}`), []);
    assert.deepEqual(await names('?status=won'), ['won']);
    assert.deepEqual(await names('?status=open'), ['second', 'contact', 'company', 'plain']);
    assert.deepEqual(await names(`?company_id=${companyId}`), ['company']);
    assert.deepEqual(await names(`?contact_id=${contactId}`), ['contact']);
    assert.deepEqual(await names(`?status=open&pipeline_id=${pipelines[0].id}&company_id=${companyId}`), [
      'company',
    ]);

    const pageOne = (await freshCall('GET', '/v1/crm/deals?limit=2')).json();
    assert.equal(pageOne.data.length, 2);
    const pageTwo = (
      await freshCall('GET', `/v1/crm/deals?limit=2&page_token=${pageOne.next_page_token}`)
    ).json();
    const pageThree = (
      await freshCall('GET', `/v1/crm/deals?limit=2&page_token=${pageTwo.next_page_token}`)
    ).json();
    assert.equal(pageThree.next_page_token, null);
    const otherList = errorOf(
      await freshCall('GET', `/v1/crm/deals?limit=2&status=won&page_token=${pageOne.next_page_token}`),
      400,
    );
    assert.equal(otherList.error, 'invalid_request', 'a token is bound to the filters it came from');
    assert.deepEqual(
      [...pageOne.data, ...pageTwo.data, ...pageThree.data].map((d: any) => d.id),
      [inSecond.id, withContact.id, withCompany.id, won.id, plain.id],
    );
  });

  test('bad input is a 400 envelope, never a 500', async () => {
    const deal = await createDeal({ name: 'Target' });
    const createBodies: [string, unknown][] = [
      ['empty body', {}],
      ['name missing', { amount: 1 }],
      ['name empty', { name: '' }],
      ['name an object', { name: { first: 'x' } }],
      ['name too long', { name: 'x'.repeat(201) }],
      ['amount a word', { name: 'x', amount: 'lots' }],
      ['amount negative', { name: 'x', amount: -1 }],
      ['amount huge', { name: 'x', amount: 1e16 }],
      ['currency not ISO', { name: 'x', currency: 'dollars' }],
      ['status unknown', { name: 'x', status: 'pending' }],
      ['pipeline_id not a uuid', { name: 'x', pipeline_id: 'default' }],
      ['stage_id not a uuid', { name: 'x', stage_id: 123 }],
      ['company_id not a uuid', { name: 'x', company_id: 'acme' }],
      ['primary_contact_id an array', { name: 'x', primary_contact_id: [UNKNOWN] }],
      ['owner_user_id not a uuid', { name: 'x', owner_user_id: 'bob' }],
      ['date not a date', { name: 'x', expected_close_date: 'next week' }],
      ['date with time', { name: 'x', expected_close_date: '2025-01-01T00:00:00Z' }],
      ['tags an object', { name: 'x', tags: { a: 1 } }],
      ['tag empty', { name: 'x', tags: [''] }],
      ['tag too long', { name: 'x', tags: ['x'.repeat(101)] }],
      ['too many tags', { name: 'x', tags: Array.from({ length: 101 }, (_, i) => `t${i}`) }],
      ['custom_fields an array', { name: 'x', custom_fields: [1, 2] }],
      [
        'custom_fields too many keys',
        { name: 'x', custom_fields: Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`k${i}`, i])) },
      ],
      ['custom_fields too large', { name: 'x', custom_fields: { big: 'x'.repeat(17_000) } }],
      ['unknown field', { name: 'x', colour: 'red' }],
      ['archived on create', { name: 'x', archived: true }],
      ['array body', [{ name: 'x' }]],
    ];
    for (const [label, body] of createBodies) {
      const response = await call('POST', '/v1/crm/deals', body);
      const error = errorOf(response, 400);
      assert.ok(['validation_error', 'invalid_request'].includes(error.error), label);
    }
    const patchBodies: [string, unknown][] = [
      ['name null', { name: null }],
      ['status unknown', { status: 'closed' }],
      ['archived not boolean', { archived: 'yes please' }],
      ['stage_id not a uuid', { stage_id: 'next' }],
      ['unknown field', { stage: 'x' }],
      ['amount an object', { amount: { value: 1 } }],
    ];
    for (const [label, body] of patchBodies) {
      const error = errorOf(await call('PATCH', `/v1/crm/deals/${deal.id}`, body), 400);
      assert.ok(['validation_error', 'invalid_request'].includes(error.error), label);
    }
    const urls = [
      '/v1/crm/deals/not-a-uuid',
      '/v1/crm/deals?status=pending',
      '/v1/crm/deals?pipeline_id=abc',
      '/v1/crm/deals?stage_id=abc',
      '/v1/crm/deals?company_id=abc',
      '/v1/crm/deals?contact_id=abc',
      '/v1/crm/deals?include_archived=perhaps',
      '/v1/crm/deals?limit=500',
      '/v1/crm/deals?page_token=bogus',
      '/v1/crm/deals?sort=name',
    ];
    for (const url of urls) errorOf(await call('GET', url), 400);
    errorOf(await call('PATCH', '/v1/crm/deals/not-a-uuid', { name: 'x' }), 400);
    errorOf(await call('DELETE', '/v1/crm/deals/not-a-uuid'), 400);
    errorOf(await call('POST', '/v1/crm/deals', 'name=x', { 'content-type': 'application/json' }), 400);
  });
});
