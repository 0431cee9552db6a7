import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { sql } from 'kysely';
import { buildTestApp, type TestApp } from '../../../test/helpers.ts';
import type { Executor } from './pool.ts';
import { prepare } from './prepared.ts';
import { inTransaction } from './transaction.ts';

let t: TestApp;
before(async () => {
  t = await buildTestApp();
});
after(() => t.close());

const preparedOnThisConnection = (trx: Executor) =>
  sql<{ name: string; statement: string }>`SELECT name, statement FROM pg_prepared_statements`
    .execute(trx)
    .then((result) => result.rows);

const probe = prepare(
  (_db, p: { n: number }) => sql<{ n: number }>`SELECT ${p.n}::int + 1 AS n /* prepared probe */`,
);

test('a prepared statement is sent as a named statement, in a transaction too; other queries stay unnamed', async () => {
  await inTransaction(t.platform.db, async (trx) => {
    const first = await probe.run(trx, { n: 41 });
    const second = await probe.run(trx, { n: 1 });
    assert.deepEqual([first[0].n, second[0].n], [42, 2]);
    await sql`SELECT 'unnamed probe'`.execute(trx);
    const statements = await preparedOnThisConnection(trx);
    const probes = statements.filter((row) => row.statement.includes('prepared probe'));
    assert.equal(probes.length, 1);
    assert.match(probes[0].name, /^k_[0-9a-f]{24}$/);
    assert.ok(!statements.some((row) => row.statement.includes('unnamed probe')));
  });
});

test('on the database, outside a transaction, a prepared statement runs straight on the pool', async () => {
  const { pool } = t.platform.database;
  const query = pool.query;
  const sent: unknown[] = [];
  pool.query = ((config: unknown, ...rest: unknown[]) => {
    sent.push(config);
    return (query as (...args: unknown[]) => unknown).call(pool, config, ...rest);
  }) as typeof pool.query;
  try {
    assert.deepEqual(await probe.run(t.platform.db, { n: 5 }), [{ n: 6 }]);
  } finally {
    pool.query = query;
  }
  assert.equal(sent.length, 1, 'one query on the pool, none through the query builder');
  assert.match((sent[0] as { name: string }).name, /^k_[0-9a-f]{24}$/);
});

test('a value that would become part of the text, not a parameter, is refused', async () => {
  const misused = prepare((_db, p: { n: number }) => sql<{ n: number }>`SELECT ${sql.lit(p.n)} AS n`);
  await assert.rejects(misused.run(t.platform.db, { n: 1 }), /must be a parameter/);
});
