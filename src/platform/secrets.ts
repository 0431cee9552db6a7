import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Config } from '../config.ts';

export interface Secrets {
  adminToken: string;
  /** 32 bytes for AES-256-GCM (webhook secrets) and for signing page tokens. */
  encryptionKey: Buffer;
  /** True when the admin token was generated on this start: it is printed once. */
  adminTokenCreated: boolean;
}

/**
 * `ADMIN_TOKEN` and `ENCRYPTION_KEY` come from the environment; without them they are generated
 * once into `DATA_DIR` (mode 0600) and read back on later starts.
 */
export async function loadSecrets(config: Config): Promise<Secrets> {
  const admin = config.adminToken
    ? { value: config.adminToken, created: false }
    : await readOrCreate(
        path.join(config.dataDir, 'admin-token'),
        () => `adm_${randomBytes(32).toString('base64url')}`,
      );
  const encryption = config.encryptionKey
    ? { value: config.encryptionKey, created: false }
    : await readOrCreate(path.join(config.dataDir, 'encryption-key'), () =>
        randomBytes(32).toString('base64'),
      );
  return {
    adminToken: admin.value,
    encryptionKey: toKey(encryption.value),
    adminTokenCreated: admin.created,
  };
}

/** A base64 32-byte key is used as is; any other string is stretched with SHA-256. */
function toKey(value: string): Buffer {
  const decoded = Buffer.from(value, 'base64');
  if (decoded.length === 32 && /^[A-Za-z0-9+/]+=*$/.test(value)) return decoded;
  return createHash('sha256').update(value).digest();
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
