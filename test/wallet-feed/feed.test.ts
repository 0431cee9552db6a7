import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { gunzipSync } from 'node:zlib';
import type { FastifyInstance } from 'fastify';
import { buildFeedApp } from '../../src/feed/app.ts';
import { readIndexState } from '../../src/modules/wallet-feed/index-store.ts';
import { refreshDue, refreshHoldingsIndex } from '../../src/modules/wallet-feed/refresh.ts';
import { ImportSource } from '../../src/providers/chain/import.ts';
import { buildTestApp, eventually, type TestApp } from '../helpers.ts';
import { addr, assertCsvMatchesJson, assertValidSnapshot, feedAdmin, parseSnapshotCsv } from './support.ts';

const COLLECTION = addr(0xc0);
const MARKET = addr(0xee);
const FAR = '2099-01-01T00:00:00Z';

const holdingsFile = {
  collection: COLLECTION,
  tokens: [
    { token_id: '1', owner: addr(1) },
    { token_id: '2', owner: addr(0x50) },
    { token_id: '3', owner: MARKET, seller: addr(0x61) },
    { token_id: '4', owner: addr(0x62), renter: addr(3), rental_expires: FAR },
    { token_id: '5', owner: addr(0x71) },
  ],
  delegations: [
    { from: addr(0x62), to: addr(0x63), scope: 'all' },
    { from: addr(0x62), to: addr(0x64), scope: 'contract', contract: addr(0xc1) },
  ],
};

