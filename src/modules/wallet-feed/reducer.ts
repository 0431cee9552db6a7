import type { Delegation, TokenHolding } from '../../providers/chain/types.ts';
import { ZERO_ADDRESS } from '../../providers/chain/types.ts';

/**
 * The pure heart of the feed: membership + holding index + a clock → the snapshot's entries, counts
 * and reconciliation. No I/O, so every rule here is unit-tested (reducer.test.ts).
 */

export interface MembershipInput {
  members: Array<{ id: string; memberSince: string; custodial: string[]; connected: string[] }>;
  platformWallets: string[];
  marketplaces: string[];
}

export interface HoldingsInput {
  collection: string;
  supply: number;
  tokens: TokenHolding[];
  delegations: Delegation[];
}

export type HolderType = 'member' | 'non_member' | 'platform';
export type WalletKind = 'custodial' | 'connected' | 'holder';

export interface Holder {
  /** The key address: a member's first custodial wallet, the platform's first wallet, a non-member's own. */
  wallet: string;
  /** Every address of the holder, sorted; `kinds` runs in parallel. */
  wallets: string[];
  kinds: WalletKind[];
  type: HolderType;
  giraffe: boolean;
  memberSince: string | null;
}

export interface SnapshotCounts {
  entries: number;
  wallets: number;
  members: number;
  non_members: number;
  platform: number;
  with_giraffe: number;
  without_giraffe: number;
  giraffes_in_marketplace_escrow: number;
  excluded_without_wallet: number;
}

/** Tokens per bucket of their owner: they add up to the supply, or the build is refused. */
export interface Reconciliation {
  supply: number;
  members: number;
  non_members: number;
  platform: number;
  marketplace_escrow: number;
  balanced: boolean;
}

export interface ReducedSnapshot {
  entries: Holder[];
  counts: SnapshotCounts;
  reconciliation: Reconciliation;
}

const UPPER = /[A-FX]/;
/** Addresses usually arrive lower-case already: skip the copy then. */
const lower = (address: string) => (UPPER.test(address) ? address.toLowerCase() : address);

