import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { buildTestApp, createTenant, type TestApp, type TestTenant } from '../helpers.ts';
import { type Call, caller, eventsOf } from './crm-client.ts';

describe('companies', () => {
  let t: TestApp;
  let tenant: TestTenant;
  let call: Call;

  before(async () => {
    t = await buildTestApp();
    tenant = await createTenant(t.app);
    call = caller(t, tenant.agencyAsClient);
  });
  after(() => t.close());

  test('POST creates (201) and is idempotent on the normalized domain (200, fields merged)', async () => {
    const created = await call('POST', '/crm/companies', {
      name: 'Acme',
      domain: 'https://www.ACME.example/about?x=1',
      industry: 'Anvils',
    });
    assert.equal(created.status, 201);
    assert.equal(created.body.created, true);
    const company = created.body.company;
    assert.equal(company.domain, 'acme.example');
    assert.equal(company.name, 'Acme');
    assert.equal(company.industry, 'Anvils');
    assert.equal(company.archived_at, null);

    for (const domain of ['acme.example', 'http://acme.example', 'WWW.Acme.Example/', 'acme.example.']) {
      const again = await call('POST', '/crm/companies', { domain, business_description: 'Makes anvils' });
      assert.equal(again.status, 200, domain);
      assert.equal(again.body.created, false);
      assert.equal(again.body.company.id, company.id);
      assert.equal(again.body.company.name, 'Acme');
      assert.equal(again.body.company.business_description, 'Makes anvils');
    }
    const events = (await eventsOf(call, 'company.created')).filter((e) => e.data.id === company.id);
    assert.equal(events.length, 1);
    assert.equal(events[0].data.domain, 'acme.example');
  });

  test('the domain comes from website when not given; a company needs a name or a domain', async () => {
    const fromSite = await call('POST', '/crm/companies', {
      name: 'Site',
      website: 'https://www.site.example/home',
    });
    assert.equal(fromSite.body.company.domain, 'site.example');
    assert.equal(fromSite.body.company.website, 'https://www.site.example/home');
    // The create as one statement answers and emits the company as it is read.
    const read = await call('GET', `/crm/companies/${fromSite.body.company.id}`);
    assert.deepEqual(read.body.company, fromSite.body.company);
    const [event] = (await eventsOf(call, 'company.created')).filter(
      (e) => e.data.id === read.body.company.id,
    );
    assert.deepEqual(event.data, read.body.company);
    const nameless = await call('POST', '/crm/companies', { domain: 'nameless.example' });
    assert.equal(nameless.status, 201);
    assert.equal(nameless.body.company.name, 'nameless.example');
    const nothing = await call('POST', '/crm/companies', { industry: 'x' });
    assert.equal(nothing.status, 400);
    assert.equal(nothing.body.error, 'validation_error');
    const badDomain = await call('POST', '/crm/companies', { name: 'Bad', domain: 'not a domain' });
    assert.equal(badDomain.status, 400);
    assert.equal(badDomain.body.details.fields[0].field, 'domain');
    const noDomainTwice = [
      await call('POST', '/crm/companies', { name: 'Twin' }),
      await call('POST', '/crm/companies', { name: 'Twin' }),
    ];
    assert.deepEqual(
      noDomainTwice.map((r) => r.status),
      [201, 201],
    );
  });

  test('concurrent creates of one domain make one company', async () => {
    const replies = await Promise.all(
      Array.from({ length: 10 }, () =>
        call('POST', '/crm/companies', { name: 'Race', domain: 'race.example' }),
      ),
    );
    assert.deepEqual(replies.map((r) => r.status).sort(), [...Array(9).fill(200), 201]);
    assert.equal(new Set(replies.map((r) => r.body.company.id)).size, 1);
  });

  test('GET one, list with q and domain, archived only on request', async () => {
    const a = (await call('POST', '/crm/companies', { name: 'Listable Widgets', domain: 'widgets.example' }))
      .body.company;
    const b = (await call('POST', '/crm/companies', { name: '50%_Off Ltd' })).body.company;
    assert.deepEqual((await call('GET', `/crm/companies/${a.id}`)).body.company, a);
    assert.equal((await call('GET', '/crm/companies/00000000-0000-4000-8000-000000000000')).status, 404);
    const byQ = await call('GET', '/crm/companies?q=widget');
    assert.deepEqual(
      byQ.body.data.map((c: any) => c.id),
      [a.id],
    );
    const literal = await call('GET', '/crm/companies?q=%25_');
    assert.deepEqual(
      literal.body.data.map((c: any) => c.id),
      [b.id],
    );
    const byDomain = await call('GET', '/crm/companies?domain=https://widgets.example/');
    assert.deepEqual(
      byDomain.body.data.map((c: any) => c.id),
      [a.id],
    );
    assert.equal((await call('DELETE', `/crm/companies/${a.id}`)).status, 204);
    assert.equal((await call('GET', '/crm/companies?q=widget')).body.data.length, 0);
    const archived = await call('GET', '/crm/companies?q=widget&include_archived=true');
    assert.equal(archived.body.data.length, 1);
    assert.ok(archived.body.data[0].archived_at);
    const page = await call('GET', '/crm/companies?limit=1');
    assert.equal(page.body.data.length, 1);
    assert.ok(page.body.next_page_token);
    const next = await call('GET', `/crm/companies?limit=1&page_token=${page.body.next_page_token}`);
    assert.notEqual(next.body.data[0].id, page.body.data[0].id);
  });

  test('company.updated: once per change, with the changed fields and their previous values; none for no change', async () => {
    const { body: created } = await call('POST', '/crm/companies', { name: 'Upd', domain: 'upd.example' });
    const id = created.company.id;
    const updates = async () => (await eventsOf(call, 'company.updated')).filter((e) => e.data.id === id);

    const patched = await call('PATCH', `/crm/companies/${id}`, { industry: 'Anvils', name: 'Upd' });
    assert.equal(patched.status, 200);
    let events = await updates();
    assert.equal(events.length, 1);
    const { changed_fields, previous_attributes, ...company } = events[0].data;
    assert.deepEqual(company, (await call('GET', `/crm/companies/${id}`)).body.company);
    assert.deepEqual(changed_fields, ['industry']);
    assert.deepEqual(previous_attributes, { industry: null });
    assert.deepEqual(events[0].metadata, {});

    await call('PATCH', `/crm/companies/${id}`, { industry: 'Anvils', name: 'Upd' });
    assert.equal((await updates()).length, 1, 'a PATCH that changes nothing emits none');

    const merged = await call('POST', '/crm/companies', { domain: 'upd.example', industry: 'Forges' });
    assert.equal(merged.status, 200);
    await call('POST', '/crm/companies', { domain: 'upd.example', industry: 'Forges' });
    assert.equal(await call('DELETE', `/crm/companies/${id}`).then((reply) => reply.status), 204);
    events = await updates();
    assert.deepEqual(
      events.map((event) => event.data.changed_fields),
      [['industry'], ['industry'], ['archived_at']],
      'a merging POST and an archive are changes too; a merge that changes nothing is none',
    );
    assert.equal(events[1].data.previous_attributes.industry, 'Anvils');

    const subscribed = await call('POST', '/webhooks', {
      url: 'https://hooks.example/companies',
      events: ['company.updated'],
    });
    assert.equal(subscribed.status, 201, JSON.stringify(subscribed.body));
  });

  test('PATCH updates fields, archives and restores; a taken domain is 409 domain_in_use', async () => {
    const one = (await call('POST', '/crm/companies', { name: 'One', domain: 'one.example' })).body.company;
    await call('POST', '/crm/companies', { name: 'Two', domain: 'two.example' });
    const patched = await call('PATCH', `/crm/companies/${one.id}`, {
      name: 'One Inc',
      industry: 'Software',
      website: null,
      domain: 'ONE-inc.example',
    });
    assert.equal(patched.status, 200);
    assert.equal(patched.body.company.name, 'One Inc');
    assert.equal(patched.body.company.domain, 'one-inc.example');
    assert.equal(patched.body.company.industry, 'Software');
    const taken = await call('PATCH', `/crm/companies/${one.id}`, { domain: 'two.example' });
    assert.equal(taken.status, 409);
    assert.equal(taken.body.error, 'domain_in_use');
    const archived = await call('PATCH', `/crm/companies/${one.id}`, { archived: true });
    assert.ok(archived.body.company.archived_at);
    const restored = await call('PATCH', `/crm/companies/${one.id}`, { archived: false });
    assert.equal(restored.body.company.archived_at, null);
    const cleared = await call('PATCH', `/crm/companies/${one.id}`, { domain: null, industry: null });
    assert.equal(cleared.body.company.domain, null);
    assert.equal(cleared.body.company.industry, null);
    for (const body of [
      { name: '' },
      { name: {} },
      { archived: 'yes' },
      { owner: 'x' },
      { domain: 'x'.repeat(300) },
    ]) {
      const reply = await call('PATCH', `/crm/companies/${one.id}`, body);
      assert.equal(reply.status, 400, JSON.stringify(body));
    }
    assert.equal(
      (await call('PATCH', '/crm/companies/00000000-0000-4000-8000-000000000000', { name: 'x' })).status,
      404,
    );
    assert.equal((await call('DELETE', '/crm/companies/00000000-0000-4000-8000-000000000000')).status, 404);
  });
});
