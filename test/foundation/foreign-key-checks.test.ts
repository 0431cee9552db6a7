import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { createTestDatabase } from '../helpers.ts';

/**
 * Each insert of a referencing row runs its foreign key's check, `SELECT 1 FROM ONLY <referenced>
 * WHERE <key> = $n FOR KEY SHARE`, planned once per connection and kept. On a fresh database it is
 * planned against empty tables, where every index starting with `org_id` costs the same; a check that
 * took one bounded by `org_id` alone read every row of the org for as long as the connection lived
 * (3 ms a webhook attempt at 30,000 deliveries, issue 25). Read from a migrated, empty database, so a
 * new key or index that brings the hazard back fails here.
 */
describe('foreign-key checks on an empty database', () => {
  let database: { url: string; drop: () => Promise<void> };
  let client: pg.Client;

  before(async () => {
    database = await createTestDatabase();
    client = new pg.Client({ connectionString: database.url });
    await client.connect();
    // The plan a connection keeps for the check once it stops planning it per call.
    await client.query('SET plan_cache_mode = force_generic_plan');
  });

  after(async () => {
    await client.end();
    await database.drop();
  });

  test('every check reads by more than org_id', async () => {
    const { rows: keys } = await client.query<{ name: string; referenced: string; columns: string[] }>(`
      SELECT c.conname AS name, c.confrelid::regclass::text AS referenced,
        array_agg(a.attname::text ORDER BY k.position) AS columns
      FROM pg_constraint c
      CROSS JOIN LATERAL unnest(c.confkey) WITH ORDINALITY AS k(attnum, position)
      JOIN pg_attribute a ON a.attrelid = c.confrelid AND a.attnum = k.attnum
      WHERE c.contype = 'f' AND c.connamespace = 'public'::regnamespace
      GROUP BY c.conname, c.confrelid`);
    assert.ok(keys.length > 50, `only ${keys.length} foreign keys found`);
    const broad: string[] = [];
    for (const key of keys) {
      const where = key.columns.map((column, index) => `${pg.escapeIdentifier(column)} = $${index + 1}`);
      const check = `SELECT 1 FROM ONLY ${key.referenced} x WHERE ${where.join(' AND ')} FOR KEY SHARE OF x`;
      const nulls = key.columns.map(() => 'NULL').join(', ');
      await client.query(`PREPARE fk_check AS ${check}`);
      try {
        const { rows } = await client.query<{ 'QUERY PLAN': string }>(`EXPLAIN EXECUTE fk_check(${nulls})`);
        const plan = rows.map((row) => row['QUERY PLAN']).join('\n');
        const conditions = [...plan.matchAll(/Index Cond: (.*)/g)].map((match) => match[1]);
        const columnsRead = conditions.flatMap((condition) =>
          [...condition.matchAll(/\(?(\w+) = \$\d+/g)].map((match) => match[1]),
        );
        if (!columnsRead.some((column) => column !== 'org_id'))
          broad.push(`${key.name} → ${key.referenced}:\n${plan}`);
      } finally {
        await client.query('DEALLOCATE fk_check');
      }
    }
    assert.deepEqual(broad, []);
  });
});
