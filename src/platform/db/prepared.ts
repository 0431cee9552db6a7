import { createHash } from 'node:crypto';
import type { CompiledQuery, QueryResult } from 'kysely';
import type pg from 'pg';
import type { Executor } from './pool.ts';

/**
 * Named prepared statements through Kysely, in transactions too: PostgreSQL parses and plans a
 * named statement once per connection, which for a statement of several CTEs costs more than
 * running it. A query opts in with `runPrepared`; the pool handed to Kysely then sends that text by
 * name. Only for queries whose text does not depend on the values (no IN lists of varying length):
 * every distinct text becomes one more statement on every connection.
 */

const statementNames = new Map<string, string>();
const PREPARING = Symbol('preparing');

export function runPrepared<R>(db: Executor, query: CompiledQuery<R>): Promise<QueryResult<R>> {
  if (!statementNames.has(query.sql)) {
    statementNames.set(query.sql, `k_${createHash('sha1').update(query.sql).digest('hex').slice(0, 24)}`);
  }
  return db.executeQuery(query);
}

type Query = (text: unknown, values?: unknown, ...rest: unknown[]) => unknown;

/** The pool as Kysely uses it: a text registered by `runPrepared` runs as a named statement. */
export function preparingPool(pool: pg.Pool) {
  return {
    connect: async () => preparing(await pool.connect()),
    end: () => pool.end(),
  };
}

function preparing(client: pg.PoolClient): pg.PoolClient {
  if (!(PREPARING in client)) {
    const query = client.query.bind(client) as Query;
    const named: Query = (text, values, ...rest) => {
      const name = typeof text === 'string' ? statementNames.get(text) : undefined;
      return name ? query({ name, text, values }) : query(text, values, ...rest);
    };
    client.query = named as typeof client.query;
    Object.defineProperty(client, PREPARING, { value: true });
  }
  return client;
}
