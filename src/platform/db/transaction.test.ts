import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { sql } from 'kysely';
import { buildTestApp, type TestApp } from '../../../test/helpers.ts';
import type { Db, Executor, Trx } from './pool.ts';
import { inTransaction } from './transaction.ts';

let t: TestApp;
before(async () => {
  t = await buildTestApp();
});
after(() => t.close());

/** Compiled by `tsc --noEmit`: each `@ts-expect-error` fails the type check if the line it covers compiles. */
export function typeLevelChecks(db: Db, trx: Trx): void {
  const needsTransaction = (_trx: Trx) => {};
  const reads = (_db: Executor) => {};
  // @ts-expect-error a Db is not a Trx: a function that needs a transaction cannot be handed the pool
  needsTransaction(db);
  // @ts-expect-error an open transaction is not a Db: it cannot open another one
  inTransaction(trx, async () => {});
  // Both read.
  reads(db);
  reads(trx);
}

const inserted = (db: Executor, name: string) =>
  sql<{ n: number }>`SELECT count(*)::int AS n FROM orgs WHERE name = ${name}`
    .execute(db)
    .then((result) => result.rows[0].n);

test('inTransaction commits what its work wrote, and rolls all of it back when the work throws', async () => {
  const insertOrg = (trx: Trx, name: string) =>
    sql`WITH org AS (
        INSERT INTO orgs (id, name, house_client_id) VALUES (gen_random_uuid(), ${name}, gen_random_uuid())
        RETURNING id, house_client_id)
      INSERT INTO clients (id, org_id, name, is_house) SELECT house_client_id, id, 'House', true FROM org`.execute(
      trx,
    );
  await inTransaction(t.platform.db, (trx) => insertOrg(trx, 'committed org'));
  await assert.rejects(
    inTransaction(t.platform.db, async (trx) => {
      await insertOrg(trx, 'rolled back org');
      throw new Error('work failed');
    }),
    /work failed/,
  );
  assert.equal(await inserted(t.platform.db, 'committed org'), 1);
  assert.equal(await inserted(t.platform.db, 'rolled back org'), 0);
});