describe('wallet snapshot feed', () => {
  let t: TestApp;
  let feed: FastifyInstance;
  let dir: string;
  let file: string;

  const get = (url: string, headers: Record<string, string> = {}, remoteAddress?: string) =>
    feed.inject({ method: 'GET', url, headers, ...(remoteAddress ? { remoteAddress } : {}) });
  const refresh = () => refreshHoldingsIndex(t.platform, ImportSource.fromFile(file, COLLECTION));

  before(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'feed-test-'));
    file = path.join(dir, 'holdings.json');
    await fs.writeFile(file, JSON.stringify(holdingsFile));
    t = await buildTestApp({
      SNAPSHOT_CACHE_MS: '0',
      FEED_RATE_LIMIT_PER_MINUTE: '1000',
      CHAIN_HOLDINGS_FILE: file,
      COLLECTION_ADDRESS: COLLECTION,
    });
    feed = await buildFeedApp(t.platform);
  });
  after(async () => {
    await feed.close();
    await t.close();
    await fs.rm(dir, { recursive: true, force: true });
  });

  test('before the first build the feed is 503 with Retry-After, and still CORS-readable', async () => {
    for (const url of ['/snapshot.json', '/snapshot.csv']) {
      const response = await get(url);
      assert.equal(response.statusCode, 503);
      assert.equal(response.json().error, 'service_unavailable');
      assert.equal(response.headers['retry-after'], '30');
      assert.equal(response.headers['access-control-allow-origin'], '*');
    }
  });

  test('the worker builds the index once at start', async () => {
    await t.startWorker();
    const state = await eventually(
      async () => (await readIndexState(t.platform.db))?.refreshed_at ?? undefined,
      60_000,
    );
    assert.ok(state instanceof Date);
    assert.equal((await get('/snapshot.json')).statusCode, 200);
  });

  test('GET /snapshot.json is the whole feed, valid against its JSON Schema, exactly per the rules', async () => {
    await feedAdmin(t.app, 'PUT', '/members/m1', {
      member_since: '2021-07-01',
      custodial_wallets: [addr(1)],
      connected_wallets: [addr(2)],
    });
    await feedAdmin(t.app, 'PUT', '/members/m2', {
      member_since: '2022-01-01',
      custodial_wallets: [addr(3)],
    });
    await feedAdmin(t.app, 'PUT', '/members/m3', {
      member_since: '2023-01-01',
      custodial_wallets: [addr(4)],
    });
    await feedAdmin(t.app, 'PUT', '/members/m4', {
      member_since: '2023-01-01',
      connected_wallets: [addr(0x71)],
    });
    await feedAdmin(t.app, 'PUT', '/platform-wallets', { wallets: [addr(0x50), addr(0x51)] });
    await feedAdmin(t.app, 'PUT', '/marketplaces', { addresses: [MARKET] });

    const response = await get('/snapshot.json');
    assert.equal(response.statusCode, 200);
    assert.equal(response.headers['content-type'], 'application/json; charset=utf-8');
    assert.equal(response.headers['access-control-allow-origin'], '*');
    assert.equal(response.headers['cache-control'], 'public, max-age=0');
    assert.equal(response.headers['x-snapshot-stale'], 'false');
    assert.match(String(response.headers['x-snapshot-age-seconds']), /^\d+$/);
    const body = response.json();
    assertValidSnapshot(body);
    assert.equal(body.schema, 'wallet-snapshot/2');
    assert.deepEqual(body.collection, { giraffe_tower: COLLECTION, supply: 5 });
    assert.equal(body.freshness.membership, 'live');
    assert.deepEqual(
      body.entries.map((e: any) => [e.wallet, e.wallets, e.type, e.giraffe, e.member_since]),
      [
        [addr(1), [addr(1), addr(2)], 'member', true, '2021-07-01'],
        [addr(3), [addr(3)], 'member', true, '2022-01-01'],
        [addr(4), [addr(4)], 'member', false, '2023-01-01'],
        [addr(0x50), [addr(0x50), addr(0x51)], 'platform', true, undefined],
        [addr(0x61), [addr(0x61)], 'non_member', true, undefined],
        [addr(0x62), [addr(0x62)], 'non_member', true, undefined],
        [addr(0x63), [addr(0x63)], 'non_member', true, undefined],
      ],
    );
    assert.deepEqual(body.counts, {
      entries: 7,
      wallets: 9,
      members: 3,
      non_members: 3,
      platform: 1,
      with_giraffe: 6,
      without_giraffe: 1,
      giraffes_in_marketplace_escrow: 1,
      excluded_without_wallet: 1,
    });
    assert.deepEqual(body.reconciliation, {
      equation: 'supply = members + non_members + platform + marketplace_escrow',
      supply: 5,
      members: 2,
      non_members: 1,
      platform: 1,
      marketplace_escrow: 1,
    });
    const r = body.reconciliation;
    assert.equal(r.members + r.non_members + r.platform + r.marketplace_escrow, body.collection.supply);
    // Nothing else is published.
    assert.deepEqual(Object.keys(body).sort(), [
      'collection',
      'counts',
      'disclosure',
      'entries',
      'freshness',
      'generated_at',
      'key',
      'reconciliation',
      'schema',
    ]);
    assert.doesNotMatch(response.body, /"m[1-4]"|token_id/);
    for (const entry of body.entries) {
      assert.deepEqual(
        Object.keys(entry).filter(
          (k) => !['wallet', 'wallets', 'type', 'giraffe', 'member_since'].includes(k),
        ),
        [],
      );
    }
  });

  test('GET /snapshot.csv has one row per wallet and parses with a CSV parser', async () => {
    const json = (await get('/snapshot.json')).json();
    const response = await get('/snapshot.csv');
    assert.equal(response.statusCode, 200);
    assert.equal(response.headers['content-type'], 'text/csv; charset=utf-8');
    const rows = parseSnapshotCsv(response.body);
    assertCsvMatchesJson(rows, json);
    assert.deepEqual(
      rows.filter((row) => row.cluster === addr(1)).map((row) => [row.wallet, row.kind]),
      [
        [addr(1), 'custodial'],
        [addr(2), 'connected'],
      ],
    );
    assert.equal(rows.find((row) => row.wallet === addr(0x62))?.kind, 'holder');
  });

  test('HEAD answers the same headers without a body', async () => {
    for (const url of ['/snapshot.json', '/snapshot.csv']) {
      const got = await get(url);
      const head = await feed.inject({ method: 'HEAD', url });
      assert.equal(head.statusCode, 200);
      assert.equal(head.body, '');
      for (const name of [
        'etag',
        'content-type',
        'cache-control',
        'x-snapshot-stale',
        'access-control-allow-origin',
      ]) {
        assert.equal(head.headers[name], got.headers[name], name);
      }
      assert.equal(head.headers['content-length'], String(Buffer.byteLength(got.body)));
    }
  });

  test('ETag: If-None-Match answers 304 while the content is the same, across rebuilds', async () => {
    const first = await get('/snapshot.json');
    const etag = String(first.headers.etag);
    assert.match(etag, /^W\/"j-/);
    const notModified = await get('/snapshot.json', { 'if-none-match': etag });
    assert.equal(notModified.statusCode, 304);
    assert.equal(notModified.body, '');
    assert.equal(notModified.headers.etag, etag);
    assert.ok(notModified.headers['x-snapshot-age-seconds'] !== undefined);
    assert.equal((await get('/snapshot.json', { 'if-none-match': '"other", ' + etag })).statusCode, 304);
    const csvEtag = String((await get('/snapshot.csv')).headers.etag);
    assert.notEqual(csvEtag, etag);
    assert.equal((await get('/snapshot.csv', { 'if-none-match': etag })).statusCode, 200);

    await feedAdmin(t.app, 'PUT', '/members/m5', {
      member_since: '2024-01-01',
      custodial_wallets: [addr(5)],
    });
    const changed = await get('/snapshot.json', { 'if-none-match': etag });
    assert.equal(changed.statusCode, 200);
    assert.notEqual(changed.headers.etag, etag);
    await feedAdmin(t.app, 'DELETE', '/members/m5');
  });

  test('gzip when asked, identity otherwise', async () => {
    for (const url of ['/snapshot.json', '/snapshot.csv']) {
      const plain = await get(url);
      assert.equal(plain.headers['content-encoding'], undefined);
      assert.equal(plain.headers.vary, 'Accept-Encoding');
      const zipped = await get(url, { 'accept-encoding': 'br;q=1, gzip;q=0.8' });
      assert.equal(zipped.headers['content-encoding'], 'gzip');
      // Each request builds anew here (SNAPSHOT_CACHE_MS=0): only generated_at may differ.
      const withoutTime = (text: string) => text.replace(/"generated_at":"[^"]+"/, '');
      assert.equal(withoutTime(gunzipSync(zipped.rawPayload).toString()), withoutTime(plain.body));
      const refused = await get(url, { 'accept-encoding': 'gzip;q=0' });
      assert.equal(refused.headers['content-encoding'], undefined);
    }
  });

  test('a CORS preflight for If-None-Match is allowed from any origin', async () => {
    const response = await feed.inject({
      method: 'OPTIONS',
      url: '/snapshot.json',
      headers: { origin: 'https://example.org', 'access-control-request-method': 'GET' },
    });
    assert.equal(response.statusCode, 204);
    assert.equal(response.headers['access-control-allow-origin'], '*');
    assert.match(String(response.headers['access-control-allow-headers']), /If-None-Match/);
    assert.match(
      String((await get('/snapshot.json')).headers['access-control-expose-headers']),
      /X-Snapshot-Stale/,
    );
  });

  test('stale when the index is older than twice its refresh interval', async () => {
    await t.database.pool.query(
      `UPDATE feed_index_state SET refreshed_at = now() - make_interval(secs => $1)`,
      [(2 * t.config.walletIndexRefreshMs) / 1000 + 5],
    );
    const response = await get('/snapshot.json');
    assert.equal(response.statusCode, 200, 'an old index is still served: retry later, not gone');
    assert.equal(response.headers['x-snapshot-stale'], 'true');
    assert.equal((await refresh()).status, 'refreshed');
    assert.equal((await get('/snapshot.json')).headers['x-snapshot-stale'], 'false');
  });

  test('a failed refresh keeps the index and marks the feed stale until the next success', async () => {
    const before = (await get('/snapshot.json')).json();
    await fs.writeFile(file, '{"collection": "nope"');
    const failed = await refresh();
    assert.equal(failed.status, 'failed');
    const during = await get('/snapshot.json');
    assert.equal(during.headers['x-snapshot-stale'], 'true');
    assert.deepEqual(during.json().entries, before.entries);
    assert.match(String((await readIndexState(t.platform.db))?.failure), /not JSON/);

    // Tokens that do not add up to the supply are refused the same way.
    await fs.writeFile(file, JSON.stringify({ ...holdingsFile, supply: 6 }));
    const unbalanced = await refresh();
    assert.equal(unbalanced.status, 'failed');
    assert.match((unbalanced as { error: string }).error, /supply is 6/);
    assert.deepEqual((await get('/snapshot.json')).json().entries, before.entries);

    await fs.writeFile(file, JSON.stringify(holdingsFile));
    assert.equal((await refresh()).status, 'refreshed');
    assert.equal((await get('/snapshot.json')).headers['x-snapshot-stale'], 'false');
  });

  test('a build that does not reconcile is refused: the last good snapshot is served, stale', async () => {
    const good = await get('/snapshot.json');
    await t.database.pool.query(`UPDATE feed_index_state SET supply = supply + 1`);
    const refused = await get('/snapshot.json');
    assert.equal(refused.statusCode, 200);
    assert.equal(refused.headers['x-snapshot-stale'], 'true');
    assert.equal(refused.headers.etag, good.headers.etag);
    assert.equal(refused.json().generated_at, good.json().generated_at);
    await t.database.pool.query(`UPDATE feed_index_state SET supply = supply - 1`);
    assert.equal((await get('/snapshot.json')).headers['x-snapshot-stale'], 'false');
  });

  test('a refresh is due after the interval, sooner after a failure', () => {
    const at = new Date('2026-01-01T00:00:00Z');
    const state = (attempted: Date | null, failed: Date | null) =>
      ({ attempted_at: attempted, failed_at: failed }) as any;
    const hour = 3_600_000;
    assert.equal(refreshDue(undefined, at, hour), true);
    assert.equal(refreshDue(state(new Date(at.getTime() - hour + 1000), null), at, hour), false);
    assert.equal(refreshDue(state(new Date(at.getTime() - hour), null), at, hour), true);
    assert.equal(refreshDue(state(new Date(at.getTime() - 300_000), at), at, hour), true);
    assert.equal(refreshDue(state(new Date(at.getTime() - 200_000), at), at, hour), false);
  });
});

