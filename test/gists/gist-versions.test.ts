import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import pg from 'pg';
import { type Call, caller } from '../crm/crm-client.ts';
import { adminCall, buildTestApp, createTenant, type TestApp, type TestTenant } from '../helpers.ts';

/**
 * A gist hit is a key read: the subject's source version and the gist stamped with it. Every write to
 * what a gist reads bumps the version; these tests hold each dependency to that, and the race of a
 * writer that wrote before the version existed.
 */

type Kind = 'contacts' | 'companies' | 'deals';

describe('gist source versions', () => {
  let t: TestApp;
  let tenant: TestTenant;
  let call: Call;

  before(async () => {
    t = await buildTestApp();
    tenant = await createTenant(t.app);
    call = caller(t, tenant.client);
    await adminCall(t.app, 'POST', `/orgs/${tenant.orgId}/fuel`, { amount: 100 });
  });
  after(() => t.close());

  async function gist(kind: Kind, id: string) {
    const reply = await call('POST', `/ai/${kind}/${id}/gist`);
    assert.equal(reply.status, 200, JSON.stringify(reply.body));
    return reply.body.gist;
  }

  /** Whether the gist is stamped with its subject's current version: the next request reads it by key. */
  async function servedByKey(gistId: string): Promise<boolean> {
    const { rows } = await sql<{ keyed: boolean }>`
      SELECT g.source_version IS NOT NULL AND g.source_version = v.version AS keyed
      FROM gists g JOIN gist_versions v ON v.org_id = g.org_id AND v.client_id = g.client_id
        AND v.subject_type = g.subject_type AND v.subject_id = g.subject_id
      WHERE g.id = ${gistId}`.execute(t.platform.db);
    return rows[0]?.keyed ?? false;
  }

  /**
   * Requests the subject's gist until it is stamped with the current version, each request a free hit
   * of `gistId`. A snapshot may stamp only once no transaction older than the version row runs, on the
   * whole server (other test files included), so the first requests may be served by hash.
   */
  async function untilKeyed(kind: Kind, id: string, gistId: string) {
    for (let attempt = 0; !(await servedByKey(gistId)); attempt++) {
      assert.ok(attempt < 100, 'stamped with the current version');
      await new Promise((resolve) => setTimeout(resolve, 20));
      const hit = await gist(kind, id);
      assert.equal(hit.id, gistId);
      assert.equal(hit.cached, true);
      assert.equal(hit.fuel_cost, 0);
    }
  }

  /** A gist of the subject, served by key at cost 0. */
  async function keyedGist(kind: Kind, id: string) {
    const first = await gist(kind, id);
    await untilKeyed(kind, id, first.id);
    const hit = await gist(kind, id);
    assert.equal(hit.id, first.id);
    assert.equal(hit.cached, true);
    assert.equal(hit.fuel_cost, 0);
    return first;
  }

  /** After `write`, the subject's gist is written again (1 FUEL), and served by key afterwards. */
  async function regeneratedAfter(kind: Kind, id: string, write: () => Promise<{ status: number }>) {
    const before = await keyedGist(kind, id);
    const { status } = await write();
    assert.ok(status >= 200 && status < 300, `the write answered ${status}`);
    const after = await gist(kind, id);
    assert.equal(after.cached, false);
    assert.equal(after.fuel_cost, 1);
    assert.notEqual(after.id, before.id);
    assert.notEqual(after.source_hash, before.source_hash);
    await untilKeyed(kind, id, after.id);
    return after;
  }

  async function crm() {
    const company = (
      await call('POST', '/crm/companies', { name: `Engines ${Math.random()}`, industry: 'Computing' })
    ).body.company;
    const contact = (
      await call('POST', '/crm/contacts', {
        email: `ada.${Math.random().toString(36).slice(2)}@example.com`,
        full_name: 'Ada Lovelace',
        company_id: company.id,
      })
    ).body.contact;
    const deal = (
      await call('POST', '/crm/deals', {
        name: 'Analytical Engine',
        amount: 1000,
        company_id: company.id,
        primary_contact_id: contact.id,
      })
    ).body.deal;
    return { company, contact, deal };
  }

  test("a contact's gist is written again after a write to each table it reads", async () => {
    const { company, contact, deal } = await crm();
    const id = contact.id;
    await regeneratedAfter('contacts', id, () => call('PATCH', `/crm/contacts/${id}`, { title: 'Countess' }));
    const phone = await call('POST', `/crm/contacts/${id}/phones`, { phone: '+14155550123' });
    assert.equal(phone.status, 201);
    await regeneratedAfter('contacts', id, () =>
      call('PATCH', `/crm/contacts/${id}/phones/${phone.body.phone.id}`, { phone_type: 'work' }),
    );
    await regeneratedAfter('contacts', id, () =>
      call('POST', `/crm/contacts/${id}/emails`, {
        email: `second.${Math.random().toString(36).slice(2)}@example.com`,
      }),
    );
    await regeneratedAfter('contacts', id, () =>
      call('PATCH', `/crm/companies/${company.id}`, { business_description: 'Engines that weave numbers' }),
    );
    await regeneratedAfter('contacts', id, () => call('PATCH', `/crm/deals/${deal.id}`, { amount: 2000 }));
    await regeneratedAfter('contacts', id, () =>
      call('POST', '/crm/activities', {
        activity_type: 'call',
        contact_id: id,
        subject: 'Notes on the engine',
      }),
    );
    await regeneratedAfter('contacts', id, () =>
      call('POST', '/crm/tasks', { title: 'Translate the memoir', contact_id: id }),
    );
  });

  test('a write to one table alone, however made, bumps the versions of the gists that read it', async () => {
    const { company, contact, deal } = await crm();
    const id = contact.id;
    await call('POST', `/crm/contacts/${id}/phones`, { phone: '+14155550125' });
    await call('POST', '/crm/activities', { activity_type: 'call', contact_id: id, subject: 'First call' });
    await call('POST', '/crm/tasks', { title: 'Follow up', contact_id: id });
    const db = t.platform.db;
    const write = (statement: ReturnType<typeof sql>) => async () => {
      await statement.execute(db);
      return { status: 200 };
    };
    await regeneratedAfter(
      'contacts',
      id,
      write(sql`UPDATE contacts SET title = 'Analyst' WHERE id = ${id}`),
    );
    await regeneratedAfter(
      'contacts',
      id,
      write(sql`UPDATE contact_phones SET phone_type = 'work' WHERE contact_id = ${id}`),
    );
    await regeneratedAfter(
      'contacts',
      id,
      write(sql`UPDATE contact_emails SET status = 'bounced' WHERE contact_id = ${id}`),
    );
    await regeneratedAfter(
      'contacts',
      id,
      write(sql`UPDATE companies SET industry = 'Looms' WHERE id = ${company.id}`),
    );
    await regeneratedAfter('contacts', id, write(sql`UPDATE deals SET amount = 3000 WHERE id = ${deal.id}`));
    await regeneratedAfter(
      'contacts',
      id,
      write(sql`UPDATE activities SET subject = 'Second call' WHERE contact_id = ${id}`),
    );
    await regeneratedAfter(
      'contacts',
      id,
      write(sql`UPDATE tasks SET title = 'Follow up again' WHERE contact_id = ${id}`),
    );
    await regeneratedAfter(
      'contacts',
      id,
      write(sql`UPDATE pipeline_stages SET name = name || ' (renamed)' WHERE id = ${deal.stage_id}`),
    );
    await regeneratedAfter(
      'contacts',
      id,
      write(sql`UPDATE pipelines SET name = name || ' (renamed)' WHERE id = ${deal.pipeline_id}`),
    );
    await regeneratedAfter('contacts', id, write(sql`DELETE FROM contact_phones WHERE contact_id = ${id}`));
  });

  test("a company's and a deal's gists are written again after a write to a record they read", async () => {
    const { company, contact, deal } = await crm();
    const phone = await call('POST', `/crm/contacts/${contact.id}/phones`, { phone: '+14155550124' });
    assert.equal(phone.status, 201);
    // A company reads its people and their phones; a deal its primary contact and company.
    await regeneratedAfter('companies', company.id, () =>
      call('PATCH', `/crm/contacts/${contact.id}/phones/${phone.body.phone.id}`, { phone_type: 'work' }),
    );
    await regeneratedAfter('companies', company.id, () =>
      call('POST', '/crm/tasks', { title: 'Ship the engine', deal_id: deal.id, company_id: company.id }),
    );
    await regeneratedAfter('deals', deal.id, () =>
      call('PATCH', `/crm/contacts/${contact.id}`, { title: 'Countess' }),
    );
    await regeneratedAfter('deals', deal.id, () =>
      call('PATCH', `/crm/companies/${company.id}`, { industry: 'Looms' }),
    );
    await regeneratedAfter('deals', deal.id, () =>
      call('POST', '/crm/activities', {
        activity_type: 'note',
        deal_id: deal.id,
        subject: 'Budget approved',
      }),
    );
  });

  test('a write that changes nothing a gist reads is still a free hit of the same gist, by key again after', async () => {
    const { contact } = await crm();
    const before = await keyedGist('contacts', contact.id);
    const zone = await call('PATCH', `/crm/contacts/${contact.id}`, { timezone: 'Europe/London' });
    assert.equal(zone.status, 200);
    const same = await call('PATCH', `/crm/contacts/${contact.id}`, { full_name: 'Ada Lovelace' });
    assert.equal(same.status, 200);
    assert.equal(await servedByKey(before.id), false, 'the writes bumped the version');
    const hit = await gist('contacts', contact.id);
    assert.equal(hit.id, before.id);
    assert.equal(hit.cached, true);
    assert.equal(hit.fuel_cost, 0);
    assert.equal(hit.source_hash, before.source_hash);
    await untilKeyed('contacts', contact.id, before.id);
  });

  test('a forced gist of the same source is the one served after, as the hash would serve it', async () => {
    const { contact } = await crm();
    const before = await keyedGist('contacts', contact.id);
    const forced = (await call('POST', `/ai/contacts/${contact.id}/gist?force=true`)).body.gist;
    assert.notEqual(forced.id, before.id);
    assert.equal(forced.source_hash, before.source_hash);
    const hit = await gist('contacts', contact.id);
    assert.equal(hit.id, forced.id);
    assert.equal(hit.cached, true);
  });

  test('a writer that wrote before the version existed and committed after the gist: not served stale', async () => {
    const { contact } = await crm();
    const writer = new pg.Client({ connectionString: t.config.databaseUrl as string });
    await writer.connect();
    try {
      await writer.query('BEGIN');
      await writer.query(`UPDATE contacts SET title = 'Enchantress of Numbers' WHERE id = $1`, [contact.id]);
      const stale = await gist('contacts', contact.id);
      assert.equal(stale.cached, false);
      assert.doesNotMatch(stale.summary, /Enchantress/);
      await writer.query('COMMIT');

      const fresh = await gist('contacts', contact.id);
      assert.equal(fresh.cached, false, 'the committed write is a new source');
      assert.notEqual(fresh.id, stale.id);
      assert.match(fresh.summary, /Enchantress of Numbers/);
      const hit = await gist('contacts', contact.id);
      assert.equal(hit.id, fresh.id);
      assert.equal(hit.cached, true);
    } finally {
      await writer.end();
    }
  });

  test('deleting an activity the gist reads writes it again', async () => {
    const { contact } = await crm();
    const activity = await call('POST', '/crm/activities', {
      activity_type: 'call',
      contact_id: contact.id,
      subject: 'A call to forget',
    });
    assert.equal(activity.status, 201);
    const after = await regeneratedAfter('contacts', contact.id, () =>
      call('DELETE', `/crm/activities/${activity.body.activity.id}`),
    );
    assert.doesNotMatch(after.summary, /A call to forget/);
  });
});
