import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { parse } from 'csv-parse/sync';
import type { FastifyInstance } from 'fastify';
import { ADMIN_TOKEN } from '../helpers.ts';

const schemaFile = path.resolve(import.meta.dirname, '../../docs/schemas/wallet-snapshot-v2.schema.json');
const ajv = new Ajv({ allErrors: true, strict: true, strictRequired: false });
(addFormatsModule as unknown as (ajv: Ajv) => void)(ajv);
const validate = ajv.compile(JSON.parse(fs.readFileSync(schemaFile, 'utf8')));

/** Fails unless `body` is a valid wallet-snapshot/2 document per the schema committed in docs/. */
export function assertValidSnapshot(body: unknown): void {
  assert.ok(validate(body), `snapshot does not match its JSON Schema: ${ajv.errorsText(validate.errors)}`);
}

export interface CsvRow {
  wallet: string;
  cluster: string;
  kind: string;
  type: string;
  giraffe: string;
  member_since: string;
}

/** Parses the CSV feed with a real CSV parser; the header must be exactly the documented columns. */
export function parseSnapshotCsv(text: string): CsvRow[] {
  const records: string[][] = parse(text, { skip_empty_lines: true });
  assert.deepEqual(records[0], ['wallet', 'cluster', 'kind', 'type', 'giraffe', 'member_since']);
  return records.slice(1).map(([wallet, cluster, kind, type, giraffe, member_since]) => ({
    wallet,
    cluster,
    kind,
    type,
    giraffe,
    member_since,
  }));
}

/** The CSV says the same as the JSON: one row per wallet, clustered by the entry's key. */
export function assertCsvMatchesJson(rows: CsvRow[], snapshot: any): void {
  const expected = snapshot.entries.flatMap((entry: any) =>
    entry.wallets.map((wallet: string) => [
      wallet,
      entry.wallet,
      entry.type,
      String(entry.giraffe),
      entry.member_since ?? '',
    ]),
  );
  assert.deepEqual(
    rows.map((row) => [row.wallet, row.cluster, row.type, row.giraffe, row.member_since]),
    expected,
  );
  assert.equal(rows.length, snapshot.counts.wallets);
}

export async function feedAdmin(app: FastifyInstance, method: string, url: string, payload?: unknown) {
  return app.inject({
    method: method as 'PUT',
    url: `/admin/v1/feed${url}`,
    headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    ...(payload !== undefined ? { payload: payload as object } : {}),
  });
}

/** A lower-case address made from a number, for readable fixtures. */
export const addr = (n: number) => `0x${n.toString(16).padStart(40, '0')}`;
