import { promisify } from 'node:util';
import { gzip as gzipCallback } from 'node:zlib';
import type { Logger } from 'pino';
import type { Db } from '../../platform/db/pool.ts';
import { inTransaction } from '../../platform/db/transaction.ts';
import { snapshotCsv, snapshotJson } from './format.ts';
import { readHoldings, readIndexState } from './index-store.ts';
import { readMembership } from './membership-store.ts';
import { type ReducedSnapshot, reduceSnapshot } from './reducer.ts';

const gzip = promisify(gzipCallback);

export type SnapshotFormat = 'json' | 'csv';

interface Representation {
  body: Buffer;
  etag: string;
  gzipped: Promise<Buffer> | null;
}

/** A published snapshot: both formats serialized once, gzipped on first demand. */
export interface BuiltSnapshot {
  generatedAt: Date;
  indexUpdatedAt: Date;
  indexFailed: boolean;
  counts: ReducedSnapshot['counts'];
  formats: Record<SnapshotFormat, Representation>;
}

export type BuildResult =
  | { status: 'built'; snapshot: BuiltSnapshot }
  | { status: 'not_ready' }
  | { status: 'unbalanced'; reconciliation: ReducedSnapshot['reconciliation'] };

/**
 * Reads membership, the holding index and its state in one consistent view, reduces them and
 * serializes both formats. A build whose buckets do not add up to the supply is refused.
 */
export async function buildSnapshot(db: Db, now: Date): Promise<BuildResult> {
  const reduced = await readAndReduce(db, now);
  if (!reduced) return { status: 'not_ready' };
  const { snapshot, collection, indexUpdatedAt, indexFailed } = reduced;
  if (!snapshot.reconciliation.balanced)
    return { status: 'unbalanced', reconciliation: snapshot.reconciliation };
  const json = snapshotJson(snapshot, { collection, generatedAt: now, indexUpdatedAt });
  const csv = snapshotCsv(snapshot);
  return {
    status: 'built',
    snapshot: {
      generatedAt: now,
      indexUpdatedAt,
      indexFailed,
      counts: snapshot.counts,
      formats: {
        json: { body: json.body, etag: `W/"j-${json.tag}"`, gzipped: null },
        csv: { body: csv.body, etag: `W/"c-${csv.tag}"`, gzipped: null },
      },
    },
  };
}

/** The database rows are let go once reduced, before the snapshot is serialized. */
async function readAndReduce(db: Db, now: Date) {
  const view = await inTransaction(
    db,
    async (trx) => {
      const state = await readIndexState(trx);
      if (!state?.refreshed_at) return null;
      const membership = await readMembership(trx);
      const holdings = await readHoldings(trx);
      return { state, membership, holdings };
    },
    { isolation: 'repeatable read', readOnly: true },
  );
  if (!view) return null;
  const { state, membership, holdings } = view;
  const snapshot = reduceSnapshot(
    membership,
    {
      collection: state.collection,
      supply: state.supply,
      tokens: holdings.tokens.map((t) => ({
        tokenId: t.token_id,
        owner: t.owner,
        previousOwner: t.previous_owner,
        renter: t.renter,
        rentalExpires: t.rental_expires,
      })),
      delegations: holdings.delegations.map((d) => ({
        delegator: d.delegator,
        delegate: d.delegate,
        scope: d.scope,
        contract: d.contract,
        tokenId: d.token_id,
        rights: d.rights,
      })),
    },
    now,
  );
  return {
    snapshot,
    collection: state.collection,
    indexUpdatedAt: state.refreshed_at!,
    indexFailed: state.failed_at !== null,
  };
}

export function gzipped(snapshot: BuiltSnapshot, format: SnapshotFormat): Promise<Buffer> {
  const representation = snapshot.formats[format];
  representation.gzipped ??= gzip(representation.body);
  return representation.gzipped;
}

export interface ServedSnapshot {
  snapshot: BuiltSnapshot;
  stale: boolean;
  ageSeconds: number;
}

export interface SnapshotCacheOptions {
  cacheMs: number;
  /** The holding index's refresh interval: older than twice this, the snapshot is stale. */
  refreshMs: number;
  clock?: () => number;
  build?: (now: Date) => Promise<BuildResult>;
}

/**
 * The per-process snapshot cache of the feed role. A snapshot older than `cacheMs` keeps being served
 * while one rebuild runs in the background (with `cacheMs` 0, every request waits for a fresh build).
 * A refused or failed build leaves the last good snapshot in place, marked stale.
 */
export class SnapshotCache {
  private good: BuiltSnapshot | null = null;
  private lastBuildFailed = false;
  private attemptedAt = Number.NEGATIVE_INFINITY;
  private inflight: Promise<void> | null = null;
  private readonly clock: () => number;
  private readonly build: (now: Date) => Promise<BuildResult>;

  constructor(
    db: Db,
    private readonly options: SnapshotCacheOptions,
    private readonly log: Logger,
  ) {
    this.clock = options.clock ?? Date.now;
    this.build = options.build ?? ((now) => buildSnapshot(db, now));
  }

  /** The snapshot to serve, or null before the first successful build. */
  async current(): Promise<ServedSnapshot | null> {
    // Until a first snapshot exists every request may try (one build at a time): no 30 s wait for it.
    const due = !this.good || this.clock() - this.attemptedAt >= this.options.cacheMs;
    if (due) {
      const rebuilding = this.rebuild();
      if (!this.good || this.options.cacheMs === 0) await rebuilding;
    }
    return this.good ? this.serve(this.good) : null;
  }

  private serve(snapshot: BuiltSnapshot): ServedSnapshot {
    const now = this.clock();
    const indexAgeMs = now - snapshot.indexUpdatedAt.getTime();
    return {
      snapshot,
      stale: this.lastBuildFailed || snapshot.indexFailed || indexAgeMs > 2 * this.options.refreshMs,
      ageSeconds: Math.max(0, Math.floor((now - snapshot.generatedAt.getTime()) / 1000)),
    };
  }

  private rebuild(): Promise<void> {
    this.inflight ??= (async () => {
      this.attemptedAt = this.clock();
      try {
        const result = await this.build(new Date(this.attemptedAt));
        if (result.status === 'built') {
          this.good = result.snapshot;
          this.lastBuildFailed = false;
        } else if (result.status === 'unbalanced') {
          this.lastBuildFailed = true;
          this.log.error(
            { reconciliation: result.reconciliation },
            'wallet snapshot refused: token buckets do not add up to the supply; serving the last good one',
          );
        }
      } catch (error) {
        this.lastBuildFailed = true;
        this.log.error({ err: error }, 'wallet snapshot build failed; serving the last good one');
      } finally {
        this.inflight = null;
      }
    })();
    return this.inflight;
  }
}