export function reduceSnapshot(
  membership: MembershipInput,
  index: HoldingsInput,
  now: Date,
): ReducedSnapshot {
  const nowSeconds = Math.floor(now.getTime() / 1000);
  const collection = lower(index.collection);
  const marketplaces = new Set(membership.marketplaces.map(lower));

  // Cluster the known addresses into holders; an address joins the first holder that claims it.
  const holderOf = new Map<string, Holder>();
  const unlisted = new Set<string>();
  const listed: Holder[] = [];
  let excludedWithoutWallet = 0;
  const claim = (holder: Holder, address: string, kind: WalletKind): boolean => {
    if (holderOf.has(address) || unlisted.has(address) || marketplaces.has(address)) return false;
    holderOf.set(address, holder);
    holder.wallets.push(address);
    holder.kinds.push(kind);
    return true;
  };

  // Sorted by id so that, should two members claim one address, the same one always wins.
  const members = sortedById(membership.members);
  for (const member of members) {
    const holder: Holder = {
      wallet: '',
      wallets: [],
      kinds: [],
      type: 'member',
      giraffe: false,
      memberSince: member.memberSince,
    };
    for (const custodial of member.custodial) {
      const address = lower(custodial);
      if (claim(holder, address, 'custodial') && !holder.wallet) holder.wallet = address;
    }
    if (!holder.wallet) {
      // Not listed until it has a custodial wallet; its other addresses stay out of the feed too.
      excludedWithoutWallet += 1;
      for (const connected of member.connected) {
        const address = lower(connected);
        if (!holderOf.has(address) && !marketplaces.has(address)) unlisted.add(address);
      }
      continue;
    }
    for (const connected of member.connected) claim(holder, lower(connected), 'connected');
    listed.push(holder);
  }

  const platform: Holder = {
    wallet: '',
    wallets: [],
    kinds: [],
    type: 'platform',
    giraffe: false,
    memberSince: null,
  };
  for (const wallet of membership.platformWallets) {
    const address = lower(wallet);
    if (claim(platform, address, 'custodial') && !platform.wallet) platform.wallet = address;
  }
  if (platform.wallet) listed.push(platform);

  // Who each token counts for, and which bucket its owner's token falls in.
  const buckets = { members: 0, non_members: 0, platform: 0, marketplace_escrow: 0 };
  const qualifying = new Set<string>();
  const credit = (address: string | null) => {
    if (address && address !== ZERO_ADDRESS && !marketplaces.has(address)) qualifying.add(address);
  };
  const beneficialOwners = new Set<string>();
  const tokenBeneficiary = new Map<string, string>();
  for (const token of index.tokens) {
    const owner = lower(token.owner);
    let beneficiary: string | null = owner;
    if (marketplaces.has(owner)) {
      buckets.marketplace_escrow += 1;
      // Listed for sale: the token counts for the seller, who sent it into escrow.
      const seller = token.previousOwner ? lower(token.previousOwner) : null;
      beneficiary = seller && seller !== ZERO_ADDRESS && !marketplaces.has(seller) ? seller : null;
    } else {
      const holder = holderOf.get(owner);
      if (holder) buckets[holder.type === 'member' ? 'members' : 'platform'] += 1;
      else if (unlisted.has(owner)) buckets.members += 1;
      else buckets.non_members += 1;
    }
    if (beneficiary) {
      credit(beneficiary);
      beneficialOwners.add(beneficiary);
      tokenBeneficiary.set(token.tokenId, beneficiary);
    }
    // ERC-4907: the user holds the rental up to and including its expiry second.
    if (token.renter && token.rentalExpires !== null && token.rentalExpires >= nowSeconds) {
      credit(lower(token.renter));
    }
  }
  for (const delegation of index.delegations) {
    if (delegation.scope !== 'all' && lower(delegation.contract ?? '') !== collection) continue;
    const from = lower(delegation.delegator);
    // Only a delegation from whoever the token counts for now: an old owner's delegation is void.
    const counts =
      delegation.scope === 'token'
        ? tokenBeneficiary.get(delegation.tokenId ?? '') === from
        : beneficialOwners.has(from);
    if (counts) credit(lower(delegation.delegate));
  }

  const entries = listed;
  for (const holder of listed) {
    for (const address of holder.wallets) {
      if (qualifying.has(address)) {
        holder.giraffe = true;
        break;
      }
    }
  }
  for (const address of qualifying) {
    if (holderOf.has(address) || unlisted.has(address)) continue;
    entries.push({
      wallet: address,
      wallets: [address],
      kinds: ['holder'],
      type: 'non_member',
      giraffe: true,
      memberSince: null,
    });
  }
  for (const holder of entries) if (holder.wallets.length > 1) sortWallets(holder);
  entries.sort((a, b) => (a.wallet < b.wallet ? -1 : a.wallet > b.wallet ? 1 : 0));

  const counts: SnapshotCounts = {
    entries: entries.length,
    wallets: 0,
    members: 0,
    non_members: 0,
    platform: 0,
    with_giraffe: 0,
    without_giraffe: 0,
    giraffes_in_marketplace_escrow: buckets.marketplace_escrow,
    excluded_without_wallet: excludedWithoutWallet,
  };
  for (const holder of entries) {
    counts.wallets += holder.wallets.length;
    counts[holder.type === 'member' ? 'members' : holder.type === 'platform' ? 'platform' : 'non_members'] +=
      1;
    counts[holder.giraffe ? 'with_giraffe' : 'without_giraffe'] += 1;
  }
  const total = buckets.members + buckets.non_members + buckets.platform + buckets.marketplace_escrow;
  return {
    entries,
    counts,
    reconciliation: { supply: index.supply, ...buckets, balanced: total === index.supply },
  };
}

/** Members in id order; the store already reads them so, which this checks in one pass. */
function sortedById<T extends { id: string }>(members: T[]): T[] {
  for (let i = 1; i < members.length; i++) {
    if (members[i - 1].id > members[i].id) {
      return [...members].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    }
  }
  return members;
}

/** Sorts a holder's wallets, keeping `kinds` in step (insertion sort: a holder has a handful). */
function sortWallets(holder: Holder): void {
  const { wallets, kinds } = holder;
  for (let i = 1; i < wallets.length; i++) {
    const wallet = wallets[i];
    const kind = kinds[i];
    let j = i - 1;
    for (; j >= 0 && wallets[j] > wallet; j--) {
      wallets[j + 1] = wallets[j];
      kinds[j + 1] = kinds[j];
    }
    wallets[j + 1] = wallet;
    kinds[j + 1] = kind;
  }
}
