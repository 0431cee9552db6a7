import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { runMigrations as runWorkerMigrations } from 'graphile-worker';
import { type Migration, type MigrationProvider, Migrator, sql } from 'kysely';
import type { DatabaseHandle } from './pool.ts';

/** `migrations/` at the repository root, found from here whether running from src/ or from the build in dist/. */
const MIGRATIONS_DIR = findUp(path.dirname(fileURLToPath(import.meta.url)), 'migrations');

function findUp(from: string, name: string): string {
  let dir = from;
  while (!existsSync(path.join(dir, name, '0001_foundation.sql'))) {
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error(`no ${name}/ folder above ${from}`);
    dir = parent;
  }
  return path.join(dir, name);
}

/** Forward-only SQL files in `migrations/`, applied in name order, each in its own transaction. */
class SqlFileMigrationProvider implements MigrationProvider {
  async getMigrations(): Promise<Record<string, Migration>> {
    const files = (await fs.readdir(MIGRATIONS_DIR)).filter((file) => file.endsWith('.sql')).sort();
    const migrations: Record<string, Migration> = {};
    for (const file of files) {
      const text = await fs.readFile(path.join(MIGRATIONS_DIR, file), 'utf8');
      migrations[file.replace(/\.sql$/, '')] = {
        up: async (db) => {
          await sql.raw(text).execute(db);
        },
      };
    }
    return migrations;
  }
}

function migrator(handle: DatabaseHandle): Migrator {
  return new Migrator({ db: handle.db, provider: new SqlFileMigrationProvider() });
}

/** Applies the service's migrations and the job queue's schema. Safe to run concurrently from several processes. */
export async function migrate(handle: DatabaseHandle): Promise<string[]> {
  const { error, results } = await migrator(handle).migrateToLatest();
  if (error) throw error;
  await runWorkerMigrations({ pgPool: handle.pool });
  return (results ?? [])
    .filter((result) => result.status === 'Success')
    .map((result) => result.migrationName);
}

/** True when every migration file has been applied. */
export async function migrationsCurrent(handle: DatabaseHandle): Promise<boolean> {
  const migrations = await migrator(handle).getMigrations();
  return migrations.every((migration) => migration.executedAt !== undefined);
}
