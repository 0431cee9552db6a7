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

/**
 * Writes ASCII text into one buffer sized from an upper bound, so a 100,000-holder snapshot does not
 * pass through arrays of strings and a joined copy (which is what drives a build's memory).
 */
class AsciiWriter {
  private readonly buffer: Buffer;
  private offset = 0;

  constructor(upperBound: number) {
    this.buffer = Buffer.allocUnsafe(upperBound);
  }

  private pending = '';

  /** Buffers small pieces into one string and copies them in chunks: one native call per ~64 KB. */
  write(text: string): void {
    this.pending += text;
    if (this.pending.length >= 65_536) this.flush();
  }

  get length(): number {
    return this.offset + this.pending.length;
  }

  result(): Buffer {
    this.flush();
    return this.buffer.subarray(0, this.offset);
  }

  private flush(): void {
    const written = this.buffer.write(this.pending, this.offset, 'latin1');
    if (written !== this.pending.length) throw new Error('snapshot larger than its computed bound');
    this.offset += written;
    this.pending = '';
  }
}

// Bounds per entry and per wallet: the fixed text, the longest type and a member_since date.
const JSON_ENTRY_BOUND = 160;
const JSON_WALLET_BOUND = 45;
const CSV_ROW_BOUND = 130;

/** One entry's JSON, written by hand: every value is an address, an enum, a boolean or a date. */
function entryJson(holder: Holder): string {
  const since = holder.type === 'member' ? `,"member_since":"${holder.memberSince}"` : '';
  return `{"wallet":"${holder.wallet}","wallets":["${holder.wallets.join('","')}"],"type":"${holder.type}","giraffe":${holder.giraffe}${since}}`;
}

/**
 * The JSON body, and a tag of its content without `generated_at`: two builds of the same data (in
 * two processes, or 30 s apart) answer an If-None-Match with 304.
 */
export function snapshotJson(reduced: ReducedSnapshot, meta: SnapshotMeta): { body: Buffer; tag: string } {
  const { balanced: _balanced, ...totals } = reduced.reconciliation;
  const head = JSON.stringify({
    key: SNAPSHOT_KEY,
    disclosure: DISCLOSURE,
    collection: { giraffe_tower: meta.collection, supply: reduced.reconciliation.supply },
    freshness: {
      membership: MEMBERSHIP_FRESHNESS,
      giraffe_index_updated_at: meta.indexUpdatedAt.toISOString(),
    },
    counts: reduced.counts,
    reconciliation: { equation: RECONCILIATION_EQUATION, ...totals },
  });
  const generated = `{"schema":${JSON.stringify(SNAPSHOT_SCHEMA)},"generated_at":"${meta.generatedAt.toISOString()}",`;
  const writer = new AsciiWriter(
    Buffer.byteLength(generated) +
      Buffer.byteLength(head) +
      32 +
      reduced.entries.length * JSON_ENTRY_BOUND +
      reduced.counts.wallets * JSON_WALLET_BOUND,
  );
  writer.write(generated);
  const tagFrom = writer.length;
  writer.write(`${head.slice(1, -1)},"entries":[`);
  reduced.entries.forEach((holder, i) => {
    writer.write(i === 0 ? entryJson(holder) : `,${entryJson(holder)}`);
  });
  writer.write(']}');
  const body = writer.result();
  return { body, tag: createHash('sha1').update(body.subarray(tagFrom)).digest('base64url') };
}

export const CSV_COLUMNS = ['wallet', 'cluster', 'kind', 'type', 'giraffe', 'member_since'] as const;

/** One row per wallet (RFC 4180, CRLF); rows of one holder share `cluster`, the holder's key address. */
export function snapshotCsv(reduced: ReducedSnapshot): { body: Buffer; tag: string } {
  const writer = new AsciiWriter(CSV_ROW_BOUND * (reduced.counts.wallets + 1));
  writer.write(`${CSV_COLUMNS.join(',')}\r\n`);
  for (const holder of reduced.entries) {
    const tail = `,${holder.type},${holder.giraffe},${holder.memberSince ?? ''}\r\n`;
    for (let i = 0; i < holder.wallets.length; i++) {
      writer.write(`${holder.wallets[i]},${holder.wallet},${holder.kinds[i]}${tail}`);
    }
  }
  const body = writer.result();
  return { body, tag: createHash('sha1').update(body).digest('base64url') };
}
