import type { Platform } from '../../platform/context.ts';
import { inTransaction } from '../../platform/db/transaction.ts';
import type { HoldingsSource, SyncResult } from '../../providers/chain/types.ts';
import { isDemoSource } from '../../providers/index.ts';
import { seedFeedDemo } from './demo.ts';
import {
  databaseCheckpoints,
  type IndexState,
  markAttempt,
  markFailure,
  readIndexState,
  replaceHoldings,
  resetChainLog,
} from './index-store.ts';

/** A failed refresh is retried sooner than the regular interval. */
const RETRY_AFTER_FAILURE_MS = 5 * 60_000;

export type RefreshOutcome =
  | { status: 'refreshed'; tokens: number; supply: number; block: number | null; reorg: SyncResult['reorg'] }
  | { status: 'failed'; error: string }
  | { status: 'busy' }
  | { status: 'no_source' };

/**
 * Brings the holding index up to date from `source` and replaces it in one transaction, unless its
 * tokens do not add up to the collection's supply: then the refresh fails and the previous index stays.
 * One refresh at a time across every worker (an advisory lock).
 */
export async function refreshHoldingsIndex(
  platform: Platform,
  source: HoldingsSource | null = platform.providers.chain,
  clock: () => Date = () => new Date(),
): Promise<RefreshOutcome> {
  if (!source) return { status: 'no_source' };
  const { db, database, log } = platform;
  const lock = await database.pool.connect();
  try {
    const { rows } = await lock.query<{ locked: boolean }>(
      `SELECT pg_try_advisory_lock(hashtext('feed_index_refresh')) AS locked`,
    );
    if (!rows[0].locked) return { status: 'busy' };
    try {
      const state = await readIndexState(db);
      if (isDemoSource(source)) {
        log.warn(
          'wallet feed: neither CHAIN_RPC_URL nor CHAIN_HOLDINGS_FILE is set; serving the demo holdings',
        );
        // The first start shows a real feed: demo members to go with the demo holdings.
        if (!state) await seedFeedDemo(db);
      }
      if (
        state &&
        (state.source !== source.kind || (source.collection && state.collection !== source.collection))
      ) {
        await resetChainLog(db);
      }
      await markAttempt(db, source.kind, source.collection ?? state?.collection ?? '', clock());
      try {
        const result = await source.sync(databaseCheckpoints(db));
        const { holdings } = result;
        if (holdings.tokens.length !== holdings.supply) {
          throw new Error(
            `the index holds ${holdings.tokens.length} tokens but the collection's supply is ${holdings.supply}`,
          );
        }
        await inTransaction(db, (trx) => replaceHoldings(trx, source.kind, holdings, result.block, clock()));
        if (result.reorg)
          log.warn({ reorg: result.reorg }, 'wallet index: reorg detected, re-read from the fork point');
        log.info(
          { source: source.kind, tokens: holdings.tokens.length, block: result.block },
          'wallet index refreshed',
        );
        return {
          status: 'refreshed',
          tokens: holdings.tokens.length,
          supply: holdings.supply,
          block: result.block,
          reorg: result.reorg,
        };
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        await markFailure(db, clock(), message);
        log.error(
          { err: error, source: source.kind },
          'wallet index refresh failed; the previous index stays',
        );
        return { status: 'failed', error: message };
      }
    } finally {
      await lock.query(`SELECT pg_advisory_unlock(hashtext('feed_index_refresh'))`);
    }
  } finally {
    lock.release();
  }
}

/** Whether the interval since the last attempt has passed (sooner after a failure). */
export function refreshDue(state: IndexState | undefined, now: Date, intervalMs: number): boolean {
  if (!state?.attempted_at) return true;
  const wait = state.failed_at ? Math.min(intervalMs, RETRY_AFTER_FAILURE_MS) : intervalMs;
  return now.getTime() - state.attempted_at.getTime() >= wait;
}

export async function refreshIfDue(platform: Platform): Promise<RefreshOutcome | null> {
  const state = await readIndexState(platform.db);
  if (!refreshDue(state, new Date(), platform.config.walletIndexRefreshMs)) return null;
  return refreshHoldingsIndex(platform);
}
