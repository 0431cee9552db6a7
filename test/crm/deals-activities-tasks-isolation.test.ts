import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { buildTestApp, createTenant, type TestApp, type TestTenant } from '../helpers.ts';
import { type Call, caller, errorOf, eventsOfType, insertCompany, insertContact } from './fixtures.ts';

/**
 * Records of one client, walked with the keys of the org's house client (agency key acting as itself),
 * and of another org (agency and client keys): every id is 404, every list hides them, and using
 * them as references is refused.
 */
describe('tenant isolation of pipelines, deals, activities and tasks', () => {
  let t: TestApp;
  let owner: TestTenant;
  let other: TestTenant;
  const mine: Record<string, any> = {};

  before(async () => {
    t = await buildTestApp();
    owner = await createTenant(t.app);
    other = await createTenant(t.app);
    const call = caller(t.app, owner.client);
    const scope = { orgId: owner.orgId, clientId: owner.clientId };
    mine.company = await insertCompany(t.database.pool, scope);
    mine.contact = await insertContact(t.database.pool, scope);
    mine.pipeline = (
      await call('POST', '/v1/crm/pipelines', {
        name: 'Owner only',
        stages: [{ name: 'S1' }, { name: 'S2' }],
      })
    ).json().pipeline;
    mine.deal = (
      await call('POST', '/v1/crm/deals', {
        name: 'Owner deal',
        pipeline_id: mine.pipeline.id,
        company_id: mine.company,
        primary_contact_id: mine.contact,
      })
    ).json().deal;
    mine.activity = (
      await call('POST', '/v1/crm/activities', {
        activity_type: 'note',
        deal_id: mine.deal.id,
        contact_id: mine.contact,
        company_id: mine.company,
      })
    ).json().activity;
    mine.task = (
      await call('POST', '/v1/crm/tasks', {
        title: 'Owner task',
        deal_id: mine.deal.id,
        contact_id: mine.contact,
      })
    ).json().task;
  });
  after(() => t.close());

  const outsiders = () => ({
    'agency key of the same org, acting as its house client': owner.agency,
    'agency key of another org': other.agency,
    'client key of another org': other.client,
  });

  test('every id route is 404 for keys of another client or org', async () => {
    for (const [who, headers] of Object.entries(outsiders())) {
      const call = caller(t.app, headers);
      const routes: [Parameters<Call>[0], string, unknown?][] = [
        ['GET', `/v1/crm/pipelines/${mine.pipeline.id}`],
        ['GET', `/v1/crm/deals/${mine.deal.id}`],
        ['PATCH', `/v1/crm/deals/${mine.deal.id}`, { name: 'hijacked' }],
        ['PATCH', `/v1/crm/deals/${mine.deal.id}`, { stage_id: mine.pipeline.stages[1].id }],
        ['DELETE', `/v1/crm/deals/${mine.deal.id}`],
        ['GET', `/v1/crm/activities/${mine.activity.id}`],
        ['PATCH', `/v1/crm/activities/${mine.activity.id}`, { subject: 'hijacked' }],
        ['DELETE', `/v1/crm/activities/${mine.activity.id}`],
        ['GET', `/v1/crm/tasks/${mine.task.id}`],
        ['PATCH', `/v1/crm/tasks/${mine.task.id}`, { completed: true }],
        ['DELETE', `/v1/crm/tasks/${mine.task.id}`],
      ];
      for (const [method, url, body] of routes) {
        const error = errorOf(await call(method, url, body), 404);
        assert.equal(error.error, 'not_found', `${who}: ${method} ${url}`);
      }
    }
    const call = caller(t.app, owner.client);
    assert.deepEqual(
      (await call('GET', `/v1/crm/deals/${mine.deal.id}`)).json().deal,
      mine.deal,
      'deal untouched',
    );
    assert.deepEqual(
      (await call('GET', `/v1/crm/activities/${mine.activity.id}`)).json().activity,
      mine.activity,
    );
    assert.deepEqual((await call('GET', `/v1/crm/tasks/${mine.task.id}`)).json().task, mine.task);
    assert.equal((await eventsOfType(t.app, owner.client, 'task.completed')).length, 0);
    assert.equal((await eventsOfType(t.app, owner.client, 'deal.stage_changed')).length, 0);
  });

  test('the agency key acting as the client reaches the same records', async () => {
    const call = caller(t.app, owner.agencyAsClient);
    assert.equal((await call('GET', `/v1/crm/deals/${mine.deal.id}`)).statusCode, 200);
    assert.equal((await call('GET', `/v1/crm/activities/${mine.activity.id}`)).statusCode, 200);
    assert.equal((await call('GET', `/v1/crm/tasks/${mine.task.id}`)).statusCode, 200);
    assert.equal((await call('GET', `/v1/crm/pipelines/${mine.pipeline.id}`)).statusCode, 200);
  });

  test('lists never show foreign rows, even filtered by foreign ids', async () => {
    const foreignIds = new Set([mine.pipeline.id, mine.deal.id, mine.activity.id, mine.task.id]);
    for (const [who, headers] of Object.entries(outsiders())) {
      const call = caller(t.app, headers);
      await call('POST', '/v1/crm/deals', { name: 'their own deal' });
      await call('POST', '/v1/crm/activities', { activity_type: 'note' });
      await call('POST', '/v1/crm/tasks', { title: 'their own task' });
      const urls = [
        '/v1/crm/pipelines?limit=200',
        '/v1/crm/deals?limit=200&include_archived=true',
        `/v1/crm/deals?pipeline_id=${mine.pipeline.id}`,
        `/v1/crm/deals?stage_id=${mine.deal.stage_id}`,
        `/v1/crm/deals?company_id=${mine.company}`,
        `/v1/crm/deals?contact_id=${mine.contact}`,
        '/v1/crm/activities?limit=200',
        `/v1/crm/activities?deal_id=${mine.deal.id}`,
        `/v1/crm/activities?contact_id=${mine.contact}`,
        `/v1/crm/activities?company_id=${mine.company}`,
        '/v1/crm/tasks?limit=200',
      ];
      for (const url of urls) {
        const response = await call('GET', url);
        assert.equal(response.statusCode, 200, `${who}: ${url}`);
        const rows = response.json().data;
        for (const row of rows) assert.ok(!foreignIds.has(row.id), `${who}: ${url} leaked ${row.id}`);
        if (url.includes('_id=')) assert.equal(rows.length, 0, `${who}: ${url}`);
      }
      const seen = (await call('GET', '/v1/crm/deals')).json().data;
      assert.ok(
        seen.some((d: any) => d.name === 'their own deal'),
        `${who} sees its own deals`,
      );
    }
  });

  test('foreign ids as references are refused with a 400 naming the field', async () => {
    for (const [who, headers] of Object.entries(outsiders())) {
      const call = caller(t.app, headers);
      const cases: [string, Record<string, unknown>, string][] = [
        ['/v1/crm/deals', { name: 'x', pipeline_id: mine.pipeline.id }, 'pipeline_id'],
        ['/v1/crm/deals', { name: 'x', stage_id: mine.pipeline.stages[0].id }, 'stage_id'],
        ['/v1/crm/deals', { name: 'x', company_id: mine.company }, 'company_id'],
        ['/v1/crm/deals', { name: 'x', primary_contact_id: mine.contact }, 'primary_contact_id'],
        ['/v1/crm/activities', { activity_type: 'note', deal_id: mine.deal.id }, 'deal_id'],
        ['/v1/crm/activities', { activity_type: 'note', contact_id: mine.contact }, 'contact_id'],
        ['/v1/crm/activities', { activity_type: 'note', company_id: mine.company }, 'company_id'],
        ['/v1/crm/tasks', { title: 'x', deal_id: mine.deal.id }, 'deal_id'],
        ['/v1/crm/tasks', { title: 'x', contact_id: mine.contact }, 'contact_id'],
        ['/v1/crm/tasks', { title: 'x', company_id: mine.company }, 'company_id'],
      ];
      for (const [url, body, field] of cases) {
        const error = errorOf(await call('POST', url, body), 400);
        assert.equal(error.error, 'validation_error', `${who}: ${url} ${field}`);
        assert.deepEqual(
          error.details.fields.map((f: any) => f.field),
          [field],
          `${who}: ${url} ${field}`,
        );
      }
      const { deal } = (await call('POST', '/v1/crm/deals', { name: 'own' })).json();
      const patchCases: [Record<string, unknown>, string][] = [
        [{ stage_id: mine.pipeline.stages[1].id }, 'stage_id'],
        [{ pipeline_id: mine.pipeline.id }, 'pipeline_id'],
        [{ company_id: mine.company }, 'company_id'],
      ];
      for (const [body, field] of patchCases) {
        const error = errorOf(await call('PATCH', `/v1/crm/deals/${deal.id}`, body), 400);
        assert.equal(error.details.fields[0].field, field, `${who}: PATCH deal ${field}`);
      }
    }
  });

  test('another org never sees the events of these records', async () => {
    for (const type of ['deal.created', 'task.completed', 'deal.stage_changed', 'task.due_soon']) {
      const events = await eventsOfType(t.app, other.agency, type);
      assert.ok(!events.some((e) => e.data.id === mine.deal.id || e.data.id === mine.task.id), type);
    }
    const own = await eventsOfType(t.app, owner.client, 'deal.created');
    assert.ok(own.some((e) => e.data.id === mine.deal.id));
  });
});
