import { Kysely, PostgresDialect, type Transaction } from 'kysely';
import pg from 'pg';
import { preparingPool, runOnPool } from './prepared.ts';
import type { Database } from './schema.ts';

// int8 (counts, balances) and numeric (money) arrive as strings by default; every such value here fits a double.
pg.types.setTypeParser(20, (value) => Number(value));
pg.types.setTypeParser(1700, (value) => Number(value));

/**
 * The database, held by the edges of a use case (routes, jobs): they open transactions with
 * `inTransaction`. Not a transaction: `isTransaction` is false, so a `Trx` is not a `Db`.
 */
export type Db = Kysely<Database> & { readonly isTransaction: false };
/** An open transaction: what a function that writes, locks rows or must be atomic takes. */
export type Trx = Transaction<Database>;
/** Either the database or an open transaction: what a function that only reads takes. */
export type Executor = Kysely<Database>;

export interface DatabaseHandle {
  db: Db;
  pool: pg.Pool;
  url: string;
  close(): Promise<void>;
}

export function openDatabase(
  url: string,
  options: { max?: number; applicationName?: string; connectTimeoutMs?: number } = {},
): DatabaseHandle {
  const pool = new pg.Pool({
    connectionString: url,
    max: options.max ?? 20,
    application_name: options.applicationName ?? 'agency-platform',
    // Waiting for a connection ends in an error (a 503), never in a request that hangs.
    connectionTimeoutMillis: options.connectTimeoutMs ?? 5000,
  });
  // A dropped idle connection must not crash the process; the pool replaces it.
  pool.on('error', () => {});
  // Nor one dropped while checked out (pg-pool listens only on idle ones): the query in flight fails instead.
  pool.on('connect', (client) => client.on('error', () => {}));
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: preparingPool(pool) }) }) as Db;
  runOnPool(db, pool);
  return {
    db,
    pool,
    url,
    close: () => db.destroy(),
  };
}
