import { sql } from 'kysely';
import { type Keyring, open, seal, sealedUnderCurrent } from './crypto.ts';
import type { Db } from './db/pool.ts';

/** A column of secrets sealed with `seal()`, keyed by an `id` column, for re-encryption under a new key. */
export interface SealedColumn {
  table: string;
  column: string;
  /** The other columns `aad` reads. */
  aadColumns: string[];
  /** The additional authenticated data the row's value was sealed with. */
  aad: (row: Record<string, unknown>) => string;
}

export interface Reencrypted {
  table: string;
  column: string;
  checked: number;
  resealed: number;
}

const BATCH = 500;

/**
 * Re-seals every value of `columns` that the current key of `keyring` did not seal, so the older
 * keys can then leave `ENCRYPTION_KEYS`. Safe while the service runs: a row is replaced only if it
 * still holds the value that was read (a secret rotated meanwhile is already under the current key).
 */
export async function reencrypt(db: Db, keyring: Keyring, columns: SealedColumn[]): Promise<Reencrypted[]> {
  const report: Reencrypted[] = [];
  for (const target of columns) {
    const done: Reencrypted = { table: target.table, column: target.column, checked: 0, resealed: 0 };
    let after: string | null = null;
    for (;;) {
      const { rows } = await sql<Record<string, unknown> & { id: string; sealed: Buffer }>`
        SELECT id, ${sql.join(target.aadColumns.map((name) => sql.ref(name)))}, ${sql.ref(target.column)} AS sealed
        FROM ${sql.table(target.table)}
        WHERE ${after === null ? sql`true` : sql`id > ${after}`}
        ORDER BY id LIMIT ${BATCH}`.execute(db);
      for (const row of rows) {
        done.checked += 1;
        const aad = target.aad(row);
        if (sealedUnderCurrent(keyring, row.sealed, aad)) continue;
        const resealed = seal(keyring, open(keyring, row.sealed, aad), aad);
        const updated = await sql`
          UPDATE ${sql.table(target.table)} SET ${sql.ref(target.column)} = ${resealed}
          WHERE id = ${row.id} AND ${sql.ref(target.column)} = ${row.sealed}`.execute(db);
        if (Number(updated.numAffectedRows ?? 0) > 0) done.resealed += 1;
      }
      if (rows.length < BATCH) break;
      after = rows[rows.length - 1].id;
    }
    report.push(done);
  }
  return report;
}
