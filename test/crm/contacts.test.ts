import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { buildTestApp, createTenant, type TestApp, type TestTenant } from '../helpers.ts';
import { type Call, caller, eventsOf } from './crm-client.ts';

describe('contacts', () => {
  let t: TestApp;
  let tenant: TestTenant;
  let call: Call;

  before(async () => {
    t = await buildTestApp();
    tenant = await createTenant(t.app);
    call = caller(t, tenant.agency);
  });
  after(() => t.close());

  describe('POST /v1/crm/contacts (upsert by identity)', () => {
    test('a new identity is 201 {contact, created: true} with the email lower-cased and the phone in E.164', async () => {
      const { status, body } = await call('POST', '/crm/contacts', {
        email: '  Ada.Lovelace@Analytical.Example  '.trim(),
        phone: '+1 (415) 555-2671',
        first_name: 'Ada',
        last_name: 'Lovelace',
        title: 'Countess',
        lifecycle_stage: 'lead',
        tags: ['vip', 'vip', 'math'],
        source: 'web form',
      });
      assert.equal(status, 201);
      assert.deepEqual(Object.keys(body).sort(), ['contact', 'created']);
      assert.equal(body.created, true);
      const c = body.contact;
      assert.equal(c.email, 'ada.lovelace@analytical.example');
      assert.equal(c.phone, '+14155552671');
      assert.equal(c.full_name, 'Ada Lovelace');
      assert.equal(c.first_name, 'Ada');
      assert.equal(c.title, 'Countess');
      assert.equal(c.lifecycle_stage, 'lead');
      assert.deepEqual(c.tags, ['vip', 'math']);
      assert.equal(c.source, 'web form');
      assert.equal(c.client_id, tenant.houseClientId);
      assert.equal(c.archived_at, null);
      assert.match(c.created_at, /Z$/);

      const fetched = await call('GET', `/crm/contacts/${c.id}`);
      assert.equal(fetched.status, 200);
      assert.deepEqual(fetched.body.contact, c);
    });

    test('an existing email merges the given fields: 200, created false, matched_by email', async () => {
      const first = await call('POST', '/crm/contacts', { email: 'merge@example.org', first_name: 'Old' });
      const second = await call('POST', '/crm/contacts', {
        email: 'MERGE@example.org',
        first_name: 'New',
        title: 'CTO',
        tags: ['b'],
      });
      assert.equal(second.status, 200);
      assert.equal(second.body.created, false);
      assert.equal(second.body.matched_by, 'email');
      assert.equal(second.body.contact.id, first.body.contact.id);
      assert.equal(second.body.contact.first_name, 'New');
      assert.equal(second.body.contact.full_name, 'New');
      assert.equal(second.body.contact.title, 'CTO');
      const fetched = await call('GET', `/crm/contacts/${first.body.contact.id}`);
      assert.equal(fetched.body.contact.title, 'CTO');
      assert.equal(fetched.body.contact.first_name, 'New');
    });

    test('a merge adds tags, keeps the first source, and leaves an archived contact archived', async () => {
      const first = await call('POST', '/crm/contacts', {
        email: 'semantics@example.org',
        tags: ['a', 'b'],
        source: 'import',
      });
      await call('DELETE', `/crm/contacts/${first.body.contact.id}`);
      const merged = await call('POST', '/crm/contacts', {
        email: 'semantics@example.org',
        tags: ['b', 'c'],
        source: 'web form',
        lifecycle_stage: 'customer',
      });
      assert.equal(merged.status, 200);
      assert.deepEqual(merged.body.contact.tags, ['a', 'b', 'c']);
      assert.equal(merged.body.contact.source, 'import');
      assert.equal(merged.body.contact.lifecycle_stage, 'customer');
      assert.ok(merged.body.contact.archived_at);
      const explicit = await call('PATCH', `/crm/contacts/${first.body.contact.id}`, {
        full_name: 'Dr. Semantics',
        first_name: 'Sem',
      });
      assert.equal(explicit.body.contact.full_name, 'Dr. Semantics');
      assert.equal(explicit.body.contact.first_name, 'Sem');
      const listed = await call('GET', `/crm/contacts?company_id=${'00000000-0000-4000-8000-000000000000'}`);
      assert.deepEqual(listed.body.data, []);
    });

    test('an existing phone in another notation matches: matched_by phone, and a new email is attached', async () => {
      const first = await call('POST', '/crm/contacts', { phone: '+14155550111' });
      assert.equal(first.status, 201);
      const second = await call('POST', '/crm/contacts', {
        phone: '(415) 555-0111',
        email: 'phoneonly@example.org',
      });
      assert.equal(second.status, 200);
      assert.equal(second.body.matched_by, 'phone');
      assert.equal(second.body.contact.id, first.body.contact.id);
      assert.equal(second.body.contact.email, 'phoneonly@example.org');
      const emails = await call('GET', `/crm/contacts/${first.body.contact.id}/emails`);
      assert.deepEqual(
        emails.body.data.map((e: any) => [e.email, e.is_primary]),
        [['phoneonly@example.org', true]],
      );
    });

    test('email of one contact and phone of another: 409 identity_conflict naming both, nothing written', async () => {
      const a = (await call('POST', '/crm/contacts', { email: 'a-conflict@example.org' })).body.contact;
      const b = (await call('POST', '/crm/contacts', { phone: '+14155550122' })).body.contact;
      const eventsBefore = (await call('GET', '/events?limit=200')).body.data.length;
      const { status, body } = await call('POST', '/crm/contacts', {
        email: 'a-conflict@example.org',
        phone: '+14155550122',
        first_name: 'Nobody',
      });
      assert.equal(status, 409);
      assert.equal(body.error, 'identity_conflict');
      assert.deepEqual(body.details, { email_contact_id: a.id, phone_contact_id: b.id });
      assert.equal((await call('GET', `/crm/contacts/${a.id}`)).body.contact.first_name, null);
      assert.equal((await call('GET', '/events?limit=200')).body.data.length, eventsBefore);
    });

    test('neither email nor phone is 400; an unnormalizable phone is 400 validation_error', async () => {
      const neither = await call('POST', '/crm/contacts', { first_name: 'Anon' });
      assert.equal(neither.status, 400);
      assert.equal(neither.body.error, 'validation_error');
      for (const phone of ['not a phone', '+1555', '+15555550100', '12']) {
        const bad = await call('POST', '/crm/contacts', { phone });
        assert.equal(bad.status, 400, phone);
        assert.equal(bad.body.error, 'validation_error', phone);
        assert.equal(bad.body.details.fields[0].field, 'phone');
      }
      const badEmail = await call('POST', '/crm/contacts', { email: 'not-an-email' });
      assert.equal(badEmail.status, 400);
      assert.equal(badEmail.body.error, 'validation_error');
    });

    test('full_name is derived from first and last name unless given', async () => {
      const derived = await call('POST', '/crm/contacts', { email: 'fn1@example.org', last_name: 'Solo' });
      assert.equal(derived.body.contact.full_name, 'Solo');
      const given = await call('POST', '/crm/contacts', {
        email: 'fn2@example.org',
        first_name: 'Grace',
        last_name: 'Hopper',
        full_name: 'Rear Admiral Grace Hopper',
      });
      assert.equal(given.body.contact.full_name, 'Rear Admiral Grace Hopper');
      const merged = await call('POST', '/crm/contacts', { email: 'fn1@example.org', first_name: 'Han' });
      assert.equal(merged.body.contact.full_name, 'Han Solo');
    });

    test('company_name resolves the company by the email domain, or creates it once', async () => {
      const one = await call('POST', '/crm/contacts', { email: 'x@globex.example', company_name: 'Globex' });
      const two = await call('POST', '/crm/contacts', {
        email: 'y@GLOBEX.example',
        company_name: 'Globex Corp',
      });
      assert.equal(one.status, 201);
      assert.ok(one.body.contact.company_id);
      assert.equal(two.body.contact.company_id, one.body.contact.company_id);
      assert.deepEqual(one.body.contact.company, {
        id: one.body.contact.company_id,
        name: 'Globex',
        domain: 'globex.example',
      });
      const companies = await call('GET', '/crm/companies?domain=globex.example');
      assert.equal(companies.body.data.length, 1);
      const created = (await eventsOf(call, 'company.created')).filter(
        (e) => e.data.domain === 'globex.example',
      );
      assert.equal(created.length, 1);
    });

    test('a free-mail domain does not name the company: it is matched by name instead', async () => {
      const one = await call('POST', '/crm/contacts', { email: 'p@gmail.com', company_name: 'Initech' });
      const two = await call('POST', '/crm/contacts', { email: 'q@yahoo.com', company_name: 'initech' });
      assert.equal(one.body.contact.company.domain, null);
      assert.equal(one.body.contact.company.name, 'Initech');
      assert.equal(two.body.contact.company_id, one.body.contact.company_id);
    });

    test('a company_id that is not a company of this client is 400', async () => {
      const other = await createTenant(t.app);
      const foreign = await caller(t, other.agency)('POST', '/crm/companies', { name: 'Theirs' });
      for (const companyId of [foreign.body.company.id, '00000000-0000-4000-8000-000000000000']) {
        const { status, body } = await call('POST', '/crm/contacts', {
          email: `cid-${companyId.slice(0, 4)}@example.org`,
          company_id: companyId,
        });
        assert.equal(status, 400);
        assert.equal(body.error, 'validation_error');
        assert.equal(body.details.fields[0].field, 'company_id');
      }
      const own = await call('POST', '/crm/companies', { name: 'Ours' });
      const linked = await call('POST', '/crm/contacts', {
        email: 'linked@example.org',
        company_id: own.body.company.id,
      });
      assert.equal(linked.status, 201);
      assert.deepEqual(linked.body.contact.company, { id: own.body.company.id, name: 'Ours', domain: null });
    });

    test('Idempotency-Key replays the first response and creates one contact', async () => {
      const headers = { 'idempotency-key': 'upsert-key-1' };
      const payload = { email: 'idem@example.org', first_name: 'Idem' };
      const first = await call('POST', '/crm/contacts', payload, headers);
      const replay = await call('POST', '/crm/contacts', payload, headers);
      assert.equal(first.status, 201);
      assert.equal(replay.status, 201);
      assert.equal(replay.headers['idempotent-replayed'], 'true');
      assert.equal(replay.body.contact.id, first.body.contact.id);
      const reused = await call('POST', '/crm/contacts', { ...payload, first_name: 'Other' }, headers);
      assert.equal(reused.status, 422);
      assert.equal(reused.body.error, 'idempotency_key_reused');
      const created = (await eventsOf(call, 'contact.created')).filter(
        (e) => e.data.email === 'idem@example.org',
      );
      assert.equal(created.length, 1);
    });

    test('20 concurrent upserts of one new identity leave exactly one contact', async () => {
      const payloads = Array.from({ length: 20 }, (_, i) => ({
        email: 'race@example.org',
        phone: '+14155550199',
        title: `attempt ${i}`,
      }));
      const replies = await Promise.all(payloads.map((payload) => call('POST', '/crm/contacts', payload)));
      assert.deepEqual(
        replies.map((reply) => reply.status).sort(),
        [...Array(19).fill(200), 201],
        JSON.stringify(replies.filter((r) => r.status >= 300).map((r) => r.body)),
      );
      const ids = new Set(replies.map((reply) => reply.body.contact.id));
      assert.equal(ids.size, 1);
      const { rows } = await t.database.pool.query(
        `SELECT count(*)::int AS n FROM contacts c WHERE c.org_id = $1 AND (
           c.id IN (SELECT contact_id FROM contact_emails WHERE email = 'race@example.org')
           OR c.id IN (SELECT contact_id FROM contact_phones WHERE phone_e164 = '+14155550199'))`,
        [tenant.orgId],
      );
      assert.equal(rows[0].n, 1);
      const { rows: all } = await t.database.pool.query(
        `SELECT count(*)::int AS n FROM contacts WHERE org_id = $1 AND id NOT IN (SELECT contact_id FROM contact_emails) AND id NOT IN (SELECT contact_id FROM contact_phones)`,
        [tenant.orgId],
      );
      assert.equal(all[0].n, 0, 'no contact without an identity is left behind');
      const created = (await eventsOf(call, 'contact.created')).filter(
        (e) => e.data.email === 'race@example.org',
      );
      assert.equal(created.length, 1);
    });

    test('concurrent upserts of one new email with different phones merge into one contact', async () => {
      const replies = await Promise.all(
        ['+14155550131', '+14155550132', '+14155550133', '+14155550134'].map((phone) =>
          call('POST', '/crm/contacts', { email: 'racephones@example.org', phone }),
        ),
      );
      assert.deepEqual(replies.map((r) => r.status).sort(), [200, 200, 200, 201]);
      const id = replies[0].body.contact.id;
      assert.ok(replies.every((r) => r.body.contact.id === id));
      const phones = await call('GET', `/crm/contacts/${id}/phones`);
      assert.equal(phones.body.data.length, 4);
      assert.equal(phones.body.data.filter((p: any) => p.is_primary).length, 1);
    });
  });

  describe('events', () => {
    test('contact.created carries the contact as the API returns it', async () => {
      const { body } = await call('POST', '/crm/contacts', { email: 'evt@example.org', first_name: 'Eve' });
      const event = (await eventsOf(call, 'contact.created')).find((e) => e.data.id === body.contact.id);
      assert.ok(event);
      assert.deepEqual(event.data, body.contact);
    });

    test('contact.updated names the changed fields and is not emitted when nothing changed', async () => {
      const { body } = await call('POST', '/crm/contacts', { email: 'upd@example.org', first_name: 'Uma' });
      const id = body.contact.id;
      const count = async () =>
        (await eventsOf(call, 'contact.updated')).filter((e) => e.data.id === id).length;
      await call('POST', '/crm/contacts', { email: 'upd@example.org', first_name: 'Uma' });
      await call('PATCH', `/crm/contacts/${id}`, { first_name: 'Uma' });
      assert.equal(await count(), 0);

      await call('PATCH', `/crm/contacts/${id}`, { last_name: 'Thurman', tags: ['x'] });
      const events = (await eventsOf(call, 'contact.updated')).filter((e) => e.data.id === id);
      assert.equal(events.length, 1);
      assert.deepEqual(events[0].data.changed_fields.sort(), ['full_name', 'last_name', 'tags']);
      assert.deepEqual(events[0].data.previous_attributes, { last_name: null, full_name: 'Uma', tags: [] });
      assert.equal(events[0].data.full_name, 'Uma Thurman');
    });
  });

  describe('GET /v1/crm/contacts/{id}', () => {
    test('404 for an unknown id, 400 for a malformed one', async () => {
      const missing = await call('GET', '/crm/contacts/00000000-0000-4000-8000-000000000000');
      assert.equal(missing.status, 404);
      assert.equal(missing.body.error, 'not_found');
      const malformed = await call('GET', '/crm/contacts/not-a-uuid');
      assert.equal(malformed.status, 400);
      assert.equal(malformed.body.error, 'validation_error');
    });
  });

  describe('GET /v1/crm/contacts (list)', () => {
    let listTenant: TestTenant;
    let list: Call;
    const ids: Record<string, string> = {};

    before(async () => {
      listTenant = await createTenant(t.app);
      list = caller(t, listTenant.agency);
      const owner = '11111111-1111-4111-8111-111111111111';
      const people = [
        {
          key: 'maria',
          email: 'maria@l.example',
          first_name: 'María',
          last_name: 'García',
          lifecycle_stage: 'lead',
        },
        {
          key: 'mario',
          email: 'mario@l.example',
          first_name: 'Mario',
          last_name: 'Rossi',
          lifecycle_stage: 'customer',
        },
        { key: 'pct', email: 'pct@l.example', full_name: '100% Legit', owner_user_id: owner },
        { key: 'under', email: 'under@l.example', first_name: 'snake_case', lifecycle_stage: 'lead' },
        { key: 'other', email: 'other@l.example', first_name: 'Zed', owner_user_id: owner },
      ];
      for (const { key, ...person } of people) {
        ids[key] = (await list('POST', '/crm/contacts', person)).body.contact.id;
      }
      await list('DELETE', `/crm/contacts/${ids.other}`);
    });

    const names = (reply: { body: any }) => reply.body.data.map((c: any) => c.email).sort();

    test('q is a case-insensitive substring of full_name, first_name or last_name', async () => {
      assert.deepEqual(names(await list('GET', '/crm/contacts?q=mar')), [
        'maria@l.example',
        'mario@l.example',
      ]);
      assert.deepEqual(names(await list('GET', '/crm/contacts?q=ROSSI')), ['mario@l.example']);
      assert.deepEqual(names(await list('GET', '/crm/contacts?q=%C3%ADa%20Garc')), ['maria@l.example']);
    });

    test('% and _ in q are literal characters', async () => {
      assert.deepEqual(names(await list('GET', '/crm/contacts?q=%25')), ['pct@l.example']);
      assert.deepEqual(names(await list('GET', '/crm/contacts?q=_')), ['under@l.example']);
    });

    test('lifecycle and owner filter; archived contacts only with include_archived=true', async () => {
      assert.deepEqual(names(await list('GET', '/crm/contacts?lifecycle=lead')), [
        'maria@l.example',
        'under@l.example',
      ]);
      assert.deepEqual(names(await list('GET', '/crm/contacts?owner=11111111-1111-4111-8111-111111111111')), [
        'pct@l.example',
      ]);
      assert.equal((await list('GET', '/crm/contacts')).body.data.length, 4);
      const all = await list('GET', '/crm/contacts?include_archived=true');
      assert.equal(all.body.data.length, 5);
      assert.ok(all.body.data.find((c: any) => c.id === ids.other).archived_at);
    });

    test('email and phone find a contact by identity', async () => {
      assert.deepEqual(names(await list('GET', '/crm/contacts?email=MARIO@l.example')), ['mario@l.example']);
      assert.equal((await list('GET', '/crm/contacts?phone=%2B14155552671')).body.data.length, 0);
    });

    test('pages are newest first and follow next_page_token', async () => {
      const seen: string[] = [];
      let token: string | null = null;
      do {
        const reply: { body: any } = await list(
          'GET',
          `/crm/contacts?limit=2${token ? `&page_token=${encodeURIComponent(token)}` : ''}`,
        );
        assert.ok(reply.body.data.length <= 2);
        assert.equal(reply.body.limit, 2);
        seen.push(...reply.body.data.map((c: any) => c.id));
        token = reply.body.next_page_token;
      } while (token);
      assert.deepEqual(seen, [ids.under, ids.pct, ids.mario, ids.maria]);
      const bad = await list('GET', '/crm/contacts?page_token=nonsense');
      assert.equal(bad.status, 400);
      assert.equal(bad.body.error, 'invalid_request');
    });

    test('a page token is bound to the filters, whatever their order in the query string', async () => {
      const first = await list('GET', '/crm/contacts?limit=1&lifecycle=lead&include_archived=true');
      assert.equal(first.body.data.length, 1);
      const token = encodeURIComponent(first.body.next_page_token);
      const next = await list(
        'GET',
        `/crm/contacts?include_archived=true&page_token=${token}&lifecycle=lead&limit=1`,
      );
      assert.equal(next.status, 200);
      assert.deepEqual([first.body.data[0].id, next.body.data[0].id], [ids.under, ids.maria]);
      const otherFilter = await list(
        'GET',
        `/crm/contacts?lifecycle=customer&include_archived=true&page_token=${token}`,
      );
      assert.equal(otherFilter.status, 400);
      assert.equal(otherFilter.body.error, 'invalid_request');
    });

    test('q is served by the trigram index, not a sequential scan', async () => {
      const client = await t.database.pool.connect();
      try {
        await client.query('BEGIN');
        await client.query('SET LOCAL enable_seqscan = off');
        const { rows } = await client.query(`EXPLAIN SELECT id FROM contacts c
          WHERE (coalesce(c.full_name, '') || ' ' || coalesce(c.first_name, '') || ' ' || coalesce(c.last_name, '')) ILIKE '%ssi%'`);
        assert.match(rows.map((r: any) => r['QUERY PLAN']).join('\n'), /contacts_names_trgm/);
      } finally {
        await client.query('ROLLBACK');
        client.release();
      }
    });
  });

  describe('PATCH and DELETE /v1/crm/contacts/{id}', () => {
    test('PATCH sets the SPEC fields, tags replace the list, null clears', async () => {
      const company = (await call('POST', '/crm/companies', { name: 'Patchco', domain: 'patchco.example' }))
        .body.company;
      const { body } = await call('POST', '/crm/contacts', {
        email: 'patch@example.org',
        first_name: 'Pat',
        title: 'Dev',
        tags: ['a', 'b'],
      });
      const id = body.contact.id;
      const owner = '22222222-2222-4222-8222-222222222222';
      const patched = await call('PATCH', `/crm/contacts/${id}`, {
        last_name: 'Ch',
        title: null,
        lifecycle_stage: 'qualified',
        company_id: company.id,
        owner_user_id: owner,
        tags: ['c'],
      });
      assert.equal(patched.status, 200);
      const c = patched.body.contact;
      assert.equal(c.full_name, 'Pat Ch');
      assert.equal(c.title, null);
      assert.equal(c.lifecycle_stage, 'qualified');
      assert.deepEqual(c.company, { id: company.id, name: 'Patchco', domain: 'patchco.example' });
      assert.equal(c.owner_user_id, owner);
      assert.deepEqual(c.tags, ['c']);
      assert.deepEqual((await call('GET', `/crm/contacts/${id}`)).body.contact, c);

      const cleared = await call('PATCH', `/crm/contacts/${id}`, { company_id: null, tags: [] });
      assert.equal(cleared.body.contact.company, null);
      assert.deepEqual(cleared.body.contact.tags, []);
    });

    test('PATCH with a field outside the SPEC set, or a foreign company, is 400', async () => {
      const { body } = await call('POST', '/crm/contacts', { email: 'strict@example.org' });
      const unknown = await call('PATCH', `/crm/contacts/${body.contact.id}`, { email: 'x@example.org' });
      assert.equal(unknown.status, 400);
      const foreign = await call('PATCH', `/crm/contacts/${body.contact.id}`, {
        company_id: '00000000-0000-4000-8000-000000000001',
      });
      assert.equal(foreign.status, 400);
      assert.equal(foreign.body.details.fields[0].field, 'company_id');
    });

    test('DELETE archives (204, contact.archived, row kept); PATCH archived=false restores', async () => {
      const { body } = await call('POST', '/crm/contacts', { email: 'arch@example.org' });
      const id = body.contact.id;
      const deleted = await call('DELETE', `/crm/contacts/${id}`);
      assert.equal(deleted.status, 204);
      assert.equal(deleted.body, undefined);
      const archived = await call('GET', `/crm/contacts/${id}`);
      assert.equal(archived.status, 200);
      assert.ok(archived.body.contact.archived_at);
      const events = (await eventsOf(call, 'contact.archived')).filter((e) => e.data.id === id);
      assert.equal(events.length, 1);
      assert.ok(events[0].data.archived_at);

      assert.equal((await call('DELETE', `/crm/contacts/${id}`)).status, 204);
      assert.equal((await eventsOf(call, 'contact.archived')).filter((e) => e.data.id === id).length, 1);

      const restored = await call('PATCH', `/crm/contacts/${id}`, { archived: false });
      assert.equal(restored.body.contact.archived_at, null);
      const again = await call('PATCH', `/crm/contacts/${id}`, { archived: true });
      assert.ok(again.body.contact.archived_at);
      assert.equal((await eventsOf(call, 'contact.archived')).filter((e) => e.data.id === id).length, 2);
      assert.equal((await call('DELETE', '/crm/contacts/00000000-0000-4000-8000-000000000000')).status, 404);
    });
  });
});
