import { sql } from 'kysely';
import type { Db, Executor, Trx } from '../../platform/db/pool.ts';
import { inTransaction } from '../../platform/db/transaction.ts';
import type { BlockRef, ChainLog, Holdings, IndexCheckpoints } from '../../providers/chain/types.ts';

export interface FeedTokensTable {
  token_id: string;
  owner: string;
  previous_owner: string | null;
  renter: string | null;
  rental_expires: number | null;
}

export interface FeedDelegationsTable {
  delegator: string;
  delegate: string;
  scope: 'all' | 'contract' | 'token';
  contract: string | null;
  token_id: string | null;
  rights: string;
}

export interface FeedChainLogsTable {
  block_number: number;
  log_index: number;
  block_hash: string;
  event: string;
  args: unknown;
}

export interface FeedIndexBlocksTable {
  block_number: number;
  block_hash: string;
}

export interface FeedIndexStateTable {
  id: boolean;
  source: string;
  collection: string;
  supply: number;
  last_block: number | null;
  refreshed_at: Date | null;
  attempted_at: Date | null;
  failed_at: Date | null;
  failure: string | null;
}

declare module '../../platform/db/schema.ts' {
  interface Database {
    feed_tokens: FeedTokensTable;
    feed_delegations: FeedDelegationsTable;
    feed_chain_logs: FeedChainLogsTable;
    feed_index_blocks: FeedIndexBlocksTable;
    feed_index_state: FeedIndexStateTable;
  }
}

export type IndexState = FeedIndexStateTable;

export function readIndexState(db: Executor): Promise<IndexState | undefined> {
  return db.selectFrom('feed_index_state').selectAll().executeTakeFirst();
}

/** Notes the start of a refresh, creating the row on the first one. */
export async function markAttempt(db: Db, source: string, collection: string, at: Date): Promise<void> {
  await sql`
    INSERT INTO feed_index_state (id, source, collection, attempted_at) VALUES (true, ${source}, ${collection}, ${at})
    ON CONFLICT (id) DO UPDATE SET attempted_at = excluded.attempted_at`.execute(db);
}

export async function markFailure(db: Db, at: Date, failure: string): Promise<void> {
  await db
    .updateTable('feed_index_state')
    .set({ failed_at: at, failure: failure.slice(0, 2000) })
    .execute();
}

/** Replaces the whole holding index and records the successful refresh, in the caller's transaction. */
export async function replaceHoldings(
  trx: Trx,
  source: string,
  holdings: Holdings,
  block: number | null,
  at: Date,
): Promise<void> {
  await sql`TRUNCATE feed_tokens, feed_delegations`.execute(trx);
  const t = holdings.tokens;
  if (t.length) {
    await sql`
      INSERT INTO feed_tokens (token_id, owner, previous_owner, renter, rental_expires)
      SELECT * FROM unnest(${t.map((x) => x.tokenId)}::text[], ${t.map((x) => x.owner)}::text[],
        ${t.map((x) => x.previousOwner)}::text[], ${t.map((x) => x.renter)}::text[],
        ${t.map((x) => x.rentalExpires)}::bigint[])`.execute(trx);
  }
  const d = holdings.delegations;
  if (d.length) {
    await sql`
      INSERT INTO feed_delegations (delegator, delegate, scope, contract, token_id, rights)
      SELECT * FROM unnest(${d.map((x) => x.delegator)}::text[], ${d.map((x) => x.delegate)}::text[],
        ${d.map((x) => x.scope)}::text[], ${d.map((x) => x.contract)}::text[],
        ${d.map((x) => x.tokenId)}::text[], ${d.map((x) => x.rights)}::text[])`.execute(trx);
  }
  await sql`
    INSERT INTO feed_index_state (id, source, collection, supply, last_block, refreshed_at, attempted_at)
    VALUES (true, ${source}, ${holdings.collection}, ${holdings.supply}, ${block}, ${at}, ${at})
    ON CONFLICT (id) DO UPDATE SET source = excluded.source, collection = excluded.collection,
      supply = excluded.supply, last_block = excluded.last_block, refreshed_at = excluded.refreshed_at,
      failed_at = NULL, failure = NULL`.execute(trx);
}

/** The holding index as the snapshot reads it. */
export async function readHoldings(db: Executor) {
  const [tokens, delegations] = await Promise.all([
    db.selectFrom('feed_tokens').selectAll().execute(),
    db.selectFrom('feed_delegations').selectAll().execute(),
  ]);
  return { tokens, delegations };
}

/** The rpc source's memory, in PostgreSQL: decoded logs and processed block hashes. */
export function databaseCheckpoints(db: Db): IndexCheckpoints {
  return {
    async recentBlocks(limit) {
      const rows = await db
        .selectFrom('feed_index_blocks')
        .selectAll()
        .orderBy('block_number', 'desc')
        .limit(limit)
        .execute();
      return rows.map((row) => ({ number: row.block_number, hash: row.block_hash }));
    },
    async lastBlock() {
      const row = await db
        .selectFrom('feed_index_blocks')
        .select('block_number')
        .orderBy('block_number', 'desc')
        .limit(1)
        .executeTakeFirst();
      return row?.block_number ?? null;
    },
    async rewind(block) {
      await inTransaction(db, async (trx) => {
        if (block === null) {
          await sql`TRUNCATE feed_chain_logs, feed_index_blocks`.execute(trx);
          return;
        }
        await trx.deleteFrom('feed_chain_logs').where('block_number', '>', block).execute();
        await trx.deleteFrom('feed_index_blocks').where('block_number', '>', block).execute();
      });
    },
    async append(logs: ChainLog[], upTo: BlockRef) {
      await inTransaction(db, async (trx) => {
        if (logs.length) {
          await sql`
            INSERT INTO feed_chain_logs (block_number, log_index, block_hash, event, args)
            SELECT * FROM unnest(${logs.map((l) => l.blockNumber)}::bigint[], ${logs.map((l) => l.logIndex)}::int[],
              ${logs.map((l) => l.blockHash)}::text[], ${logs.map((l) => l.event)}::text[],
              ${logs.map((l) => JSON.stringify(l.args))}::jsonb[])
            ON CONFLICT DO NOTHING`.execute(trx);
        }
        // Blocks with logs are checkpoints too: a reorg search can stop at the newest one still on the chain.
        const blocks = new Map<number, string>(logs.map((l) => [l.blockNumber, l.blockHash]));
        blocks.set(upTo.number, upTo.hash);
        await sql`
          INSERT INTO feed_index_blocks (block_number, block_hash)
          SELECT * FROM unnest(${[...blocks.keys()]}::bigint[], ${[...blocks.values()]}::text[])
          ON CONFLICT (block_number) DO UPDATE SET block_hash = excluded.block_hash`.execute(trx);
      });
    },
    async logs() {
      const rows = await db
        .selectFrom('feed_chain_logs')
        .selectAll()
        .orderBy('block_number')
        .orderBy('log_index')
        .execute();
      return rows.map(
        (row) =>
          ({
            blockNumber: row.block_number,
            logIndex: row.log_index,
            blockHash: row.block_hash,
            event: row.event,
            args: row.args,
          }) as ChainLog,
      );
    },
  };
}

/** Forgets everything the rpc source read, when the source or the collection changes. */
export async function resetChainLog(db: Db): Promise<void> {
  await sql`TRUNCATE feed_chain_logs, feed_index_blocks`.execute(db);
}
