import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Delegation, TokenHolding } from '../../providers/chain/types.ts';
import { type HoldingsInput, type MembershipInput, reduceSnapshot } from './reducer.ts';

const COLLECTION = '0x00000000000000000000000000000000000000c0';
const OTHER = '0x00000000000000000000000000000000000000c1';
const MARKET = '0x00000000000000000000000000000000000000ee';
const NOW = new Date('2026-01-01T00:00:00Z');
const NOW_S = NOW.getTime() / 1000;
const a = (n: number) => `0x${n.toString(16).padStart(40, '0')}`;

const token = (tokenId: string, owner: string, extra: Partial<TokenHolding> = {}): TokenHolding => ({
  tokenId,
  owner,
  previousOwner: null,
  renter: null,
  rentalExpires: null,
  ...extra,
});
const delegation = (
  delegator: string,
  delegate: string,
  scope: Delegation['scope'],
  extra: Partial<Delegation> = {},
): Delegation => ({
  delegator,
  delegate,
  scope,
  contract: scope === 'all' ? null : COLLECTION,
  tokenId: null,
  rights: `0x${'0'.repeat(64)}`,
  ...extra,
});
const membership = (partial: Partial<MembershipInput> = {}): MembershipInput => ({
  members: [],
  platformWallets: [],
  marketplaces: [MARKET],
  ...partial,
});
const holdings = (
  tokens: TokenHolding[],
  delegations: Delegation[] = [],
  supply = tokens.length,
): HoldingsInput => ({
  collection: COLLECTION,
  supply,
  tokens,
  delegations,
});
const byWallet = (snapshot: ReturnType<typeof reduceSnapshot>) =>
  Object.fromEntries(snapshot.entries.map((entry) => [entry.wallet, entry]));

