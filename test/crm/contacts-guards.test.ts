import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { buildTestApp, createTenant, type TestApp, type TestTenant } from '../helpers.ts';
import { type Call, caller, type Reply } from './crm-client.ts';

/** Tenant isolation and bad input on every contacts, companies and lists endpoint. */
describe('contacts, companies and lists: isolation and bad input', () => {
  let t: TestApp;
  let tenant: TestTenant;
  let owner: Call;
  const ids = {
    contact: '',
    phone: '',
    email: '',
    company: '',
    staticList: '',
    smartList: '',
  };

  before(async () => {
    t = await buildTestApp();
    tenant = await createTenant(t.app);
    owner = caller(t, tenant.agency);
    const company = await owner('POST', '/crm/companies', { name: 'Owned', domain: 'owned.example' });
    ids.company = company.body.company.id;
    const contact = await owner('POST', '/crm/contacts', {
      email: 'owned@owned.example',
      phone: '+14155550160',
      first_name: 'Owned',
      company_id: ids.company,
    });
    ids.contact = contact.body.contact.id;
    ids.phone = (await owner('GET', `/crm/contacts/${ids.contact}/phones`)).body.data[0].id;
    ids.email = (await owner('GET', `/crm/contacts/${ids.contact}/emails`)).body.data[0].id;
    ids.staticList = (await owner('POST', '/crm/lists', { name: 'Owned static' })).body.list.id;
    await owner('POST', `/crm/lists/${ids.staticList}/members`, { contact_ids: [ids.contact] });
    ids.smartList = (
      await owner('POST', '/crm/lists', {
        name: 'Owned smart',
        processing_type: 'smart',
        filter_branch: { field: 'first_name', operator: 'eq', value: 'Owned' },
      })
    ).body.list.id;
  });
  after(() => t.close());

  /** Every route that takes a foreign id, with a body that would be valid for the owner. */
  const foreignIdCalls = (): [Parameters<Call>[0], string, unknown?][] => [
    ['GET', `/crm/contacts/${ids.contact}`],
    ['PATCH', `/crm/contacts/${ids.contact}`, { first_name: 'Intruder' }],
    ['DELETE', `/crm/contacts/${ids.contact}`],
    ['GET', `/crm/contacts/${ids.contact}/phones`],
    ['POST', `/crm/contacts/${ids.contact}/phones`, { phone: '+14155550161' }],
    ['GET', `/crm/contacts/${ids.contact}/phones/${ids.phone}`],
    ['PATCH', `/crm/contacts/${ids.contact}/phones/${ids.phone}`, { status: 'invalid' }],
    ['DELETE', `/crm/contacts/${ids.contact}/phones/${ids.phone}`],
    ['GET', `/crm/contacts/${ids.contact}/emails`],
    ['POST', `/crm/contacts/${ids.contact}/emails`, { email: 'intruder@example.org' }],
    ['GET', `/crm/contacts/${ids.contact}/emails/${ids.email}`],
    ['PATCH', `/crm/contacts/${ids.contact}/emails/${ids.email}`, { status: 'bounced' }],
    ['DELETE', `/crm/contacts/${ids.contact}/emails/${ids.email}`],
    ['GET', `/crm/companies/${ids.company}`],
    ['PATCH', `/crm/companies/${ids.company}`, { name: 'Intruder' }],
    ['DELETE', `/crm/companies/${ids.company}`],
    ['GET', `/crm/lists/${ids.staticList}`],
    ['PATCH', `/crm/lists/${ids.staticList}`, { name: 'Intruder' }],
    ['GET', `/crm/lists/${ids.staticList}/members`],
    ['POST', `/crm/lists/${ids.staticList}/members`, { contact_ids: [ids.contact] }],
    ['DELETE', `/crm/lists/${ids.staticList}/members/${ids.contact}`],
    ['GET', `/crm/lists/${ids.smartList}/members`],
    ['DELETE', `/crm/lists/${ids.smartList}`],
  ];

  for (const [name, intruderOf] of [
    ['another client of the same org (client key)', (x: TestTenant) => x.client],
    ['the agency key acting as another client', (x: TestTenant) => x.agencyAsClient],
    ['a key of another org', null],
  ] as const) {
    test(`${name}: 404 for every foreign id, no foreign rows in any list`, async () => {
      const headers = intruderOf ? intruderOf(tenant) : (await createTenant(t.app)).agency;
      const intruder = caller(t, headers);
      for (const [method, url, body] of foreignIdCalls()) {
        const reply = await intruder(method, url, body);
        assert.equal(reply.status, 404, `${method} ${url}: ${JSON.stringify(reply.body)}`);
        assert.equal(reply.body.error, 'not_found');
      }
      const lists: [string, string][] = [
        ['/crm/contacts?include_archived=true', ids.contact],
        ['/crm/contacts?q=Owned', ids.contact],
        ['/crm/contacts?email=owned@owned.example', ids.contact],
        ['/crm/contacts?phone=%2B14155550160', ids.contact],
        [`/crm/contacts?company_id=${ids.company}`, ids.contact],
        ['/crm/companies?include_archived=true', ids.company],
        ['/crm/companies?domain=owned.example', ids.company],
        ['/crm/lists', ids.staticList],
      ];
      for (const [url, foreignId] of lists) {
        const reply = await intruder('GET', url);
        assert.equal(reply.status, 200, url);
        assert.ok(!reply.body.data.some((row: any) => row.id === foreignId), url);
      }
      // The owner's identities and domain are free in the intruder's tenant.
      const own = await intruder('POST', '/crm/contacts', {
        email: 'owned@owned.example',
        phone: '+14155550160',
      });
      assert.equal(own.status, 201);
      assert.notEqual(own.body.contact.id, ids.contact);
      const company = await intruder('POST', '/crm/companies', { name: 'Mine', domain: 'owned.example' });
      assert.equal(company.status, 201);
      const smart = await intruder('POST', '/crm/lists', {
        name: 'Mine',
        processing_type: 'smart',
        filter_branch: { field: 'first_name', operator: 'eq', value: 'Owned' },
      });
      assert.deepEqual((await intruder('GET', `/crm/lists/${smart.body.list.id}/members`)).body.data, []);
      const own2 = await intruder('POST', `/crm/contacts/${own.body.contact.id}/emails`, {
        email: 'x@owned.example',
      });
      assert.equal(own2.status, 201);
      // Clean the intruder's rows so the next intruder (maybe the same tenant) starts afresh.
      await t.database.pool.query('DELETE FROM contacts WHERE id = $1', [own.body.contact.id]);
      await t.database.pool.query('DELETE FROM companies WHERE id = $1', [company.body.company.id]);

      const after = await owner('GET', `/crm/contacts/${ids.contact}`);
      assert.equal(after.body.contact.first_name, 'Owned');
      assert.equal(after.body.contact.archived_at, null);
      assert.equal((await owner('GET', `/crm/contacts/${ids.contact}/phones`)).body.data.length, 1);
      assert.equal((await owner('GET', `/crm/companies/${ids.company}`)).body.company.name, 'Owned');
      assert.equal((await owner('GET', `/crm/lists/${ids.staticList}/members`)).body.data.length, 1);
      assert.equal((await owner('GET', `/crm/lists/${ids.smartList}`)).status, 200);
    });
  }

  describe('bad input is a 400 envelope, never a 500', () => {
    const expect400 = (reply: Reply, what: string) => {
      assert.equal(reply.status, 400, `${what}: ${reply.status} ${JSON.stringify(reply.body)}`);
      assert.ok(['validation_error', 'invalid_request'].includes(reply.body.error), what);
      assert.equal(typeof reply.body.message, 'string', what);
    };
    const long = (n: number) => 'x'.repeat(n);

    test('malformed ids in every path', async () => {
      const bad = 'not-a-uuid';
      const urls: [Parameters<Call>[0], string, unknown?][] = [
        ['GET', `/crm/contacts/${bad}`],
        ['PATCH', `/crm/contacts/${bad}`, {}],
        ['DELETE', `/crm/contacts/${bad}`],
        ['GET', `/crm/contacts/${bad}/phones`],
        ['POST', `/crm/contacts/${bad}/phones`, { phone: '+14155550170' }],
        ['GET', `/crm/contacts/${ids.contact}/phones/${bad}`],
        ['PATCH', `/crm/contacts/${ids.contact}/phones/${bad}`, {}],
        ['DELETE', `/crm/contacts/${ids.contact}/phones/${bad}`],
        ['GET', `/crm/contacts/${bad}/emails`],
        ['POST', `/crm/contacts/${bad}/emails`, { email: 'a@b.example' }],
        ['GET', `/crm/contacts/${ids.contact}/emails/${bad}`],
        ['PATCH', `/crm/contacts/${ids.contact}/emails/${bad}`, {}],
        ['DELETE', `/crm/contacts/${ids.contact}/emails/${bad}`],
        ['GET', `/crm/companies/${bad}`],
        ['PATCH', `/crm/companies/${bad}`, {}],
        ['DELETE', `/crm/companies/${bad}`],
        ['GET', `/crm/lists/${bad}`],
        ['PATCH', `/crm/lists/${bad}`, {}],
        ['DELETE', `/crm/lists/${bad}`],
        ['GET', `/crm/lists/${bad}/members`],
        ['POST', `/crm/lists/${bad}/members`, { contact_ids: [ids.contact] }],
        ['DELETE', `/crm/lists/${ids.staticList}/members/${bad}`],
        ['DELETE', `/crm/lists/${bad}/members/${ids.contact}`],
      ];
      for (const [method, url, body] of urls) expect400(await owner(method, url, body), `${method} ${url}`);
    });

    test('bodies: wrong types, unknown enums and fields, oversized strings and arrays', async () => {
      const cases: [Parameters<Call>[0], string, unknown][] = [
        ['POST', '/crm/contacts', { email: { a: 1 } }],
        ['POST', '/crm/contacts', { email: 'x@y.example', first_name: ['a'] }],
        ['POST', '/crm/contacts', { email: 'x@y.example', tags: { tag: 'vip' } }],
        ['POST', '/crm/contacts', { email: 'x@y.example', tags: Array(101).fill('t') }],
        ['POST', '/crm/contacts', { email: 'x@y.example', tags: [long(101)] }],
        ['POST', '/crm/contacts', { email: 'x@y.example', first_name: long(201) }],
        ['POST', '/crm/contacts', { email: `${long(250)}@y.example` }],
        ['POST', '/crm/contacts', { email: 'x@y.example', company_id: 'acme' }],
        ['POST', '/crm/contacts', { email: 'x@y.example', owner_user_id: 42 }],
        ['POST', '/crm/contacts', { email: 'x@y.example', company_name: '' }],
        ['POST', '/crm/contacts', { email: 'x@y.example', nickname: 'x' }],
        ['POST', '/crm/contacts', { phone: long(41) }],
        ['POST', '/crm/contacts', []],
        ['POST', '/crm/contacts', { email: 'x@y.example', first_name: 123 }],
        ['POST', '/crm/contacts', { email: 'x@y.example', tags: ['a', 7] }],
        ['PATCH', `/crm/contacts/${ids.contact}`, { archived: 'maybe' }],
        ['PATCH', `/crm/contacts/${ids.contact}`, { tags: [1, { x: 1 }] }],
        ['PATCH', `/crm/contacts/${ids.contact}`, { lifecycle_stage: long(65) }],
        ['PATCH', `/crm/contacts/${ids.contact}`, { owner_user_id: 'me' }],
        ['PATCH', `/crm/contacts/${ids.contact}`, { title: { t: 1 } }],
        ['POST', `/crm/contacts/${ids.contact}/phones`, { phone: '+14155550171', phone_type: 'satellite' }],
        ['POST', `/crm/contacts/${ids.contact}/phones`, { phone: '+14155550171', consent_source: long(201) }],
        ['PATCH', `/crm/contacts/${ids.contact}/phones/${ids.phone}`, { status: 'unknown' }],
        ['PATCH', `/crm/contacts/${ids.contact}/phones/${ids.phone}`, { is_primary: 'yes please' }],
        ['POST', `/crm/contacts/${ids.contact}/emails`, { email: 'a@b.example', status: 'opt_out' }],
        ['PATCH', `/crm/contacts/${ids.contact}/emails/${ids.email}`, { status: 'verified', source: 'x' }],
        ['POST', '/crm/companies', { name: long(201) }],
        ['POST', '/crm/companies', { name: 'x', business_description: long(5001) }],
        ['POST', '/crm/companies', { name: 'x', domain: '-.-' }],
        ['POST', '/crm/companies', { name: ['x'] }],
        ['POST', '/crm/companies', { name: 5 }],
        ['POST', `/crm/contacts/${ids.contact}/phones`, { phone: 14155550171 }],
        ['PATCH', `/crm/companies/${ids.company}`, { website: long(2049) }],
        ['POST', '/crm/lists', { name: '' }],
        ['POST', '/crm/lists', { name: 'x', exclude_dnc: 'sometimes' }],
        ['POST', '/crm/lists', { name: 'x', processing_type: 'manual' }],
        ['POST', '/crm/lists', { name: 'x', processing_type: 'smart', filter_branch: [1, 2] }],
        [
          'POST',
          '/crm/lists',
          { name: 'x', processing_type: 'smart', filter_branch: { field: 'a'.repeat(10_000) } },
        ],
        ['POST', '/crm/lists', { name: 'x', description: long(2001) }],
        ['PATCH', `/crm/lists/${ids.staticList}`, { emit_flow_triggers: { on: true } }],
        ['POST', `/crm/lists/${ids.staticList}/members`, { contact_ids: { all: true } }],
        [
          'POST',
          `/crm/lists/${ids.staticList}/members`,
          { entity_ids: [ids.contact], entity_type: 'person' },
        ],
      ];
      for (const [method, url, body] of cases) {
        expect400(await owner(method, url, body), `${method} ${url} ${JSON.stringify(body).slice(0, 120)}`);
      }
    });

    test('query strings: limits, tokens, types, unknown parameters', async () => {
      const urls = [
        '/crm/contacts?limit=0',
        '/crm/contacts?limit=201',
        '/crm/contacts?limit=ten',
        '/crm/contacts?page_token=abc.def',
        '/crm/contacts?owner=me',
        '/crm/contacts?company_id=1',
        '/crm/contacts?include_archived=perhaps',
        `/crm/contacts?q=${long(201)}`,
        '/crm/contacts?q=',
        '/crm/contacts?email=nope',
        '/crm/contacts?phone=nope',
        '/crm/contacts?sort=name',
        '/crm/companies?domain=%20',
        '/crm/companies?domain=not%20a%20domain',
        '/crm/companies?limit=-1',
        '/crm/lists?processing_type=dynamic',
        '/crm/lists?limit=1000',
        `/crm/lists/${ids.staticList}/members?limit=0`,
        `/crm/lists/${ids.staticList}/members?page_token=x`,
        `/crm/contacts/${ids.contact}/phones?page_token=x`,
        `/crm/contacts/${ids.contact}/emails?limit=999`,
      ];
      for (const url of urls) expect400(await owner('GET', url), `GET ${url}`);
    });

    test('a body that is not JSON, and an oversized Idempotency-Key', async () => {
      const notJson = await t.app.inject({
        method: 'POST',
        url: '/v1/crm/contacts',
        headers: { ...tenant.agency, 'content-type': 'application/json' },
        payload: '{"email": ',
      });
      assert.equal(notJson.statusCode, 400);
      assert.equal(notJson.json().error, 'invalid_request');
      const key = await owner(
        'POST',
        '/crm/contacts',
        { email: 'k@y.example' },
        { 'idempotency-key': long(256) },
      );
      expect400(key, 'idempotency key');
    });
  });

  test('the OpenAPI document lists every route with a stable operationId', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/v1/openapi.json' })).json();
    const operations = Object.values(doc.paths as Record<string, Record<string, any>>).flatMap((item) =>
      Object.values(item).map((operation) => operation.operationId),
    );
    for (const id of [
      'crm.contacts.list',
      'crm.contacts.create',
      'crm.contacts.get',
      'crm.contacts.update',
      'crm.contacts.delete',
      'crm.contacts.phones.list',
      'crm.contacts.phones.create',
      'crm.contacts.phones.get',
      'crm.contacts.phones.update',
      'crm.contacts.phones.delete',
      'crm.contacts.emails.list',
      'crm.contacts.emails.create',
      'crm.contacts.emails.get',
      'crm.contacts.emails.update',
      'crm.contacts.emails.delete',
      'crm.companies.list',
      'crm.companies.create',
      'crm.companies.get',
      'crm.companies.update',
      'crm.companies.delete',
      'crm.lists.list',
      'crm.lists.create',
      'crm.lists.get',
      'crm.lists.update',
      'crm.lists.delete',
      'crm.lists.members.list',
      'crm.lists.members.create',
      'crm.lists.members.delete',
    ]) {
      assert.ok(operations.includes(id), id);
    }
    const { Validator } = await import('@seriousme/openapi-schema-validator');
    const result = await new Validator().validate(doc);
    assert.equal(result.valid, true, JSON.stringify(result.errors)?.slice(0, 2000));
  });
});
