import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import {
  type Abi,
  type Address,
  createPublicClient,
  createTestClient,
  createWalletClient,
  custom,
  type Hex,
  http,
  type PublicClient,
  type TestClient,
  type WalletClient,
} from 'viem';
import { foundry } from 'viem/chains';
import { buildFeedApp } from '../../src/feed/app.ts';
import { readIndexState } from '../../src/modules/wallet-feed/index-store.ts';
import { type RefreshOutcome, refreshHoldingsIndex } from '../../src/modules/wallet-feed/refresh.ts';
import { freePort } from '../../src/platform/db/embedded.ts';
import { RpcSource } from '../../src/providers/chain/rpc.ts';
import { buildTestApp, type TestApp } from '../helpers.ts';
import { compileContracts, type LocalChain, startAnvil } from './chain.ts';
import { assertCsvMatchesJson, assertValidSnapshot, feedAdmin, parseSnapshotCsv } from './support.ts';

const NO_RIGHTS = `0x${'0'.repeat(64)}` as Hex;
const CONFIRMATIONS = 2;

/**
 * End to end on a local chain (anvil from npm): contracts compiled with solc, real transactions, the
 * rpc source through viem, the refresh into PostgreSQL and the feed app's JSON and CSV.
 */
describe('wallet feed on a local chain', () => {
  let chain: LocalChain;
  let t: TestApp;
  let feed: FastifyInstance;
  let publicClient: PublicClient;
  let wallet: WalletClient;
  let testClient: TestClient;
  let acc: Address[];
  const lower = (i: number) => acc[i].toLowerCase();
  const contracts: Record<string, { address: Address; abi: Abi }> = {};

  const send = async (from: number, name: string, functionName: string, args: unknown[]) => {
    const { address, abi } = contracts[name];
    const hash = await wallet.writeContract({
      address,
      abi,
      functionName,
      args,
      account: acc[from],
      chain: foundry,
    });
    const receipt = await publicClient.waitForTransactionReceipt({ hash, pollingInterval: 20 });
    assert.equal(receipt.status, 'success', `${name}.${functionName}`);
    return receipt;
  };
  const deploy = async (name: string, compiled: { abi: Abi; bytecode: Hex }) => {
    const hash = await wallet.deployContract({ ...compiled, account: acc[0], chain: foundry });
    const receipt = await publicClient.waitForTransactionReceipt({ hash, pollingInterval: 20 });
    contracts[name] = { address: receipt.contractAddress!, abi: compiled.abi };
  };
  const snapshot = async () => {
    const response = await feed.inject({ method: 'GET', url: '/snapshot.json' });
    assert.equal(response.statusCode, 200, response.body);
    const body = response.json();
    assertValidSnapshot(body);
    const r = body.reconciliation;
    assert.equal(r.members + r.non_members + r.platform + r.marketplace_escrow, body.collection.supply);
    return body;
  };
  const entriesOf = (body: any) =>
    Object.fromEntries(body.entries.map((e: any) => [e.wallet, [e.type, e.giraffe, e.wallets.length]]));
  const refresh = async (): Promise<RefreshOutcome> => {
    const outcome = await refreshHoldingsIndex(t.platform);
    assert.equal(outcome.status, 'refreshed', JSON.stringify(outcome));
    return outcome;
  };

  before(async () => {
    const compiled = compileContracts();
    chain = await startAnvil(await freePort());
    const transport = http(chain.url);
    publicClient = createPublicClient({ chain: foundry, transport, cacheTime: 0 }) as PublicClient;
    wallet = createWalletClient({ chain: foundry, transport });
    testClient = createTestClient({ chain: foundry, mode: 'anvil', transport });
    acc = await wallet.getAddresses();
    await deploy('tower', compiled.GiraffeTower);
    await deploy('other', compiled.GiraffeTower);
    await deploy('market', compiled.EscrowMarket);
    await deploy('registry', compiled.DelegateRegistry);
    t = await buildTestApp({
      CHAIN_RPC_URL: chain.url,
      COLLECTION_ADDRESS: contracts.tower.address,
      DELEGATE_REGISTRY_ADDRESS: contracts.registry.address,
      COLLECTION_START_BLOCK: '0',
      CHAIN_CONFIRMATIONS: String(CONFIRMATIONS),
      CHAIN_LOG_BLOCK_RANGE: '1000',
      SNAPSHOT_CACHE_MS: '0',
      FEED_RATE_LIMIT_PER_MINUTE: '1000',
    });
    feed = await buildFeedApp(t.platform);
  });
  after(async () => {
    await feed?.close();
    await t?.close();
    await chain?.stop();
  });

  test('mint, transfer, rent, delegate, list in escrow and burn: entries, flags and counts are exact', async () => {
    const tower = contracts.tower.address;
    const other = contracts.other.address;
    const market = contracts.market.address;
    await feedAdmin(t.app, 'PUT', '/members/m1', {
      member_since: '2022-04-01',
      custodial_wallets: [acc[1]],
      connected_wallets: [acc[2]],
    });
    await feedAdmin(t.app, 'PUT', '/members/m2', { member_since: '2023-01-15', custodial_wallets: [acc[3]] });
    await feedAdmin(t.app, 'PUT', '/members/m3', { member_since: '2023-06-30', connected_wallets: [acc[4]] });
    await feedAdmin(t.app, 'PUT', '/members/m4', {
      member_since: '2024-12-24',
      custodial_wallets: [acc[18]],
    });
    await feedAdmin(t.app, 'PUT', '/platform-wallets', { wallets: [acc[5]] });
    await feedAdmin(t.app, 'PUT', '/marketplaces', { addresses: [market] });

    const owners: Record<number, number> = { 1: 1, 2: 2, 3: 6, 4: 5, 5: 4, 6: 6, 7: 7, 8: 8, 9: 14, 10: 15 };
    for (const [tokenId, owner] of Object.entries(owners))
      await send(0, 'tower', 'mint', [acc[owner], BigInt(tokenId)]);
    await send(0, 'other', 'mint', [acc[16], 1n]);

    const { timestamp } = await publicClient.getBlock();
    // Rented until far ahead: the member m2 (acc3) qualifies through a rental only.
    await send(6, 'tower', 'setUser', [3n, acc[3], timestamp + 1_000_000n]);
    // A rental that has already expired qualifies nobody.
    await send(2, 'tower', 'setUser', [2n, acc[17], timestamp - 10n]);
    // acc6 delegates token 6, then sells it to acc7: the old owner's delegation is void.
    await send(6, 'registry', 'delegateERC721', [acc[11], tower, 6n, NO_RIGHTS, true]);
    await send(6, 'tower', 'transferFrom', [acc[6], acc[7], 6n]);
    await send(8, 'registry', 'delegateAll', [acc[10], NO_RIGHTS, true]);
    await send(7, 'registry', 'delegateContract', [acc[12], tower, NO_RIGHTS, true]);
    // A delegation for another collection, and one enabled then revoked: neither counts.
    await send(8, 'registry', 'delegateContract', [acc[13], other, NO_RIGHTS, true]);
    await send(7, 'registry', 'delegateAll', [acc[9], NO_RIGHTS, true]);
    await send(7, 'registry', 'delegateAll', [acc[9], NO_RIGHTS, false]);
    // Listed for sale: the token sits in escrow and counts for its seller.
    await send(14, 'tower', 'approve', [market, 9n]);
    await send(14, 'market', 'list', [tower, 9n, 10n ** 18n]);
    await send(15, 'tower', 'burn', [10n]);

    // The last CONFIRMATIONS blocks (the listing and the burn) wait until they are confirmed.
    const head = Number(await publicClient.getBlockNumber());
    const early = await refresh();
    assert.equal((early as { block: number }).block, head - CONFIRMATIONS);
    const unconfirmed = await snapshot();
    assert.equal(unconfirmed.collection.supply, 10, 'the burn is not confirmed yet');
    assert.ok(entriesOf(unconfirmed)[lower(15)], 'acc15 still holds its unconfirmed-burned token');

    await testClient.mine({ blocks: CONFIRMATIONS });
    await refresh();
    const body = await snapshot();
    assert.deepEqual(body.collection, { giraffe_tower: tower.toLowerCase(), supply: 9 });
    const expected: Record<string, [string, boolean, number]> = {
      [lower(1)]: ['member', true, 2],
      [lower(3)]: ['member', true, 1],
      [lower(18)]: ['member', false, 1],
      [lower(5)]: ['platform', true, 1],
      [lower(6)]: ['non_member', true, 1],
      [lower(7)]: ['non_member', true, 1],
      [lower(8)]: ['non_member', true, 1],
      [lower(10)]: ['non_member', true, 1],
      [lower(12)]: ['non_member', true, 1],
      [lower(14)]: ['non_member', true, 1],
    };
    assert.deepEqual(entriesOf(body), expected);
    assert.deepEqual(
      body.entries.map((e: any) => e.wallet),
      Object.keys(expected).sort(),
      'sorted by wallet',
    );
    assert.deepEqual(
      body.entries.find((e: any) => e.wallet === lower(1)).wallets,
      [lower(1), lower(2)].sort(),
    );
    assert.equal(body.entries.find((e: any) => e.wallet === lower(3)).member_since, '2023-01-15');
    assert.deepEqual(body.counts, {
      entries: 10,
      wallets: 11,
      members: 3,
      non_members: 6,
      platform: 1,
      with_giraffe: 9,
      without_giraffe: 1,
      giraffes_in_marketplace_escrow: 1,
      excluded_without_wallet: 1,
    });
    assert.deepEqual(body.reconciliation, {
      equation: 'supply = members + non_members + platform + marketplace_escrow',
      supply: 9,
      members: 3,
      non_members: 4,
      platform: 1,
      marketplace_escrow: 1,
    });
    for (const absent of [4, 9, 11, 13, 15, 16, 17])
      assert.equal(entriesOf(body)[lower(absent)], undefined, `acc${absent}`);
    assert.equal(entriesOf(body)[market.toLowerCase()], undefined);

    const csv = await feed.inject({ method: 'GET', url: '/snapshot.csv' });
    assertCsvMatchesJson(parseSnapshotCsv(csv.body), body);
  });

  test('a reorg is detected by the stored block hashes and undone from the fork point', async () => {
    const before = await snapshot();
    const checkpoint = await testClient.snapshot();
    // On the branch that will vanish: acc6 sends token 3 (rented by m2) to acc19.
    await send(6, 'tower', 'transferFrom', [acc[6], acc[19], 3n]);
    await testClient.mine({ blocks: CONFIRMATIONS });
    await refresh();
    const branch = entriesOf(await snapshot());
    assert.deepEqual(branch[lower(19)], ['non_member', true, 1]);
    assert.equal(branch[lower(6)], undefined);
    assert.deepEqual(branch[lower(3)], ['member', false, 1], 'the transfer ended the rental');
    const forkedAt = (await readIndexState(t.platform.db))!.last_block!;

    await testClient.revert({ id: checkpoint });
    await testClient.mine({ blocks: CONFIRMATIONS + 2 });
    const outcome = (await refresh()) as Extract<RefreshOutcome, { status: 'refreshed' }>;
    assert.ok(outcome.reorg, 'reorg reported');
    assert.equal(outcome.reorg.detectedAt, forkedAt);
    assert.ok(outcome.reorg.forkBlock !== null && outcome.reorg.forkBlock < forkedAt - CONFIRMATIONS);
    const after = await snapshot();
    assert.deepEqual(after.entries, before.entries);
    assert.deepEqual(after.counts, before.counts);
    assert.deepEqual(after.reconciliation, before.reconciliation);
  });

  test('log ranges halve while the node answers "too many results", and the index is the same', async () => {
    let refusals = 0;
    let widest = 0;
    const flaky = custom(
      {
        async request({ method, params }) {
          if (method === 'eth_getLogs') {
            const [{ fromBlock, toBlock }] = params as [{ fromBlock: Hex; toBlock: Hex }];
            const span = Number(toBlock) - Number(fromBlock) + 1;
            if (span > 4) {
              refusals += 1;
              throw new Error('query returned more than 10000 results');
            }
            widest = Math.max(widest, span);
          }
          const response = await fetch(chain.url, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
          });
          const json = (await response.json()) as { result?: unknown; error?: { message: string } };
          if (json.error) throw new Error(json.error.message);
          return json.result;
        },
      },
      { retryCount: 0 },
    );
    const expected = await snapshot();
    await t.database.pool.query('TRUNCATE feed_chain_logs, feed_index_blocks');
    const config = t.platform.config;
    const source = new RpcSource({
      rpc: flaky,
      collection: config.collectionAddress!,
      registry: config.delegateRegistryAddress,
      startBlock: 0,
      confirmations: CONFIRMATIONS,
      maxBlockRange: 64,
    });
    const outcome = await refreshHoldingsIndex(t.platform, source);
    assert.equal(outcome.status, 'refreshed', JSON.stringify(outcome));
    assert.ok(refusals > 0, 'the node refused wide ranges');
    assert.equal(widest, 4);
    const rebuilt = await snapshot();
    assert.deepEqual(rebuilt.entries, expected.entries);
    assert.deepEqual(rebuilt.counts, expected.counts);
  });
});
