import { createHash } from 'node:crypto';
import { CompiledQuery } from 'kysely';
import type pg from 'pg';
import type { Executor } from './pool.ts';

/**
 * Named prepared statements, the one way a hot path skips parsing and planning: PostgreSQL parses
 * and plans a named statement once per connection, which for a statement of several CTEs costs more
 * than running it. A statement is declared once with `prepare` and run with `.run(db, params)`, on
 * the pool or in a transaction; its SQL is compiled once, with markers in place of the values, so a
 * run only fills them in. Only for statements whose text does not depend on the values (no IN lists
 * of varying length, no optional clauses): every value is a parameter.
 */

export interface PreparedStatement<Params, Row extends object> {
  run(db: Executor, params: Params): Promise<Row[]>;
}

/** What `build` may return: a Kysely query builder or a `sql` template. */
interface Compilable<Row> {
  compile(db: Executor): CompiledQuery<Row>;
}

const MARKER = '\u0000prepared:';
const statementNames = new Map<string, string>();

/**
 * Declares a prepared statement. `build` is called once, on the first run, with stand-ins for the
 * parameters; each run sends the compiled text by name with the values of `params`.
 *
 *     const contactById = prepare((db, p: { orgId: string; clientId: string; id: string }) =>
 *       contactRecords(db, p).where('c.id', '=', p.id));
 *     const [row] = await contactById.run(db, { ...tenant, id });
 */
export function prepare<Params extends object, Row extends object>(
  build: (db: Executor, params: Params) => Compilable<Row>,
): PreparedStatement<Params, Row> {
  let statement: { name: string; text: string; values: (params: Params) => unknown[] } | undefined;
  return {
    async run(db, params) {
      statement ??= compile(db, build);
      const values = statement.values(params);
      // Outside a transaction, straight on the pool: a hot read pays for no connection handling of Kysely's.
      const pool = pools.get(db);
      if (pool) return (await pool.query<Row>({ name: statement.name, text: statement.text, values })).rows;
      const result = await db.executeQuery<Row>(
        CompiledQuery.raw(statement.text, values) as CompiledQuery<Row>,
      );
      return result.rows;
    },
  };
}

const pools = new WeakMap<Executor, pg.Pool>();

/** Tells prepared statements run on `db` (the database, not a transaction) to use its pool directly. */
export function runOnPool(db: Executor, pool: pg.Pool): void {
  pools.set(db, pool);
}

function compile<Params extends object, Row>(
  db: Executor,
  build: (db: Executor, params: Params) => Compilable<Row>,
): { name: string; text: string; values: (params: Params) => unknown[] } {
  const names = new Map<string, keyof Params>();
  const markers = new Proxy({} as Params, {
    get: (_target, name) => {
      if (typeof name !== 'string') return undefined;
      names.set(`${MARKER}${name}`, name as keyof Params);
      return `${MARKER}${name}`;
    },
  });
  const compiled = build(db, markers).compile(db);
  const misused = (value: unknown) =>
    typeof value === 'string' && value.includes(MARKER) && !names.has(value);
  if (compiled.sql.includes(MARKER) || compiled.parameters.some(misused)) {
    throw new Error('every value of a prepared statement must be a parameter, used as it is');
  }
  const parts = compiled.parameters.map((value): { name: keyof Params } | { value: unknown } => {
    const name = typeof value === 'string' ? names.get(value) : undefined;
    return name === undefined ? { value } : { name };
  });
  const statementName = `k_${createHash('sha1').update(compiled.sql).digest('hex').slice(0, 24)}`;
  statementNames.set(compiled.sql, statementName);
  return {
    name: statementName,
    text: compiled.sql,
    values: (params) => parts.map((part) => ('name' in part ? params[part.name] : part.value)),
  };
}

type Query = (text: unknown, values?: unknown, ...rest: unknown[]) => unknown;
const PREPARING = Symbol('preparing');

/** The pool as Kysely uses it: the text of a prepared statement is sent by its name. */
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