describe('wallet feed rate limit and demo data', () => {
  let t: TestApp;
  let feed: FastifyInstance;
  before(async () => {
    t = await buildTestApp({ FEED_RATE_LIMIT_PER_MINUTE: '3', SEED_DEMO: 'true' });
    feed = await buildFeedApp(t.platform);
  });
  after(async () => {
    await feed.close();
    await t.close();
  });

  test('with no chain source, the first refresh seeds demo members and imports demo holdings', async () => {
    assert.equal((await refreshHoldingsIndex(t.platform)).status, 'refreshed');
    const body = (await feed.inject({ url: '/snapshot.json', remoteAddress: '10.0.0.9' })).json();
    assertValidSnapshot(body);
    assert.deepEqual(
      [
        body.counts.members,
        body.counts.platform,
        body.counts.non_members,
        body.counts.excluded_without_wallet,
      ],
      [3, 1, 3, 1],
    );
    assert.equal(body.counts.giraffes_in_marketplace_escrow, 1);
  });

  test('60 a minute per source IP and per format by default; here 3, then 429 with the headers', async () => {
    const ip = '10.0.0.1';
    for (let i = 0; i < 3; i++) {
      const response = await feed.inject({ url: '/snapshot.json', remoteAddress: ip });
      assert.equal(response.statusCode, 200);
      assert.equal(response.headers['x-ratelimit-limit'], '3');
      assert.equal(response.headers['x-ratelimit-remaining'], String(2 - i));
    }
    const limited = await feed.inject({ url: '/snapshot.json', remoteAddress: ip });
    assert.equal(limited.statusCode, 429);
    assert.equal(limited.json().error, 'rate_limited');
    assert.ok(Number(limited.headers['retry-after']) > 0);
    assert.equal(limited.headers['access-control-allow-origin'], '*');
    assert.equal(
      (await feed.inject({ url: '/snapshot.csv', remoteAddress: ip })).statusCode,
      200,
      'other format',
    );
    assert.equal(
      (await feed.inject({ url: '/snapshot.json', remoteAddress: '10.0.0.2' })).statusCode,
      200,
      'other IP',
    );
  });

  test('IPv6 callers of one /64 share a budget', async () => {
    for (let i = 1; i <= 3; i++) {
      const response = await feed.inject({ url: '/snapshot.json', remoteAddress: `2001:db8:5:7::${i}` });
      assert.equal(response.statusCode, 200);
    }
    const sameNetwork = await feed.inject({ url: '/snapshot.json', remoteAddress: '2001:db8:5:7:abcd::9' });
    assert.equal(sameNetwork.statusCode, 429, 'a fresh address in the same /64 is no fresh budget');
    const otherNetwork = await feed.inject({ url: '/snapshot.json', remoteAddress: '2001:db8:5:8::1' });
    assert.equal(otherNetwork.statusCode, 200);
  });
});
