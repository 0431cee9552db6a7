import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { buildTestApp, type TestApp } from '../helpers.ts';
import { addr, feedAdmin } from './support.ts';

// EIP-55 test vector: valid as given, valid all lower-case, invalid with one letter's case flipped.
const CHECKSUMMED = '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed';
const BAD_CHECKSUM = '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD';

describe('wallet feed admin API', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp();
  });
  after(() => t.close());

  const members = async () =>
    (
      await t.database.pool.query(
        `SELECT m.id, a.address, a.role FROM feed_members m JOIN feed_addresses a ON a.member_id = m.id ORDER BY m.id, a.role, a.position`,
      )
    ).rows;

  test('every feed admin route needs the admin token', async () => {
    for (const [method, url] of [
      ['PUT', '/admin/v1/feed/members/m1'],
      ['DELETE', '/admin/v1/feed/members/m1'],
      ['POST', '/admin/v1/feed/members:import'],
      ['PUT', '/admin/v1/feed/platform-wallets'],
      ['PUT', '/admin/v1/feed/marketplaces'],
    ]) {
      const response = await t.app.inject({
        method: method as 'PUT',
        url,
        headers: { authorization: 'Bearer nope' },
      });
      assert.equal(response.statusCode, 401, `${method} ${url}`);
      assert.equal(response.json().error, 'unauthorized');
    }
  });

  test('PUT a member creates it (201), then replaces it (200), storing addresses lower-case', async () => {
    const created = await feedAdmin(t.app, 'PUT', '/members/alice', {
      member_since: '2024-02-29',
      custodial_wallets: [CHECKSUMMED],
      connected_wallets: [addr(2)],
    });
    assert.equal(created.statusCode, 201, created.body);
    assert.deepEqual(created.json(), {
      member: {
        id: 'alice',
        member_since: '2024-02-29',
        custodial_wallets: [CHECKSUMMED.toLowerCase()],
        connected_wallets: [addr(2)],
      },
    });
    const replaced = await feedAdmin(t.app, 'PUT', '/members/alice', {
      member_since: '2024-03-01',
      custodial_wallets: [CHECKSUMMED.toLowerCase()],
    });
    assert.equal(replaced.statusCode, 200);
    assert.deepEqual(replaced.json().member.connected_wallets, []);
    assert.deepEqual(await members(), [
      { id: 'alice', address: CHECKSUMMED.toLowerCase(), role: 'custodial' },
    ]);
  });

  test('a bad checksum, a bad length, a repeated address or a bad date is a 400 naming the field', async () => {
    const cases: Array<[unknown, string]> = [
      [{ member_since: '2024-01-01', custodial_wallets: [BAD_CHECKSUM] }, 'custodial_wallets.0'],
      [{ member_since: '2024-01-01', connected_wallets: ['0x1234'] }, 'connected_wallets.0'],
      [{ member_since: '2024-01-01', custodial_wallets: [`${addr(1)}00`] }, 'custodial_wallets.0'],
      [
        { member_since: '2024-01-01', custodial_wallets: [addr(5)], connected_wallets: [addr(5)] },
        'connected_wallets.0',
      ],
      [{ member_since: '2024-02-30' }, 'member_since'],
      [{ custodial_wallets: [] }, 'member_since'],
      [{ member_since: '2024-01-01', nickname: 'x' }, 'nickname'],
    ];
    for (const [body, field] of cases) {
      const response = await feedAdmin(t.app, 'PUT', '/members/bob', body);
      assert.equal(response.statusCode, 400, JSON.stringify(body));
      assert.equal(response.json().error, 'validation_error');
      assert.ok(
        response.json().details.fields.some((f: { field: string }) => f.field === field),
        `${field} in ${response.body}`,
      );
    }
    const badId = await feedAdmin(t.app, 'PUT', `/members/${encodeURIComponent('no spaces')}`, {
      member_since: '2024-01-01',
    });
    assert.equal(badId.statusCode, 400);
    const notJson = await t.app.inject({
      method: 'PUT',
      url: '/admin/v1/feed/members/bob',
      headers: { authorization: 'Bearer test-admin-token', 'content-type': 'application/json' },
      payload: '{',
    });
    assert.equal(notJson.statusCode, 400);
    assert.equal(notJson.json().error, 'invalid_request');
  });

  test('an address belongs to at most one member, the platform or a marketplace: 409 otherwise', async () => {
    await feedAdmin(t.app, 'PUT', '/members/carol', {
      member_since: '2024-01-01',
      custodial_wallets: [addr(10)],
    });
    const taken = await feedAdmin(t.app, 'PUT', '/members/dave', {
      member_since: '2024-01-01',
      custodial_wallets: [addr(11)],
      // Same address in another case is the same address.
      connected_wallets: [addr(10).toUpperCase().replace('0X', '0x')],
    });
    assert.equal(taken.statusCode, 409);
    assert.equal(taken.json().error, 'address_in_use');
    assert.deepEqual(taken.json().details, { address: addr(10), role: 'custodial', member_id: 'carol' });
    assert.equal((await feedAdmin(t.app, 'DELETE', '/members/dave')).statusCode, 404, 'dave was not created');

    const platform = await feedAdmin(t.app, 'PUT', '/platform-wallets', { wallets: [addr(10)] });
    assert.equal(platform.statusCode, 409);
    const ok = await feedAdmin(t.app, 'PUT', '/platform-wallets', { wallets: [addr(20), addr(21)] });
    assert.equal(ok.statusCode, 200);
    assert.deepEqual(ok.json(), { platform_wallets: [addr(20), addr(21)] });
    const memberOnPlatform = await feedAdmin(t.app, 'PUT', '/members/erin', {
      member_since: '2024-01-01',
      custodial_wallets: [addr(21)],
    });
    assert.equal(memberOnPlatform.statusCode, 409);
    assert.equal(memberOnPlatform.json().details.role, 'platform');

    const market = await feedAdmin(t.app, 'PUT', '/marketplaces', { addresses: [addr(20)] });
    assert.equal(market.statusCode, 409);
    const markets = await feedAdmin(t.app, 'PUT', '/marketplaces', { addresses: [addr(30)] });
    assert.deepEqual(markets.json(), { marketplaces: [addr(30)] });
    // Replacing a list drops what is not in it any more.
    assert.deepEqual((await feedAdmin(t.app, 'PUT', '/platform-wallets', { wallets: [addr(21)] })).json(), {
      platform_wallets: [addr(21)],
    });
    assert.equal(
      (await feedAdmin(t.app, 'PUT', '/marketplaces', { addresses: [BAD_CHECKSUM] })).statusCode,
      400,
    );
    assert.equal((await feedAdmin(t.app, 'PUT', '/platform-wallets', { wallets: 'x' })).statusCode, 400);
  });

  test('DELETE a member frees its addresses; a second DELETE is 404', async () => {
    await feedAdmin(t.app, 'PUT', '/members/frank', {
      member_since: '2024-01-01',
      custodial_wallets: [addr(40)],
    });
    assert.equal((await feedAdmin(t.app, 'DELETE', '/members/frank')).statusCode, 204);
    assert.equal((await feedAdmin(t.app, 'DELETE', '/members/frank')).statusCode, 404);
    const reused = await feedAdmin(t.app, 'PUT', '/members/gina', {
      member_since: '2024-01-01',
      custodial_wallets: [addr(40)],
    });
    assert.equal(reused.statusCode, 201);
  });

  test('the bulk import takes thousands of members in one transaction', async () => {
    const batch = Array.from({ length: 5000 }, (_, i) => ({
      id: `bulk-${i}`,
      member_since: '2025-01-01',
      custodial_wallets: [addr(100_000 + i)],
      ...(i % 2 ? { connected_wallets: [addr(200_000 + i)] } : {}),
    }));
    const response = await feedAdmin(t.app, 'POST', '/members:import', batch);
    assert.equal(response.statusCode, 200, response.body);
    assert.deepEqual(response.json(), { imported: 5000, created: 5000, updated: 0 });
    const again = await feedAdmin(t.app, 'POST', '/members:import', batch.slice(0, 10));
    assert.deepEqual(again.json(), { imported: 10, created: 0, updated: 10 });
    const { rows } = await t.database.pool.query(
      `SELECT count(*)::int AS n FROM feed_addresses WHERE member_id LIKE 'bulk-%'`,
    );
    assert.equal(rows[0].n, 7500);
  });

  test('an import with one refused member imports nothing', async () => {
    const count = async () =>
      (await t.database.pool.query(`SELECT count(*)::int AS n FROM feed_members`)).rows[0].n as number;
    const before = await count();
    const clash = await feedAdmin(t.app, 'POST', '/members:import', [
      { id: 'new-1', member_since: '2025-01-01', custodial_wallets: [addr(300_001)] },
      { id: 'new-2', member_since: '2025-01-01', custodial_wallets: [addr(100_000)] },
    ]);
    assert.equal(clash.statusCode, 409);
    assert.equal(clash.json().details.member_id, 'bulk-0');
    const withinBatch = await feedAdmin(t.app, 'POST', '/members:import', [
      { id: 'new-1', member_since: '2025-01-01', custodial_wallets: [addr(300_001)] },
      { id: 'new-2', member_since: '2025-01-01', connected_wallets: [addr(300_001)] },
    ]);
    assert.equal(withinBatch.statusCode, 409);
    const invalid = await feedAdmin(t.app, 'POST', '/members:import', [
      { id: 'new-1', member_since: '2025-01-01', custodial_wallets: [addr(300_001)] },
      { id: 'new-1', member_since: '2025-01-01', custodial_wallets: [BAD_CHECKSUM] },
    ]);
    assert.equal(invalid.statusCode, 400);
    assert.deepEqual(
      invalid
        .json()
        .details.fields.map((f: { field: string }) => f.field)
        .sort(),
      ['1.custodial_wallets.0', '1.id'],
    );
    for (const body of [[], {}, [{ id: 'x', member_since: 'soon' }]]) {
      assert.equal((await feedAdmin(t.app, 'POST', '/members:import', body)).statusCode, 400);
    }
    assert.equal(await count(), before);
  });
});
