import { createHash, randomBytes } from 'node:crypto';
import type { Selectable } from 'kysely';
import type { Db } from '../db/pool.ts';
import type { ApiKeyKind, ApiKeysTable } from '../db/schema.ts';

export type ApiKeyRow = Selectable<ApiKeysTable>;

export const KEY_PREFIX: Record<ApiKeyKind, string> = {
  agency: 'gc_live_',
  client: 'cl_live_',
  legacy_sms: 'sms_live_',
};

/** A fresh key: the prefix of its kind and 256 random bits. Only its SHA-256 is stored. */
export function generateKey(kind: ApiKeyKind): {
  cleartext: string;
  hash: Buffer;
  prefix: string;
  last4: string;
} {
  const prefix = KEY_PREFIX[kind];
  const cleartext = prefix + randomBytes(32).toString('base64url');
  return { cleartext, hash: hashKey(cleartext), prefix, last4: cleartext.slice(-4) };
}

/**
 * The lookup digest of a presented key. The secret part carries 256 random bits, so a plain SHA-256
 * is not open to guessing, and lookup is by the digest: timing reveals nothing about stored keys.
 */
export function hashKey(cleartext: string): Buffer {
  return createHash('sha256').update(cleartext).digest();
}

const KEY_SHAPE = /^(gc_live_|cl_live_|sms_live_)[A-Za-z0-9_-]{43}$/;

export function looksLikeKey(value: string): boolean {
  return KEY_SHAPE.test(value);
}

/** Serialized /me and admin view of a key. */
export function publicApiKey(row: ApiKeyRow) {
  return {
    id: row.id,
    name: row.name,
    prefix: row.prefix,
    kind: row.kind,
    rate_limit_per_minute: row.rate_limit_per_minute,
    expires_at: row.expires_at,
    tag: row.tag,
  };
}

const CACHE_TTL_MS = 60_000;
const LAST_USED_RESOLUTION_MS = 60_000;

interface CacheEntry {
  row: ApiKeyRow;
  loadedAt: number;
}

/**
 * Finds keys by digest with a per-process cache, so the hot path of every request does no SQL.
 * Revocation evicts at once: in this process directly, in the others through PostgreSQL
 * LISTEN/NOTIFY on `api_keys_changed` (see `KeyChangeListener`).
 */
export class ApiKeyStore {
  private readonly cache = new Map<string, CacheEntry>();
  private readonly lastUsedWrites = new Map<string, number>();

  constructor(private readonly db: Db) {}

  async findByCleartext(cleartext: string): Promise<ApiKeyRow | null> {
    // Keyed by the presented key itself: it is in this process's memory for the request anyway.
    const cacheKey = cleartext;
    const cached = this.cache.get(cacheKey);
    const now = Date.now();
    if (cached && now - cached.loadedAt < CACHE_TTL_MS) return cached.row;
    const hash = hashKey(cleartext);
    const row = await this.db
      .selectFrom('api_keys')
      .selectAll()
      .where('secret_hash', '=', hash)
      .executeTakeFirst();
    if (!row) {
      this.cache.delete(cacheKey);
      return null;
    }
    this.cache.set(cacheKey, { row, loadedAt: now });
    return row;
  }

  /** Drops a key from the cache (or all keys when no id is given). */
  evict(keyId?: string): void {
    if (!keyId) {
      this.cache.clear();
      return;
    }
    for (const [cacheKey, entry] of this.cache) if (entry.row.id === keyId) this.cache.delete(cacheKey);
  }

  /** Records use at most once a minute per key, off the request's path. */
  touch(row: ApiKeyRow): void {
    const now = Date.now();
    const last = this.lastUsedWrites.get(row.id) ?? 0;
    if (now - last < LAST_USED_RESOLUTION_MS) return;
    this.lastUsedWrites.set(row.id, now);
    this.db
      .updateTable('api_keys')
      .set({ last_used_at: new Date(now) })
      .where('org_id', '=', row.org_id)
      .where('id', '=', row.id)
      .execute()
      .catch(() => this.lastUsedWrites.delete(row.id));
  }
}
