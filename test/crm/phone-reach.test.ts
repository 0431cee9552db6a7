import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { phoneReach } from '../../src/modules/contacts/service.ts';
import { buildTestApp, createTenant, type TestApp, type TestTenant } from '../helpers.ts';
import { type Call, caller } from './crm-client.ts';

/** The one question sending and dialing modules ask the CRM at send or dial time. */
describe('phoneReach', () => {
  let t: TestApp;
  let tenant: TestTenant;
  let asClient: Call;
  let asHouse: Call;

  before(async () => {
    t = await buildTestApp();
    tenant = await createTenant(t.app);
    asClient = caller(t, tenant.client);
    asHouse = caller(t, tenant.agency);
  });
  after(() => t.close());

  const clientScope = () => ({ orgId: tenant.orgId, clientId: tenant.clientId });
  const withPhone = async (call: Call, phone: string, fields: Record<string, unknown> = {}) => {
    const contact = (await call('POST', '/crm/contacts', { phone, first_name: 'Ada' })).body.contact;
    const [row] = (await call('GET', `/crm/contacts/${contact.id}/phones`)).body.data;
    if (Object.keys(fields).length > 0) {
      const patched = await call('PATCH', `/crm/contacts/${contact.id}/phones/${row.id}`, fields);
      assert.equal(patched.status, 200, JSON.stringify(patched.body));
    }
    return contact.id as string;
  };

  test('a number with no contact, or a contact with unknown consent, may be reached', async () => {
    assert.deepEqual(await phoneReach(t.platform.db, clientScope(), '+14155550100'), {
      contact: null,
      blocked: null,
    });
    const id = await withPhone(asClient, '+14155550101');
    assert.deepEqual(await phoneReach(t.platform.db, clientScope(), '+14155550101'), {
      contact: { id, full_name: 'Ada', archived: false },
      blocked: null,
    });
  });

  test("the tenant's opt_out is opted_out; its do_not_call is do_not_contact", async () => {
    await withPhone(asClient, '+14155550102', { consent_status: 'opt_out' });
    await withPhone(asClient, '+14155550103', { consent_status: 'do_not_call' });
    assert.equal((await phoneReach(t.platform.db, clientScope(), '+14155550102')).blocked, 'opted_out');
    assert.equal((await phoneReach(t.platform.db, clientScope(), '+14155550103')).blocked, 'do_not_contact');
  });

  test("another client's opt-out does not bind this client; a global do-not-call of the org does", async () => {
    await withPhone(asHouse, '+14155550104', { consent_status: 'opt_out' });
    await withPhone(asHouse, '+14155550105', { dnc_scope: 'global' });
    assert.deepEqual(await phoneReach(t.platform.db, clientScope(), '+14155550104'), {
      contact: null,
      blocked: null,
    });
    assert.deepEqual(await phoneReach(t.platform.db, clientScope(), '+14155550105'), {
      contact: null,
      blocked: 'do_not_contact',
    });
    const other = await createTenant(t.app);
    await withPhone(caller(t, other.client), '+14155550106', { dnc_scope: 'global' });
    assert.equal((await phoneReach(t.platform.db, clientScope(), '+14155550106')).blocked, null);
  });
});
