import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { debitFuel, refundFuel } from '../../src/modules/fuel/service.ts';
import { newId } from '../../src/platform/db/ids.ts';
import {
  ADMIN_TOKEN,
  adminCall,
  buildTestApp,
  createTenant,
  type TestApp,
  type TestTenant,
} from '../helpers.ts';

describe('GET /v1/fuel and /v1/fuel/ledger', () => {
  let t: TestApp;
  let tenant: TestTenant;
  let secondClientId: string;
  let secondClient: Record<string, string>;

  const get = (url: string, headers: Record<string, string>) => t.app.inject({ method: 'GET', url, headers });
  const spend = (clientId: string, amount: number, referenceId = newId()) =>
    t.platform.db
      .transaction()
      .execute((trx) =>
        debitFuel(
          trx,
          { orgId: tenant.orgId, clientId },
          { amount, reason: 'sms', referenceType: 'sms_message', referenceId },
        ),
      );

  before(async () => {
    t = await buildTestApp();
    tenant = await createTenant(t.app);
    const { client } = await adminCall(t.app, 'POST', `/orgs/${tenant.orgId}/clients`, { name: 'Client B' });
    secondClientId = client.id;
    const key = await adminCall(t.app, 'POST', `/orgs/${tenant.orgId}/keys`, {
      name: 'b',
      kind: 'client',
      client_id: client.id,
      rate_limit_per_minute: 100_000,
    });
    secondClient = { authorization: `Bearer ${key.key}` };

    await adminCall(t.app, 'POST', `/orgs/${tenant.orgId}/fuel`, { amount: 100, reason: 'Starter pack' });
    await spend(tenant.clientId, 3);
    await spend(secondClientId, 2);
    await spend(tenant.houseClientId, 1);
  });
  after(() => t.close());

  test("every kind of key reads the org's balance", async () => {
    for (const headers of [tenant.agency, tenant.client, tenant.agencyAsClient, secondClient]) {
      const response = await get('/v1/fuel', headers);
      assert.equal(response.statusCode, 200);
      assert.deepEqual(response.json(), { fuel: { balance: 94 } });
    }
  });

  test('the admin grant is a ledger entry with reason grant; an agency key acting as itself sees the whole org', async () => {
    const response = await get('/v1/fuel/ledger', tenant.agency);
    assert.equal(response.statusCode, 200);
    const page = response.json();
    assert.equal(page.limit, 50);
    assert.equal(page.next_page_token, null);
    assert.deepEqual(
      page.data.map((entry: any) => [entry.amount, entry.balance_after, entry.reason]),
      [
        [-1, 94, 'sms'],
        [-2, 95, 'sms'],
        [-3, 97, 'sms'],
        [100, 100, 'grant'],
      ],
    );
    const grant = page.data[3];
    assert.deepEqual(Object.keys(grant).sort(), [
      'amount',
      'balance_after',
      'client_id',
      'created_at',
      'id',
      'note',
      'reason',
      'reference_id',
      'reference_type',
    ]);
    assert.equal(grant.reference_type, 'admin_grant');
    assert.equal(grant.reference_id, null);
    assert.equal(grant.client_id, null);
    assert.equal(grant.note, 'Starter pack');
    assert.match(grant.created_at, /Z$/);
    assert.equal(page.data[0].reference_type, 'sms_message');
    assert.equal(page.data[0].client_id, tenant.houseClientId);
  });

  test("a caller acting as a client sees that client's entries only", async () => {
    for (const headers of [tenant.client, tenant.agencyAsClient]) {
      const entries = (await get('/v1/fuel/ledger', headers)).json().data;
      assert.deepEqual(
        entries.map((entry: any) => [entry.amount, entry.client_id]),
        [[-3, tenant.clientId]],
      );
    }
    const entries = (await get('/v1/fuel/ledger', secondClient)).json().data;
    assert.deepEqual(
      entries.map((entry: any) => [entry.amount, entry.client_id]),
      [[-2, secondClientId]],
    );
  });

  test("another org sees none of this org's entries", async () => {
    const other = await createTenant(t.app);
    assert.deepEqual((await get('/v1/fuel/ledger', other.agency)).json().data, []);
    assert.deepEqual((await get('/v1/fuel', other.agency)).json(), { fuel: { balance: 0 } });
  });

  test('pages newest first with page tokens bound to the caller', async () => {
    const first = (await get('/v1/fuel/ledger?limit=3', tenant.agency)).json();
    assert.equal(first.data.length, 3);
    assert.ok(first.next_page_token);
    const second = (
      await get(`/v1/fuel/ledger?limit=3&page_token=${first.next_page_token}`, tenant.agency)
    ).json();
    assert.deepEqual(
      second.data.map((entry: any) => entry.reason),
      ['grant'],
    );
    assert.equal(second.next_page_token, null);
    const foreign = await get(`/v1/fuel/ledger?limit=3&page_token=${first.next_page_token}`, tenant.client);
    assert.equal(foreign.statusCode, 400);
    assert.equal(foreign.json().error, 'invalid_request');
    assert.equal((await get('/v1/fuel/ledger?limit=0', tenant.agency)).json().error, 'validation_error');
  });

  test('a refund shows as its own entry with the reference of the debit', async () => {
    const referenceId = newId();
    await spend(tenant.clientId, 5, referenceId);
    await t.platform.db
      .transaction()
      .execute((trx) =>
        refundFuel(
          trx,
          { orgId: tenant.orgId, clientId: tenant.clientId },
          { referenceType: 'sms_message', referenceId },
        ),
      );
    const [refund, debit] = (await get('/v1/fuel/ledger?limit=2', tenant.client)).json().data;
    assert.deepEqual(
      [refund.reason, refund.amount, refund.reference_id, debit.reason, debit.amount, debit.reference_id],
      ['refund', 5, referenceId, 'sms', -5, referenceId],
    );
    assert.deepEqual((await get('/v1/fuel', tenant.client)).json(), { fuel: { balance: 94 } });
  });

  test('the admin call takes FUEL back as an adjustment, and refuses to go below zero with {required, balance}', async () => {
    const other = await createTenant(t.app);
    await adminCall(t.app, 'POST', `/orgs/${other.orgId}/fuel`, { amount: 10 });
    await adminCall(t.app, 'POST', `/orgs/${other.orgId}/fuel`, { amount: -4, reason: 'Correction' });
    const over = await t.app.inject({
      method: 'POST',
      url: `/admin/v1/orgs/${other.orgId}/fuel`,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      payload: { amount: -7 },
    });
    assert.equal(over.statusCode, 402);
    assert.deepEqual(over.json(), {
      error: 'fuel_exhausted',
      message: 'This action needs 7 FUEL and the balance is 6.',
      details: { required: 7, balance: 6 },
    });
    const entries = (await get('/v1/fuel/ledger', other.agency)).json().data;
    assert.deepEqual(
      entries.map((entry: any) => [entry.reason, entry.amount, entry.note]),
      [
        ['adjustment', -4, 'Correction'],
        ['grant', 10, null],
      ],
    );
  });

  test('a legacy SMS key may not read FUEL', async () => {
    const legacy = await adminCall(t.app, 'POST', `/orgs/${tenant.orgId}/keys`, {
      name: 'legacy',
      kind: 'legacy_sms',
    });
    const response = await get('/v1/fuel', { authorization: `Bearer ${legacy.key}` });
    assert.equal(response.statusCode, 403);
  });
});
