import { Kysely, PostgresDialect, type Transaction } from 'kysely';
import pg from 'pg';
import { preparingPool } from './prepared.ts';
import type { Database } from './schema.ts';

// int8 (counts, balances) and numeric (money) arrive as strings by default; every such value here fits a double.
pg.types.setTypeParser(20, (value) => Number(value));
pg.types.setTypeParser(1700, (value) => Number(value));

export type Db = Kysely<Database>;
export type Trx = Transaction<Database>;
/** Either the database or an open transaction: store functions accept both. */
export type Executor = Kysely<Database>;

export interface DatabaseHandle {
  db: Db;
  pool: pg.Pool;
  url: string;
  close(): Promise<void>;
}

export function openDatabase(
  url: string,
  options: { max?: number; applicationName?: string } = {},
): DatabaseHandle {
  const pool = new pg.Pool({
    connectionString: url,
    max: options.max ?? 20,
    application_name: options.applicationName ?? 'agency-platform',
  });
  // A dropped idle connection must not crash the process; the pool replaces it.
  pool.on('error', () => {});
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: preparingPool(pool) }) });
  return {
    db,
    pool,
    url,
    close: () => db.destroy(),
  };
}