describe('snapshot reducer', () => {
  test('a burned token (absent from the index) qualifies nobody, and supply follows', () => {
    const snapshot = reduceSnapshot(membership(), holdings([token('1', a(1))]), NOW);
    assert.deepEqual(Object.keys(byWallet(snapshot)), [a(1)]);
    const afterBurn = reduceSnapshot(membership(), holdings([]), NOW);
    assert.equal(afterBurn.entries.length, 0);
    assert.deepEqual(afterBurn.reconciliation, {
      supply: 0,
      members: 0,
      non_members: 0,
      platform: 0,
      marketplace_escrow: 0,
      balanced: true,
    });
  });

  test('a rental counts up to and including its expiry second, and not one second later', () => {
    const rented = (expires: number) =>
      holdings([token('1', a(1), { renter: a(2), rentalExpires: expires })]);
    assert.ok(byWallet(reduceSnapshot(membership(), rented(NOW_S + 1), NOW))[a(2)]);
    assert.ok(byWallet(reduceSnapshot(membership(), rented(NOW_S), NOW))[a(2)], 'at the boundary');
    assert.equal(byWallet(reduceSnapshot(membership(), rented(NOW_S - 1), NOW))[a(2)], undefined);
    // The owner still counts while the token is rented out: both owner and user.
    assert.ok(byWallet(reduceSnapshot(membership(), rented(NOW_S), NOW))[a(1)]);
  });

  test('a delegation from a wallet that no longer owns the token counts for nobody', () => {
    const snapshot = reduceSnapshot(
      membership(),
      holdings(
        [token('1', a(2), { previousOwner: a(1) })],
        [
          delegation(a(1), a(10), 'token', { tokenId: '1' }),
          delegation(a(1), a(11), 'all'),
          delegation(a(1), a(12), 'contract'),
          delegation(a(2), a(13), 'token', { tokenId: '1' }),
          delegation(a(2), a(14), 'all'),
          delegation(a(2), a(15), 'contract'),
        ],
      ),
      NOW,
    );
    assert.deepEqual(Object.keys(byWallet(snapshot)), [a(2), a(13), a(14), a(15)]);
  });

  test('a token in marketplace escrow counts for the seller and in the escrow bucket, never as an entry', () => {
    const snapshot = reduceSnapshot(
      membership({ members: [{ id: 'm1', memberSince: '2024-01-01', custodial: [a(1)], connected: [] }] }),
      holdings(
        [
          token('1', MARKET, { previousOwner: a(1) }),
          token('2', MARKET, { previousOwner: a(3) }),
          token('3', MARKET),
          token('4', a(4)),
        ],
        // The seller's own delegations follow the listed token.
        [delegation(a(3), a(5), 'token', { tokenId: '2' })],
      ),
      NOW,
    );
    const entries = byWallet(snapshot);
    assert.equal(entries[a(1)].giraffe, true);
    assert.equal(entries[a(1)].type, 'member');
    assert.equal(entries[a(3)].type, 'non_member');
    assert.ok(entries[a(5)]);
    assert.equal(entries[MARKET], undefined);
    assert.equal(snapshot.counts.giraffes_in_marketplace_escrow, 3);
    assert.deepEqual(snapshot.reconciliation, {
      supply: 4,
      members: 0,
      non_members: 1,
      platform: 0,
      marketplace_escrow: 3,
      balanced: true,
    });
  });

  test('addresses are matched and published lower-case whatever case they arrive in', () => {
    const mixed = '0x52908400098527886E0F7030069857D2E4169EE7';
    const snapshot = reduceSnapshot(
      membership({
        members: [{ id: 'm1', memberSince: '2024-01-01', custodial: [mixed], connected: [] }],
        marketplaces: [MARKET.toUpperCase().replace('0X', '0x')],
      }),
      holdings([token('1', mixed.toLowerCase()), token('2', MARKET, { previousOwner: a(9).toUpperCase() })]),
      NOW,
    );
    assert.deepEqual(
      snapshot.entries.map((e) => [e.wallet, e.type, e.giraffe]),
      [
        [a(9), 'non_member', true],
        [mixed.toLowerCase(), 'member', true],
      ],
    );
    assert.equal(snapshot.reconciliation.members, 1);
    assert.equal(snapshot.reconciliation.marketplace_escrow, 1);
  });

  test('holders are clustered: no address is in two entries', () => {
    const snapshot = reduceSnapshot(
      membership({
        members: [
          { id: 'm1', memberSince: '2024-01-01', custodial: [a(1)], connected: [a(2)] },
          // The same address given to a second member stays with the first (the database refuses it anyway).
          { id: 'm2', memberSince: '2024-02-01', custodial: [a(3)], connected: [a(2)] },
        ],
        platformWallets: [a(5), a(6)],
      }),
      holdings(
        // The member's connected wallet owns, rents and is delegated: still one member entry.
        [
          token('1', a(2), { renter: a(2), rentalExpires: NOW_S + 10 }),
          token('2', a(7), { renter: a(6), rentalExpires: NOW_S + 10 }),
        ],
        [delegation(a(7), a(2), 'all'), delegation(a(7), a(8), 'all'), delegation(a(7), a(8), 'contract')],
      ),
      NOW,
    );
    const seen = new Set<string>();
    for (const entry of snapshot.entries) {
      for (const wallet of entry.wallets) {
        assert.ok(!seen.has(wallet), `${wallet} appears twice`);
        seen.add(wallet);
      }
      assert.ok(entry.wallets.includes(entry.wallet));
    }
    const entries = byWallet(snapshot);
    assert.deepEqual(entries[a(1)].wallets, [a(1), a(2)]);
    assert.deepEqual(entries[a(1)].kinds, ['custodial', 'connected']);
    assert.deepEqual(entries[a(3)].wallets, [a(3)]);
    assert.equal(entries[a(3)].giraffe, false);
    assert.equal(entries[a(5)].type, 'platform');
    assert.deepEqual(entries[a(5)].wallets, [a(5), a(6)]);
    assert.equal(entries[a(5)].giraffe, true, 'the platform rents a token');
    assert.deepEqual(
      snapshot.entries.map((e) => e.wallet),
      [a(1), a(3), a(5), a(7), a(8)],
      'sorted by wallet',
    );
    assert.deepEqual(snapshot.counts, {
      entries: 5,
      wallets: 7,
      members: 2,
      non_members: 2,
      platform: 1,
      with_giraffe: 4,
      without_giraffe: 1,
      giraffes_in_marketplace_escrow: 0,
      excluded_without_wallet: 0,
    });
  });

  test('members without a custodial wallet are left out, with their wallets, and counted', () => {
    const snapshot = reduceSnapshot(
      membership({
        members: [
          { id: 'm1', memberSince: '2024-01-01', custodial: [], connected: [a(2)] },
          { id: 'm2', memberSince: '2024-01-01', custodial: [], connected: [] },
        ],
      }),
      holdings([token('1', a(2))], [delegation(a(2), a(3), 'all')]),
      NOW,
    );
    assert.deepEqual(Object.keys(byWallet(snapshot)), [a(3)], 'only the delegate of the excluded member');
    assert.equal(snapshot.counts.excluded_without_wallet, 2);
    assert.equal(snapshot.reconciliation.members, 1, 'its token still counts as held by members');
    assert.equal(snapshot.reconciliation.balanced, true);
  });

  test('other collections never put a wallet in the feed', () => {
    const snapshot = reduceSnapshot(
      membership(),
      holdings(
        [token('1', a(1))],
        [
          delegation(a(1), a(2), 'contract', { contract: OTHER }),
          delegation(a(1), a(3), 'token', { contract: OTHER, tokenId: '1' }),
          delegation(a(1), a(4), 'contract', { contract: COLLECTION.toUpperCase().replace('0X', '0x') }),
        ],
      ),
      NOW,
    );
    assert.deepEqual(Object.keys(byWallet(snapshot)), [a(1), a(4)]);
  });

  test('a supply the buckets do not add up to is reported unbalanced', () => {
    const snapshot = reduceSnapshot(membership(), holdings([token('1', a(1))], [], 2), NOW);
    assert.equal(snapshot.reconciliation.balanced, false);
    assert.equal(snapshot.reconciliation.non_members, 1);
  });

  test('a member entry carries member_since; the platform and non-members do not', () => {
    const snapshot = reduceSnapshot(
      membership({
        members: [{ id: 'm1', memberSince: '2023-05-06', custodial: [a(1)], connected: [] }],
        platformWallets: [a(2)],
      }),
      holdings([token('1', a(3))]),
      NOW,
    );
    assert.deepEqual(
      snapshot.entries.map((e) => [e.type, e.memberSince]),
      [
        ['member', '2023-05-06'],
        ['platform', null],
        ['non_member', null],
      ],
    );
  });
});
