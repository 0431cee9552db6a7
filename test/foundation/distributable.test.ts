import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { createTestDatabase } from '../helpers.ts';

/**
 * Issue 27: every tenant table can be distributed by its tenant column (Citus requires it in every
 * primary key, unique constraint or index, and foreign key between distributed tables), and every
 * table of schema public says what it is. Read from the catalog of a migrated database, so a new
 * table that forgets either fails here.
 */

/** The tenant column of a tenant table: `org_id`, except for the tenants themselves. */
const TENANT_COLUMN = new Map([['orgs', 'id']]);
const KIND = /^(tenant|reference|local): \S/;

interface Table {
  name: string;
  kind: 'tenant' | 'reference' | 'local' | null;
  columns: Map<number, string>;
}

async function readTables(client: pg.Client): Promise<Map<string, Table>> {
  const { rows } = await client.query<{ name: string; comment: string | null; columns: [number, string][] }>(`
    SELECT c.relname AS name, obj_description(c.oid, 'pg_class') AS comment,
           (SELECT json_agg(json_build_array(a.attnum, a.attname)) FROM pg_attribute a
             WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped) AS columns
    FROM pg_class c
    WHERE c.relnamespace = 'public'::regnamespace AND c.relkind IN ('r', 'p') AND NOT c.relispartition`);
  return new Map(
    rows.map((row) => {
      const kind = KIND.test(row.comment ?? '') ? (row.comment?.split(':')[0] as Table['kind']) : null;
      return [row.name, { name: row.name, kind, columns: new Map(row.columns) }];
    }),
  );
}

function tenantColumn(table: Table): string | undefined {
  const name = TENANT_COLUMN.get(table.name) ?? 'org_id';
  return [...table.columns.values()].includes(name) ? name : undefined;
}

/** A table is a tenant's when it says so, or when it has org_id and does not say otherwise. */
function isTenant(table: Table): boolean {
  if (table.kind === 'tenant') return true;
  return table.kind === null && tenantColumn(table) !== undefined;
}

/** Everything that keeps a table of schema public from being distributed by its tenant, one line each. */
async function violations(client: pg.Client): Promise<string[]> {
  const tables = await readTables(client);
  const found: string[] = [];
  for (const table of tables.values()) {
    if (table.kind === null)
      found.push(`${table.name}: no COMMENT ON TABLE starting tenant:, reference: or local:`);
    if (isTenant(table) && tenantColumn(table) === undefined)
      found.push(`${table.name}: tenant table without org_id`);
  }
  const { rows: constraints } = await client.query<{
    table: string;
    name: string;
    type: string;
    columns: number[];
    target: string | null;
    target_columns: number[] | null;
  }>(`
    SELECT cl.relname AS table, co.conname AS name, co.contype AS type, co.conkey AS columns,
           tg.relname AS target, co.confkey AS target_columns
    FROM pg_constraint co
    JOIN pg_class cl ON cl.oid = co.conrelid
    LEFT JOIN pg_class tg ON tg.oid = co.confrelid
    WHERE cl.relnamespace = 'public'::regnamespace AND co.contype IN ('p', 'u', 'x', 'f')`);
  for (const constraint of constraints) {
    const table = tables.get(constraint.table);
    if (!table) continue;
    const target = constraint.target ? tables.get(constraint.target) : undefined;
    if (!isTenant(table)) {
      // Citus refuses a reference or local table that points into a distributed one.
      if (target && isTenant(target))
        found.push(
          `${table.name}: ${constraint.name} references tenant table ${target.name} from a ${table.kind} table`,
        );
      continue;
    }
    const column = tenantColumn(table);
    const columns = constraint.columns.map((attnum) => table.columns.get(attnum));
    if (constraint.type !== 'f') {
      if (!column || !columns.includes(column))
        found.push(`${table.name}: ${constraint.name} lacks ${column ?? 'org_id'}`);
      continue;
    }
    if (!target || target.kind === 'reference') continue;
    if (!isTenant(target)) {
      found.push(
        `${table.name}: ${constraint.name} references ${target.name}, which is not a tenant or reference table`,
      );
      continue;
    }
    const position = column ? columns.indexOf(column) : -1;
    const targetColumn =
      position < 0 ? undefined : target.columns.get(constraint.target_columns?.[position] ?? 0);
    if (targetColumn !== tenantColumn(target))
      found.push(
        `${table.name}: ${constraint.name} does not pair its ${column ?? 'org_id'} with ${target.name}'s tenant`,
      );
  }
  // Unique indexes that back no constraint (partial or expression ones) enforce uniqueness too.
  const { rows: indexes } = await client.query<{ table: string; name: string; columns: string }>(`
    SELECT cl.relname AS table, ix.relname AS name, i.indkey::text AS columns
    FROM pg_index i
    JOIN pg_class cl ON cl.oid = i.indrelid
    JOIN pg_class ix ON ix.oid = i.indexrelid
    WHERE cl.relnamespace = 'public'::regnamespace AND i.indisunique
      AND NOT EXISTS (SELECT 1 FROM pg_constraint co WHERE co.conindid = i.indexrelid)`);
  for (const index of indexes) {
    const table = tables.get(index.table);
    if (!table || !isTenant(table)) continue;
    const column = tenantColumn(table);
    const columns = index.columns.split(' ').map((attnum) => table.columns.get(Number(attnum)));
    if (!column || !columns.includes(column))
      found.push(`${table.name}: unique index ${index.name} lacks ${column ?? 'org_id'}`);
  }
  return found.sort();
}

describe('every tenant table is distributable by org_id', () => {
  let database: { url: string; drop: () => Promise<void> };
  let client: pg.Client;

  before(async () => {
    database = await createTestDatabase();
    client = new pg.Client({ connectionString: database.url });
    await client.connect();
  });

  after(async () => {
    await client.end();
    await database.drop();
  });

  test('the migrated schema: every key and reference of a tenant table holds org_id, every table says what it is', async () => {
    assert.deepEqual(await violations(client), []);
  });

  test('a new table that forgets org_id in a key, or its comment, is named', async () => {
    await client.query(`
      CREATE TABLE slipped (
        id uuid PRIMARY KEY,
        org_id uuid NOT NULL,
        contact_id uuid NOT NULL,
        code text NOT NULL UNIQUE
      );
      CREATE UNIQUE INDEX slipped_one_per_contact ON slipped (contact_id);
      CREATE TABLE slipped_child (org_id uuid NOT NULL, slipped_id uuid NOT NULL REFERENCES slipped (id));
      COMMENT ON TABLE slipped_child IS 'tenant: a child that references its parent by id alone';
      CREATE TABLE slipped_lookup (code text PRIMARY KEY, slipped_id uuid NOT NULL REFERENCES slipped (id));
      COMMENT ON TABLE slipped_lookup IS 'local: a lookup that points into a tenant table'`);
    try {
      assert.deepEqual(
        (await violations(client)).filter((line) => line.startsWith('slipped')),
        [
          'slipped: no COMMENT ON TABLE starting tenant:, reference: or local:',
          'slipped: slipped_code_key lacks org_id',
          'slipped: slipped_pkey lacks org_id',
          'slipped: unique index slipped_one_per_contact lacks org_id',
          "slipped_child: slipped_child_slipped_id_fkey does not pair its org_id with slipped's tenant",
          'slipped_lookup: slipped_lookup_slipped_id_fkey references tenant table slipped from a local table',
        ],
      );
    } finally {
      await client.query('DROP TABLE slipped_lookup, slipped_child, slipped');
    }
  });
});
