import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { type Config, ConfigError } from '../config.ts';
import { Keyring } from './crypto.ts';

export interface Secrets {
  adminToken: string;
  /** AES-256-GCM keys of secrets at rest (webhook secrets), also the root of page-token signing. */
  encryptionKey: Keyring;
  /** True when the admin token was generated on this start: it is printed once. */
  adminTokenCreated: boolean;
}

/**
 * `ADMIN_TOKEN` and `ENCRYPTION_KEY(S)` come from the environment. On the embedded database alone,
 * where one process owns `DATA_DIR`, they are generated once into it (mode 0600) and read back on
 * later starts. With `DATABASE_URL` several processes share one database, and each would generate
 * its own: so there they must be given.
 */
export async function loadSecrets(config: Config): Promise<Secrets> {
  requireSharedSecrets(config);
  const admin = config.adminToken
    ? { value: config.adminToken, created: false }
    : await readOrCreate(
        path.join(config.dataDir, 'admin-token'),
        () => `adm_${randomBytes(32).toString('base64url')}`,
      );
  const keys = config.encryptionKeys.length ? config.encryptionKeys : [await generatedKey(config.dataDir)];
  return { adminToken: admin.value, encryptionKey: new Keyring(keys), adminTokenCreated: admin.created };
}

export function requireSharedSecrets(config: Config): void {
  if (!config.databaseUrl) return;
  const missing = [
    config.adminToken ? null : 'ADMIN_TOKEN',
    config.encryptionKeys.length ? null : 'ENCRYPTION_KEY',
  ].filter(Boolean);
  if (missing.length === 0) return;
  throw new ConfigError(
    `with DATABASE_URL set, ADMIN_TOKEN and ENCRYPTION_KEY (or ENCRYPTION_KEYS) must both be given (missing: ${missing.join(', ')}): ` +
      'every process on one database must share them, or webhook secrets, page tokens and the admin token ' +
      'of one process fail in another. Generate each with: openssl rand -base64 32',
  );
}

async function generatedKey(dataDir: string): Promise<Buffer> {
  const file = path.join(dataDir, 'encryption-key');
  const { value } = await readOrCreate(file, () => randomBytes(32).toString('base64'));
  const key = Buffer.from(value, 'base64');
  if (key.length !== 32) throw new ConfigError(`${file} does not hold a base64 32-byte key`);
  return key;
}

async function readOrCreate(file: string, make: () => string): Promise<{ value: string; created: boolean }> {
  const existing = await fs.readFile(file, 'utf8').catch(() => null);
  if (existing?.trim()) return { value: existing.trim(), created: false };
  await fs.mkdir(path.dirname(file), { recursive: true });
  const value = make();
  try {
    await fs.writeFile(file, `${value}\n`, { mode: 0o600, flag: 'wx' });
    return { value, created: true };
  } catch {
    // Another process wrote it first: use theirs.
    return { value: (await fs.readFile(file, 'utf8')).trim(), created: false };
  }
}
