import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DEFAULT_PIPELINE } from '../../src/modules/pipelines/service.ts';
import { buildTestApp, createTenant, type TestApp, type TestTenant } from '../helpers.ts';
import { type Call, caller, errorOf } from './fixtures.ts';

describe('pipelines', () => {
  let t: TestApp;
  let tenant: TestTenant;
  let call: Call;

  before(async () => {
    t = await buildTestApp();
    tenant = await createTenant(t.app);
    call = caller(t.app, tenant.client);
  });
  after(() => t.close());

  test('GET /v1/crm/pipelines creates the default pipeline on first use, with ordered stages', async () => {
    const response = await call('GET', '/v1/crm/pipelines');
    assert.equal(response.statusCode, 200);
    const page = response.json();
    assert.equal(page.next_page_token, null);
    assert.equal(page.limit, 50);
    assert.equal(page.data.length, 1);
    const [pipeline] = page.data;
    assert.equal(pipeline.is_default, true);
    assert.equal(pipeline.name, DEFAULT_PIPELINE.name);
    assert.deepEqual(
      pipeline.stages.map((s: any) => [s.name, s.position, s.probability]),
      DEFAULT_PIPELINE.stages.map((s, i) => [s.name, i, s.probability]),
    );
    assert.match(pipeline.created_at, /Z$/);

    const again = (await call('GET', '/v1/crm/pipelines')).json();
    assert.deepEqual(again.data, page.data, 'a second read creates nothing new');
  });

  test('concurrent first uses create exactly one default pipeline', async () => {
    const fresh = await createTenant(t.app);
    const freshCall = caller(t.app, fresh.client);
    const results = await Promise.all([
      ...Array.from({ length: 10 }, () => freshCall('GET', '/v1/crm/pipelines')),
      ...Array.from({ length: 10 }, (_, i) => freshCall('POST', '/v1/crm/deals', { name: `Deal ${i}` })),
    ]);
    for (const response of results) assert.ok(response.statusCode < 300, response.body);
    const { rows } = await t.database.pool.query(
      'SELECT count(*)::int AS n FROM pipelines WHERE org_id = $1 AND client_id = $2',
      [fresh.orgId, fresh.clientId],
    );
    assert.equal(rows[0].n, 1);
    const deals = (await freshCall('GET', '/v1/crm/deals')).json().data;
    assert.equal(new Set(deals.map((d: any) => d.pipeline_id)).size, 1);
  });

  test('POST /v1/crm/pipelines creates a pipeline with its stages in order; GET one reads it', async () => {
    const response = await call('POST', '/v1/crm/pipelines', {
      name: 'Renewals',
      stages: [
        { name: 'Notice', probability: 0.1 },
        { name: 'Negotiation' },
        { name: 'Renewed', probability: 1 },
      ],
    });
    assert.equal(response.statusCode, 201);
    const { pipeline } = response.json();
    assert.equal(pipeline.name, 'Renewals');
    assert.equal(pipeline.is_default, false);
    assert.deepEqual(
      pipeline.stages.map((s: any) => [s.name, s.position, s.probability]),
      [
        ['Notice', 0, 0.1],
        ['Negotiation', 1, null],
        ['Renewed', 2, 1],
      ],
    );
    const read = await call('GET', `/v1/crm/pipelines/${pipeline.id}`);
    assert.equal(read.statusCode, 200);
    assert.deepEqual(read.json().pipeline, pipeline);

    const list = (await call('GET', '/v1/crm/pipelines')).json().data;
    assert.deepEqual(
      list.map((p: any) => [p.name, p.is_default]),
      [
        [DEFAULT_PIPELINE.name, true],
        ['Renewals', false],
      ],
    );
  });

  test('a client whose first pipeline is created by POST still gets the built-in default', async () => {
    const fresh = await createTenant(t.app);
    const freshCall = caller(t.app, fresh.client);
    await freshCall('POST', '/v1/crm/pipelines', { name: 'Custom', stages: [{ name: 'Only' }] });
    const list = (await freshCall('GET', '/v1/crm/pipelines')).json().data;
    assert.deepEqual(
      list.map((p: any) => [p.name, p.is_default]),
      [
        [DEFAULT_PIPELINE.name, true],
        ['Custom', false],
      ],
    );
  });

  test('is_default: true replaces the default; new deals then land in its first stage', async () => {
    const fresh = await createTenant(t.app);
    const freshCall = caller(t.app, fresh.client);
    await freshCall('GET', '/v1/crm/pipelines');
    const results = await Promise.all(
      ['One', 'Two', 'Three'].map((name) =>
        freshCall('POST', '/v1/crm/pipelines', {
          name,
          is_default: true,
          stages: [{ name: `${name} start` }, { name: `${name} end` }],
        }),
      ),
    );
    for (const response of results) assert.equal(response.statusCode, 201, response.body);
    const list = (await freshCall('GET', '/v1/crm/pipelines')).json().data;
    const defaults = list.filter((p: any) => p.is_default);
    assert.equal(defaults.length, 1, 'exactly one default after concurrent switches');
    const { deal } = (await freshCall('POST', '/v1/crm/deals', { name: 'Lands in default' })).json();
    assert.equal(deal.pipeline_id, defaults[0].id);
    assert.equal(deal.stage_id, defaults[0].stages[0].id);
  });

  test('paginates with page tokens', async () => {
    const fresh = await createTenant(t.app);
    const freshCall = caller(t.app, fresh.client);
    for (const name of ['A', 'B', 'C']) {
      await freshCall('POST', '/v1/crm/pipelines', { name, stages: [{ name: 'S' }] });
    }
    const first = (await freshCall('GET', '/v1/crm/pipelines?limit=2')).json();
    assert.equal(first.data.length, 2);
    assert.ok(first.next_page_token);
    const second = (
      await freshCall('GET', `/v1/crm/pipelines?limit=2&page_token=${first.next_page_token}`)
    ).json();
    assert.deepEqual(
      [...first.data, ...second.data].map((p: any) => p.name),
      [DEFAULT_PIPELINE.name, 'A', 'B', 'C'],
    );
    assert.equal(second.next_page_token, null);
  });

  test('bad input is a 400 envelope', async () => {
    const bodies: [string, unknown][] = [
      ['no name', { stages: [{ name: 'S' }] }],
      ['no stages', { name: 'P' }],
      ['empty stages', { name: 'P', stages: [] }],
      ['stages not an array', { name: 'P', stages: { name: 'S' } }],
      ['name an object', { name: { x: 1 }, stages: [{ name: 'S' }] }],
      ['name too long', { name: 'x'.repeat(201), stages: [{ name: 'S' }] }],
      ['stage name too long', { name: 'P', stages: [{ name: 'x'.repeat(101) }] }],
      ['too many stages', { name: 'P', stages: Array.from({ length: 51 }, (_, i) => ({ name: `S${i}` })) }],
      ['probability above 1', { name: 'P', stages: [{ name: 'S', probability: 1.5 }] }],
      ['probability not a number', { name: 'P', stages: [{ name: 'S', probability: 'high' }] }],
      ['unknown field', { name: 'P', stages: [{ name: 'S' }], color: 'red' }],
      ['unknown stage field', { name: 'P', stages: [{ name: 'S', color: 'red' }] }],
      ['is_default not a boolean', { name: 'P', is_default: 'maybe', stages: [{ name: 'S' }] }],
      ['repeated stage names', { name: 'P', stages: [{ name: 'Same' }, { name: 'same' }] }],
    ];
    for (const [label, body] of bodies) {
      const error = errorOf(await call('POST', '/v1/crm/pipelines', body), 400);
      assert.equal(error.error, 'validation_error', label);
      assert.ok(Array.isArray(error.details?.fields), label);
    }
    errorOf(
      await call('POST', '/v1/crm/pipelines', '[not json', { 'content-type': 'application/json' }),
      400,
    );
    errorOf(await call('GET', '/v1/crm/pipelines/not-a-uuid'), 400);
    errorOf(await call('GET', '/v1/crm/pipelines?limit=0'), 400);
    errorOf(await call('GET', '/v1/crm/pipelines?limit=201'), 400);
    errorOf(await call('GET', '/v1/crm/pipelines?page_token=forged'), 400);
    errorOf(await call('GET', '/v1/crm/pipelines?colour=red'), 400);
  });

  test('pipelines of another client or org are 404 and never listed', async () => {
    const mine = (
      await call('POST', '/v1/crm/pipelines', { name: 'Private', stages: [{ name: 'S' }] })
    ).json().pipeline;
    const other = await createTenant(t.app);
    for (const headers of [tenant.agency, other.agency, other.client]) {
      const outsider = caller(t.app, headers);
      errorOf(await outsider('GET', `/v1/crm/pipelines/${mine.id}`), 404);
      const list = (await outsider('GET', '/v1/crm/pipelines')).json().data;
      assert.ok(!list.some((p: any) => p.id === mine.id));
      assert.equal(list.filter((p: any) => p.is_default).length, 1, 'each tenant has its own default');
    }
    const sameClient = caller(t.app, tenant.agencyAsClient);
    assert.equal((await sameClient('GET', `/v1/crm/pipelines/${mine.id}`)).statusCode, 200);
  });
});
