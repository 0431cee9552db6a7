import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { buildTestApp, createTenant, type TestApp, type TestTenant } from '../helpers.ts';
import { type Call, caller } from './crm-client.ts';

describe('lists', () => {
  let t: TestApp;
  let tenant: TestTenant;
  let call: Call;
  let other: Call;
  const people: Record<string, string> = {};

  before(async () => {
    t = await buildTestApp();
    tenant = await createTenant(t.app);
    call = caller(t, tenant.agency);
    other = caller(t, (await createTenant(t.app)).agency);
    const specs: Record<string, object> = {
      lead: {
        email: 'lead@acme.example',
        first_name: 'Lea',
        lifecycle_stage: 'lead',
        tags: ['vip', 'east'],
        company_name: 'Acme',
      },
      customer: {
        email: 'cust@acme.example',
        first_name: 'Cus',
        lifecycle_stage: 'customer',
        tags: ['east'],
        company_name: 'Acme',
      },
      dnc: { email: 'dnc@free.example', first_name: 'Dee', lifecycle_stage: 'lead', phone: '+14155550140' },
      optout: {
        email: 'optout@free.example',
        first_name: 'Otto',
        lifecycle_stage: 'lead',
        phone: '+14155550141',
      },
      archived: { email: 'gone@free.example', first_name: 'Gon', lifecycle_stage: 'lead' },
      bare: { phone: '+14155550142' },
    };
    for (const [key, body] of Object.entries(specs)) {
      people[key] = (await call('POST', '/crm/contacts', body)).body.contact.id;
    }
    const phoneOf = async (id: string) => (await call('GET', `/crm/contacts/${id}/phones`)).body.data[0].id;
    await call('PATCH', `/crm/contacts/${people.dnc}/phones/${await phoneOf(people.dnc)}`, {
      consent_status: 'do_not_call',
    });
    await call('PATCH', `/crm/contacts/${people.optout}/phones/${await phoneOf(people.optout)}`, {
      consent_status: 'opt_out',
    });
    await call('DELETE', `/crm/contacts/${people.archived}`);
  });
  after(() => t.close());

  const memberIds = async (listId: string, query = '') => {
    const ids: string[] = [];
    let token: string | null = null;
    do {
      const reply: any = await call(
        'GET',
        `/crm/lists/${listId}/members?limit=2${query}${token ? `&page_token=${encodeURIComponent(token)}` : ''}`,
      );
      assert.equal(reply.status, 200, JSON.stringify(reply.body));
      ids.push(...reply.body.data.map((m: any) => m.entity_id));
      token = reply.body.next_page_token;
    } while (token);
    return ids.sort();
  };
  const idsOf = (...keys: string[]) => keys.map((key) => people[key]).sort();

  describe('CRUD', () => {
    test('create, read, list, update and delete a static list', async () => {
      const created = await call('POST', '/crm/lists', { name: 'Newsletter', description: 'Monthly' });
      assert.equal(created.status, 201);
      const list = created.body.list;
      assert.deepEqual(
        {
          name: list.name,
          description: list.description,
          processing_type: list.processing_type,
          filter_branch: list.filter_branch,
          exclude_dnc: list.exclude_dnc,
          exclude_unsubscribed: list.exclude_unsubscribed,
          exclude_archived: list.exclude_archived,
          emit_flow_triggers: list.emit_flow_triggers,
        },
        {
          name: 'Newsletter',
          description: 'Monthly',
          processing_type: 'static',
          filter_branch: null,
          exclude_dnc: false,
          exclude_unsubscribed: false,
          exclude_archived: true,
          emit_flow_triggers: false,
        },
      );
      assert.deepEqual((await call('GET', `/crm/lists/${list.id}`)).body.list, list);
      const listed = await call('GET', '/crm/lists?processing_type=static');
      assert.ok(listed.body.data.some((l: any) => l.id === list.id));
      assert.equal((await call('GET', '/crm/lists?processing_type=smart')).body.data.length, 0);

      const patched = await call('PATCH', `/crm/lists/${list.id}`, {
        name: 'Weekly',
        description: null,
        exclude_dnc: true,
        emit_flow_triggers: true,
      });
      assert.equal(patched.status, 200);
      assert.equal(patched.body.list.name, 'Weekly');
      assert.equal(patched.body.list.description, null);
      assert.equal(patched.body.list.exclude_dnc, true);
      assert.equal(patched.body.list.emit_flow_triggers, true);

      await call('POST', `/crm/lists/${list.id}/members`, { contact_ids: [people.lead] });
      assert.equal((await call('DELETE', `/crm/lists/${list.id}`)).status, 204);
      assert.equal((await call('GET', `/crm/lists/${list.id}`)).status, 404);
      assert.equal((await call('GET', `/crm/lists/${list.id}/members`)).status, 404);
      const { rows } = await t.database.pool.query(
        'SELECT count(*)::int AS n FROM crm_list_members WHERE list_id = $1',
        [list.id],
      );
      assert.equal(rows[0].n, 0);
      assert.equal((await call('DELETE', `/crm/lists/${list.id}`)).status, 404);
    });

    test('a smart list needs a filter_branch; a static list cannot have one', async () => {
      const smartWithout = await call('POST', '/crm/lists', { name: 'S', processing_type: 'smart' });
      assert.equal(smartWithout.status, 400);
      assert.equal(smartWithout.body.details.fields[0].field, 'filter_branch');
      const staticWith = await call('POST', '/crm/lists', {
        name: 'S',
        filter_branch: { field: 'tags', operator: 'has', value: 'vip' },
      });
      assert.equal(staticWith.status, 400);
      const badType = await call('POST', '/crm/lists', { name: 'S', processing_type: 'dynamic' });
      assert.equal(badType.status, 400);
    });
  });

  describe('static members', () => {
    test('bulk add reports added, already present and not found (foreign, unknown); repeats count once', async () => {
      const list = (await call('POST', '/crm/lists', { name: 'Bulk' })).body.list;
      const foreign = (await other('POST', '/crm/contacts', { email: 'foreign@example.org' })).body.contact
        .id;
      const unknown = randomUUID();
      const first = await call('POST', `/crm/lists/${list.id}/members`, {
        contact_ids: [people.lead, people.customer, people.lead.toUpperCase(), foreign, unknown],
      });
      assert.equal(first.status, 200);
      assert.deepEqual(
        { ...first.body, not_found_ids: first.body.not_found_ids.sort() },
        {
          entity_type: 'contact',
          added: 2,
          already_present: 0,
          not_found: 2,
          not_found_ids: [foreign, unknown].sort(),
        },
      );
      const second = await call('POST', `/crm/lists/${list.id}/members`, {
        entity_ids: [people.lead, people.dnc],
        entity_type: 'contact',
      });
      assert.deepEqual([second.body.added, second.body.already_present, second.body.not_found], [1, 1, 0]);
      assert.deepEqual(await memberIds(list.id), idsOf('lead', 'customer', 'dnc'));

      const members = (await call('GET', `/crm/lists/${list.id}/members`)).body.data;
      const lead = members.find((m: any) => m.entity_id === people.lead);
      assert.equal(lead.entity_type, 'contact');
      assert.equal(lead.contact.id, people.lead);
      assert.equal(lead.contact.email, 'lead@acme.example');
      assert.equal(lead.company, null);
      assert.match(lead.added_at, /Z$/);

      assert.equal((await call('DELETE', `/crm/lists/${list.id}/members/${people.lead}`)).status, 204);
      assert.equal((await call('DELETE', `/crm/lists/${list.id}/members/${people.lead}`)).status, 404);
      assert.deepEqual(await memberIds(list.id), idsOf('customer', 'dnc'));
      assert.equal((await other('GET', `/crm/lists/${list.id}/members`)).status, 404);
      assert.equal(
        (await other('POST', `/crm/lists/${list.id}/members`, { contact_ids: [foreign] })).status,
        404,
      );
      assert.equal((await other('DELETE', `/crm/lists/${list.id}/members/${people.customer}`)).status, 404);
    });

    test('companies and deals are members too, checked against the tenant', async () => {
      const list = (await call('POST', '/crm/lists', { name: 'Accounts' })).body.list;
      const company = (await call('POST', '/crm/companies', { name: 'Member Co', domain: 'member.example' }))
        .body.company;
      const added = await call('POST', `/crm/lists/${list.id}/members`, {
        entity_ids: [company.id, people.lead],
        entity_type: 'company',
      });
      assert.deepEqual([added.body.added, added.body.not_found_ids], [1, [people.lead]]);

      const pipelineId = randomUUID();
      const stageId = randomUUID();
      const dealId = randomUUID();
      const client = tenant.houseClientId;
      const pool = t.database.pool;
      await pool.query(`INSERT INTO pipelines (id, org_id, client_id, name) VALUES ($1, $2, $3, 'P')`, [
        pipelineId,
        tenant.orgId,
        client,
      ]);
      await pool.query(
        `INSERT INTO pipeline_stages (id, org_id, client_id, pipeline_id, name, position) VALUES ($1, $2, $3, $4, 'S', 0)`,
        [stageId, tenant.orgId, client, pipelineId],
      );
      await pool.query(
        `INSERT INTO deals (id, org_id, client_id, name, pipeline_id, stage_id) VALUES ($1, $2, $3, 'D', $4, $5)`,
        [dealId, tenant.orgId, client, pipelineId, stageId],
      );
      const deal = await call('POST', `/crm/lists/${list.id}/members`, {
        entity_ids: [dealId, company.id],
        entity_type: 'deal',
      });
      assert.deepEqual([deal.body.added, deal.body.not_found_ids], [1, [company.id]]);
      const members = (await call('GET', `/crm/lists/${list.id}/members`)).body.data;
      assert.deepEqual(members.map((m: any) => m.entity_type).sort(), ['company', 'deal']);
      assert.equal(members.find((m: any) => m.entity_type === 'company').company.domain, 'member.example');

      await call('DELETE', `/crm/companies/${company.id}`);
      await t.database.pool.query(`UPDATE deals SET archived_at = now() WHERE id = $1`, [dealId]);
      assert.deepEqual(await memberIds(list.id), []);
      await call('PATCH', `/crm/lists/${list.id}`, { exclude_archived: false });
      assert.deepEqual(await memberIds(list.id), [company.id, dealId].sort());
    });

    test('a deal member comes back with its deal, as GET /crm/deals/{id} shows it', async () => {
      const list = (await call('POST', '/crm/lists', { name: 'Pipeline review' })).body.list;
      const created = await call('POST', '/crm/deals', { name: 'Big one', amount: 5000, tags: ['q4'] });
      const deal = created.body.deal;
      await call('POST', `/crm/lists/${list.id}/members`, { entity_ids: [deal.id], entity_type: 'deal' });
      await call('POST', `/crm/lists/${list.id}/members`, { contact_ids: [people.lead] });

      const members = (await call('GET', `/crm/lists/${list.id}/members`)).body.data;
      const dealMember = members.find((m: any) => m.entity_type === 'deal');
      assert.deepEqual(dealMember.deal, (await call('GET', `/crm/deals/${deal.id}`)).body.deal);
      assert.deepEqual([dealMember.contact, dealMember.company], [null, null]);
      const contactMember = members.find((m: any) => m.entity_type === 'contact');
      assert.equal(contactMember.contact.id, people.lead);
      assert.equal(contactMember.deal, null);
    });

    test('exclusions apply on read: archived, do-not-call, unsubscribed', async () => {
      const list = (await call('POST', '/crm/lists', { name: 'Everyone' })).body.list;
      await call('POST', `/crm/lists/${list.id}/members`, { contact_ids: Object.values(people) });
      assert.deepEqual(await memberIds(list.id), idsOf('lead', 'customer', 'dnc', 'optout', 'bare'));
      await call('PATCH', `/crm/lists/${list.id}`, { exclude_dnc: true, exclude_unsubscribed: true });
      assert.deepEqual(await memberIds(list.id), idsOf('lead', 'customer', 'bare'));
      await call('PATCH', `/crm/lists/${list.id}`, {
        exclude_dnc: false,
        exclude_unsubscribed: false,
        exclude_archived: false,
      });
      assert.deepEqual(await memberIds(list.id), Object.values(people).sort());
    });

    test('more than 10,000 ids is 400; 10,000 ids are added in chunks well under a few seconds', async () => {
      // A tenant of its own, so that these contacts stay out of the other tests' lists.
      const bulkTenant = await createTenant(t.app);
      const bulk = caller(t, bulkTenant.agency);
      const list = (await bulk('POST', '/crm/lists', { name: 'Huge' })).body.list;
      const tooMany = await bulk('POST', `/crm/lists/${list.id}/members`, {
        contact_ids: Array.from({ length: 10_001 }, () => randomUUID()),
      });
      assert.equal(tooMany.status, 400);
      assert.equal(tooMany.body.error, 'validation_error');

      const { rows } = await t.database.pool.query<{ id: string }>(
        `INSERT INTO contacts (id, org_id, client_id, full_name)
         SELECT gen_random_uuid(), $1, $2, 'bulk ' || n FROM generate_series(1, 10000) n RETURNING id`,
        [bulkTenant.orgId, bulkTenant.houseClientId],
      );
      const started = Date.now();
      const added = await bulk('POST', `/crm/lists/${list.id}/members`, {
        contact_ids: rows.map((r) => r.id),
      });
      const elapsed = Date.now() - started;
      assert.equal(added.status, 200);
      assert.equal(added.body.added, 10_000);
      assert.equal(added.body.not_found, 0);
      assert.ok(elapsed < 5000, `took ${elapsed} ms`);
      const again = await bulk('POST', `/crm/lists/${list.id}/members`, {
        contact_ids: rows.map((r) => r.id),
      });
      assert.deepEqual([again.body.added, again.body.already_present], [0, 10_000]);
    });

    test('the body takes contact_ids or entity_ids with entity_type', async () => {
      const list = (await call('POST', '/crm/lists', { name: 'Shapes' })).body.list;
      const bodies = [
        {},
        { contact_ids: [] },
        { contact_ids: ['nope'] },
        { entity_ids: [people.lead] },
        { entity_ids: [people.lead], entity_type: 'person' },
        { contact_ids: [people.lead], entity_ids: [people.lead], entity_type: 'contact' },
        { contact_ids: [people.lead], entity_type: 'company' },
        { contact_ids: people.lead, extra: true },
      ];
      for (const body of bodies) {
        const reply = await call('POST', `/crm/lists/${list.id}/members`, body);
        assert.equal(reply.status, 400, JSON.stringify(body));
        assert.equal(reply.body.error, 'validation_error', JSON.stringify(body));
      }
      const missing = await call('POST', `/crm/lists/${randomUUID()}/members`, {
        contact_ids: [people.lead],
      });
      assert.equal(missing.status, 404);
    });
  });

  describe('smart lists', () => {
    const smart = async (filter: unknown, extra: object = {}) => {
      const reply = await call('POST', '/crm/lists', {
        name: 'Smart',
        processing_type: 'smart',
        filter_branch: filter,
        ...extra,
      });
      assert.equal(reply.status, 201, JSON.stringify(reply.body));
      return reply.body.list;
    };

    test('members are the contacts matching the filter now, with exclusions', async () => {
      const filter = { and: [{ field: 'lifecycle_stage', operator: 'eq', value: 'LEAD' }] };
      const list = await smart(filter);
      assert.deepEqual((await call('GET', `/crm/lists/${list.id}`)).body.list.filter_branch, filter);
      assert.deepEqual(await memberIds(list.id), idsOf('lead', 'dnc', 'optout'));
      const members = (await call('GET', `/crm/lists/${list.id}/members`)).body.data;
      assert.ok(members.every((m: any) => m.entity_type === 'contact' && m.added_at === null && m.contact));

      await call('PATCH', `/crm/lists/${list.id}`, { exclude_dnc: true });
      assert.deepEqual(await memberIds(list.id), idsOf('lead', 'optout'));
      await call('PATCH', `/crm/lists/${list.id}`, { exclude_unsubscribed: true });
      assert.deepEqual(await memberIds(list.id), idsOf('lead'));
      await call('PATCH', `/crm/lists/${list.id}`, {
        exclude_dnc: false,
        exclude_unsubscribed: false,
        exclude_archived: false,
      });
      assert.deepEqual(await memberIds(list.id), idsOf('lead', 'dnc', 'optout', 'archived'));

      await call('PATCH', `/crm/contacts/${people.customer}`, { lifecycle_stage: 'lead' });
      assert.deepEqual(await memberIds(list.id), idsOf('lead', 'customer', 'dnc', 'optout', 'archived'));
      await call('PATCH', `/crm/contacts/${people.customer}`, { lifecycle_stage: 'customer' });

      const add = await call('POST', `/crm/lists/${list.id}/members`, { contact_ids: [people.bare] });
      assert.equal(add.status, 400);
      assert.equal(add.body.error, 'invalid_request');
      assert.equal((await call('DELETE', `/crm/lists/${list.id}/members/${people.lead}`)).status, 400);
    });

    test('fields and operators: tags, company, phone consent, email, or-groups, negations', async () => {
      const cases: [unknown, string[]][] = [
        [{ field: 'tags', operator: 'has', value: 'vip' }, ['lead']],
        [{ field: 'tags', operator: 'has_any', value: ['vip', 'east'] }, ['lead', 'customer']],
        [{ field: 'tags', operator: 'has_all', value: ['vip', 'east'] }, ['lead']],
        [{ field: 'tags', operator: 'has_none', value: ['east'] }, ['dnc', 'optout', 'bare']],
        [{ field: 'tags', operator: 'is_empty' }, ['dnc', 'optout', 'bare']],
        [{ field: 'company.domain', operator: 'eq', value: 'acme.example' }, ['lead', 'customer']],
        [{ field: 'company.name', operator: 'contains', value: 'cm' }, ['lead', 'customer']],
        [{ field: 'company_id', operator: 'is_empty' }, ['dnc', 'optout', 'bare']],
        [{ field: 'phone.consent_status', operator: 'eq', value: 'do_not_call' }, ['dnc']],
        [
          { field: 'phone.consent_status', operator: 'in', value: ['opt_out', 'do_not_call'] },
          ['dnc', 'optout'],
        ],
        [
          { field: 'phone.consent_status', operator: 'neq', value: 'unknown' },
          ['lead', 'customer', 'dnc', 'optout'],
        ],
        [{ field: 'phone', operator: 'eq', value: '(415) 555-0142' }, ['bare']],
        [{ field: 'email', operator: 'ends_with', value: '@free.example' }, ['dnc', 'optout']],
        [{ field: 'email', operator: 'is_empty' }, ['bare']],
        [{ field: 'first_name', operator: 'neq', value: 'lea' }, ['customer', 'dnc', 'optout', 'bare']],
        [{ field: 'first_name', operator: 'in', value: ['LEA', 'otto'] }, ['lead', 'optout']],
        [{ field: 'first_name', operator: 'starts_with', value: 'D' }, ['dnc']],
        [
          {
            or: [
              { field: 'lifecycle_stage', operator: 'eq', value: 'customer' },
              {
                and: [
                  { field: 'lifecycle_stage', operator: 'eq', value: 'lead' },
                  { field: 'phone.consent_status', operator: 'eq', value: 'opt_out' },
                ],
              },
            ],
          },
          ['customer', 'optout'],
        ],
        [
          { field: 'created_at', operator: 'after', value: '2000-01-01T00:00:00Z' },
          ['lead', 'customer', 'dnc', 'optout', 'bare'],
        ],
        [{ field: 'created_at', operator: 'before', value: '2000-01-01T00:00:00Z' }, []],
        [
          { field: 'created_at', operator: 'within_last_days', value: 1 },
          ['lead', 'customer', 'dnc', 'optout', 'bare'],
        ],
        [{ field: 'first_name', operator: 'eq', value: "x' OR '1'='1" }, []],
        [{ field: 'first_name', operator: 'contains', value: '%' }, []],
      ];
      for (const [filter, expected] of cases) {
        const list = await smart(filter);
        assert.deepEqual(await memberIds(list.id), idsOf(...expected), JSON.stringify(filter));
      }
    });

    test('an invalid filter_branch is 400 naming the failing path', async () => {
      const cases: [unknown, string][] = [
        ['tags', 'filter_branch'],
        [{ and: [] }, 'filter_branch.and'],
        [{ and: [{ field: 'nope', operator: 'eq', value: 'x' }] }, 'filter_branch.and[0].field'],
        [{ or: [{ field: 'tags', operator: 'eq', value: 'x' }] }, 'filter_branch.or[0].operator'],
        [
          { and: [{ or: [{ field: 'first_name', operator: 'eq', value: 7 }] }] },
          'filter_branch.and[0].or[0].value',
        ],
        [{ field: 'phone.consent_status', operator: 'eq', value: 'sometimes' }, 'filter_branch.value'],
        [{ field: 'phone.consent_status', operator: 'in', value: ['opt_in', 'x'] }, 'filter_branch.value[1]'],
        [{ field: 'owner_user_id', operator: 'eq', value: 'not-a-uuid' }, 'filter_branch.value'],
        [{ field: 'tags', operator: 'is_empty', value: 'x' }, 'filter_branch.value'],
        [{ field: 'created_at', operator: 'after', value: 'last week' }, 'filter_branch.value'],
        [{ field: 'phone', operator: 'eq', value: 'call me' }, 'filter_branch.value'],
        [{ field: 'email', operator: 'eq', value: 'x', extra: 1 }, 'filter_branch.extra'],
        [{ and: [{ field: 'email', operator: 'is_empty' }], or: [] }, 'filter_branch'],
        [{ field: 'first_name', operator: 'in', value: Array(101).fill('x') }, 'filter_branch.value'],
        [
          {
            and: [
              { and: [{ and: [{ and: [{ and: [{ and: [{ field: 'tags', operator: 'is_empty' }] }] }] }] }] },
            ],
          },
          'filter_branch.and[0].and[0].and[0].and[0].and[0]',
        ],
        [{ and: Array(51).fill({ field: 'tags', operator: 'is_empty' }) }, 'filter_branch.and'],
      ];
      for (const [filter, path] of cases) {
        const reply = await call('POST', '/crm/lists', {
          name: 'Bad',
          processing_type: 'smart',
          filter_branch: filter,
        });
        assert.equal(reply.status, 400, JSON.stringify(filter));
        assert.equal(reply.body.error, 'validation_error');
        assert.equal(reply.body.details.fields[0].field, path, JSON.stringify(filter));
      }
      const list = await smart({ field: 'tags', operator: 'is_empty' });
      const patch = await call('PATCH', `/crm/lists/${list.id}`, { filter_branch: { field: 'x' } });
      assert.equal(patch.status, 400);
      assert.equal(patch.body.details.fields[0].field, 'filter_branch.field');
    });

    test('switching kinds: static to smart drops static members, smart to static drops the filter', async () => {
      const list = (await call('POST', '/crm/lists', { name: 'Switch' })).body.list;
      await call('POST', `/crm/lists/${list.id}/members`, { contact_ids: [people.bare] });
      const needsFilter = await call('PATCH', `/crm/lists/${list.id}`, { processing_type: 'smart' });
      assert.equal(needsFilter.status, 400);
      const toSmart = await call('PATCH', `/crm/lists/${list.id}`, {
        processing_type: 'smart',
        filter_branch: { field: 'tags', operator: 'has', value: 'vip' },
      });
      assert.equal(toSmart.body.list.processing_type, 'smart');
      assert.deepEqual(await memberIds(list.id), idsOf('lead'));
      const toStatic = await call('PATCH', `/crm/lists/${list.id}`, { processing_type: 'static' });
      assert.equal(toStatic.body.list.filter_branch, null);
      assert.deepEqual(await memberIds(list.id), []);
    });
  });
});
