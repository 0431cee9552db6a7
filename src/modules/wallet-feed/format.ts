import { createHash } from 'node:crypto';
import type { Holder, ReducedSnapshot } from './reducer.ts';

/** The value of `schema`: wallet-snapshot format version 2 (SPEC.md section 9). */
export const SNAPSHOT_SCHEMA = 'wallet-snapshot/2';

export const SNAPSHOT_KEY =
  "Each entry is one holder. `wallet` is its key address: a member's first custodial wallet, the platform's first wallet, or a non-member's own address. `wallets` lists every address of the holder; no address is in two entries. Addresses are lower-case hex, and entries are sorted by `wallet`.";

export const DISCLOSURE = {
  discloses: [
    'wallet addresses, grouped per holder',
    'holder type: member, non_member or platform',
    'whether the holder has at least one qualifying Giraffe Tower token (owned, rented, delegated or listed for sale)',
    'membership start date (YYYY-MM-DD) of members',
    'token totals per holder type, to reconcile with the collection supply',
  ],
  withholds: [
    'balances and token ids per holder',
    'roles',
    'traits',
    'names',
    'contact data',
    'internal ids',
    'members without a custodial wallet',
  ],
};

export const RECONCILIATION_EQUATION = 'supply = members + non_members + platform + marketplace_escrow';

/** Membership is read from the platform's records each time a snapshot is generated. */
export const MEMBERSHIP_FRESHNESS = 'live';

export interface SnapshotMeta {
  collection: string;
  generatedAt: Date;
  indexUpdatedAt: Date;
}

function publishedEntry(holder: Holder) {
  return holder.type === 'member'
    ? {
        wallet: holder.wallet,
        wallets: holder.wallets,
        type: holder.type,
        giraffe: holder.giraffe,
        member_since: holder.memberSince,
      }
    : { wallet: holder.wallet, wallets: holder.wallets, type: holder.type, giraffe: holder.giraffe };
}

/**
 * The JSON body, and a tag of its content without `generated_at`: two builds of the same data (in
 * two processes, or 30 s apart) answer an If-None-Match with 304.
 */
export function snapshotJson(reduced: ReducedSnapshot, meta: SnapshotMeta): { body: string; tag: string } {
  const { balanced: _balanced, ...totals } = reduced.reconciliation;
  const rest = JSON.stringify({
    key: SNAPSHOT_KEY,
    disclosure: DISCLOSURE,
    collection: { giraffe_tower: meta.collection, supply: reduced.reconciliation.supply },
    freshness: {
      membership: MEMBERSHIP_FRESHNESS,
      giraffe_index_updated_at: meta.indexUpdatedAt.toISOString(),
    },
    counts: reduced.counts,
    reconciliation: { equation: RECONCILIATION_EQUATION, ...totals },
    entries: reduced.entries.map(publishedEntry),
  });
  const body = `{"schema":${JSON.stringify(SNAPSHOT_SCHEMA)},"generated_at":"${meta.generatedAt.toISOString()}",${rest.slice(1)}`;
  return { body, tag: digest(rest) };
}

export const CSV_COLUMNS = ['wallet', 'cluster', 'kind', 'type', 'giraffe', 'member_since'] as const;

/** One row per wallet (RFC 4180, CRLF); rows of one holder share `cluster`, the holder's key address. */
export function snapshotCsv(reduced: ReducedSnapshot): { body: string; tag: string } {
  const lines = [CSV_COLUMNS.join(',')];
  for (const holder of reduced.entries) {
    const tail = `,${holder.type},${holder.giraffe},${holder.memberSince ?? ''}`;
    for (let i = 0; i < holder.wallets.length; i++) {
      lines.push(`${holder.wallets[i]},${holder.wallet},${holder.kinds[i]}${tail}`);
    }
  }
  const body = `${lines.join('\r\n')}\r\n`;
  return { body, tag: digest(body) };
}

function digest(text: string): string {
  return createHash('sha256').update(text).digest('base64url').slice(0, 27);
}
