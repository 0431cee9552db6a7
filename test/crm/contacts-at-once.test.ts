import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { createContact } from '../../src/modules/contacts/service.ts';
import { buildTestApp, createTenant, type TestApp, type TestTenant } from '../helpers.ts';

/**
 * The contact create's one-statement path (issue 10): it writes the contact, its identities and its
 * event together, or nothing and answers null so that the transaction path takes over.
 */
describe('contact create in one statement', () => {
  let t: TestApp;
  let tenant: TestTenant;
  let scope: { orgId: string; clientId: string };

  before(async () => {
    t = await buildTestApp();
    tenant = await createTenant(t.app);
    scope = { orgId: tenant.orgId, clientId: tenant.houseClientId };
  });
  after(() => t.close());

  const count = async (sql: string, values: unknown[]) =>
    (await t.database.pool.query<{ n: number }>(sql, values)).rows[0].n;

  test('a new identity: 201 with the contact, its email and phone and one contact.created event', async () => {
    const outcome = await createContact(
      t.database.db,
      scope,
      { email: 'Once@Example.org', phone: '+14155550142', first_name: 'Ada' },
      'US',
    );
    assert.equal(outcome?.status, 201);
    const contact = outcome?.body.contact;
    assert.ok(contact);
    assert.equal(contact.email, 'once@example.org');
    assert.equal(contact.company, null);
    assert.equal(
      await count('SELECT count(*)::int AS n FROM contact_emails WHERE contact_id = $1 AND is_primary', [
        contact.id,
      ]),
      1,
    );
    assert.equal(
      await count('SELECT count(*)::int AS n FROM contact_phones WHERE contact_id = $1 AND is_primary', [
        contact.id,
      ]),
      1,
    );
    const { rows } = await t.database.pool.query(
      `SELECT data FROM events WHERE type = 'contact.created' AND data->>'id' = $1`,
      [contact.id],
    );
    assert.equal(rows.length, 1);
    assert.deepEqual(rows[0].data, JSON.parse(JSON.stringify(contact)));
  });

  test('a known identity, or a company to find by name: null, nothing written', async () => {
    const before = await count('SELECT count(*)::int AS n FROM contacts WHERE org_id = $1', [tenant.orgId]);
    assert.equal(await createContact(t.database.db, scope, { email: 'once@example.org' }, 'US'), null);
    assert.equal(
      await createContact(t.database.db, scope, { email: 'new@example.org', company_name: 'Acme' }, 'US'),
      null,
    );
    assert.equal(
      await count('SELECT count(*)::int AS n FROM contacts WHERE org_id = $1', [tenant.orgId]),
      before,
    );
  });

  test('an email taken meanwhile while the phone is new: null, and not even the phone is written', async () => {
    // Another request holds the email, uncommitted: our statement waits on it, then finds it taken.
    const other = await t.database.pool.connect();
    const otherId = randomUUID();
    try {
      await other.query('BEGIN');
      await other.query(
        `INSERT INTO contacts (id, org_id, client_id, primary_email) VALUES ($1, $2, $3, 'raced@example.org')`,
        [otherId, tenant.orgId, tenant.houseClientId],
      );
      await other.query(
        `INSERT INTO contact_emails (id, org_id, client_id, contact_id, email, is_primary)
         VALUES ($1, $2, $3, $4, 'raced@example.org', true)`,
        [randomUUID(), tenant.orgId, tenant.houseClientId, otherId],
      );
      const ours = createContact(
        t.database.db,
        scope,
        { email: 'raced@example.org', phone: '+14155550143' },
        'US',
      );
      await new Promise((resolve) => setTimeout(resolve, 300));
      await other.query('COMMIT');
      assert.equal(await ours, null);
    } finally {
      other.release();
    }
    assert.equal(
      await count('SELECT count(*)::int AS n FROM contact_phones WHERE phone_e164 = $1', ['+14155550143']),
      0,
    );
    assert.equal(
      await count(
        `SELECT count(*)::int AS n FROM contacts WHERE org_id = $1 AND primary_phone = '+14155550143'`,
        [tenant.orgId],
      ),
      0,
    );
  });
});
