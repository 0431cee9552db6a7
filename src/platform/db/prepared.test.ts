import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { sql } from 'kysely';
import { buildTestApp, type TestApp } from '../../../test/helpers.ts';
import { runPrepared } from './prepared.ts';

let t: TestApp;
before(async () => {
  t = await buildTestApp();
});
after(() => t.close());

const preparedOnThisConnection = (trx: typeof t.platform.db) =>
  sql<{ name: string; statement: string }>`SELECT name, statement FROM pg_prepared_statements`
    .execute(trx)
    .then((result) => result.rows);

test('runPrepared sends its text as a named statement, in a transaction too; other queries stay unnamed', async () => {
  await t.platform.db.transaction().execute(async (trx) => {
    const first = await runPrepared(
      trx,
      sql<{ n: number }>`SELECT ${41}::int + 1 AS n /* prepared probe */`.compile(trx),
    );
    const second = await runPrepared(
      trx,
      sql<{ n: number }>`SELECT ${1}::int + 1 AS n /* prepared probe */`.compile(trx),
    );
    assert.deepEqual([first.rows[0].n, second.rows[0].n], [42, 2]);
    await sql`SELECT 'unnamed probe'`.execute(trx);
    const statements = await preparedOnThisConnection(trx);
    const probes = statements.filter((row) => row.statement.includes('prepared probe'));
    assert.equal(probes.length, 1);
    assert.match(probes[0].name, /^k_[0-9a-f]{24}$/);
    assert.ok(!statements.some((row) => row.statement.includes('unnamed probe')));
  });
});
