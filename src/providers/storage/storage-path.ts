import type { TenantScope } from '../../platform/auth/tenant.ts';
import { newId } from '../../platform/db/ids.ts';

/**
 * Object keys and the `storage_path` form clients see. A key is `orgs/{org_id}/clients/{client_id}/…`:
 * under the caller's org prefix, and within it the client's, so one client of an agency cannot ingest
 * another's upload. The path a client gets back is the provider's base plus the key:
 * `s3://{bucket}/{key}` for S3, `local://{key}` for the local disk.
 *
 * Paths are checked as plain strings, never through `new URL()` or `path.resolve()`: both normalise
 * `..` and percent-encoding away before anyone could refuse them.
 */

/** A key that passed `keyFromStoragePath` or was made by `newObjectKey`; nothing else reaches a provider. */
export type StorageKey = string & { readonly storageKey: unique symbol };

/** S3's own limit on a key, in bytes; keys here are ASCII, so characters. */
const MAX_KEY_LENGTH = 1024;
/** What a key may contain: the characters `newObjectKey` writes. */
const KEY_CHARACTERS = /^[A-Za-z0-9._\-/]+$/;

/** The storage_path is refused; the message names what is wrong and is safe to show. */
export class StoragePathError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StoragePathError';
  }
}

export function ownerPrefix(scope: TenantScope): string {
  return `orgs/${scope.orgId}/clients/${scope.clientId}/`;
}

/**
 * The key of `storagePath` when it is a path of this storage (`base`, such as `s3://bucket/`) under the
 * caller's prefix, with nothing that could step out of it; otherwise a `StoragePathError`.
 */
export function keyFromStoragePath(storagePath: unknown, base: string, scope: TenantScope): StorageKey {
  if (typeof storagePath !== 'string' || storagePath === '')
    throw new StoragePathError('must be a storage path returned by the uploads endpoint');
  if (!storagePath.startsWith(base)) throw new StoragePathError(`must start with ${base}`);
  const key = storagePath.slice(base.length);
  const problem = keyProblem(key);
  if (problem) throw new StoragePathError(problem);
  const prefix = ownerPrefix(scope);
  if (!key.startsWith(prefix) || key.length === prefix.length)
    throw new StoragePathError(`must name an object under ${base}${prefix}`);
  return key as StorageKey;
}

/** What makes `key` unsafe, or null. Each rule is also implied by the character set; the messages say why. */
export function keyProblem(key: string): string | null {
  if (key.length > MAX_KEY_LENGTH) return `must be at most ${MAX_KEY_LENGTH} characters long`;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: NUL and control characters are what is refused.
  if (/[\u0000-\u001f\u007f]/.test(key)) return 'must not contain control characters';
  if (key.includes('\\')) return 'must not contain backslashes';
  if (key.includes('%')) return 'must not contain percent-encoding';
  if (key.startsWith('/')) return 'must not be an absolute path';
  if (key.includes('//')) return 'must not contain empty path segments';
  if (key.includes('..')) return 'must not contain ..';
  if (key.split('/').some((segment) => segment === '.')) return 'must not contain . segments';
  if (key.endsWith('/')) return 'must name an object, not a folder';
  if (!KEY_CHARACTERS.test(key)) return "may contain only letters, digits, '.', '_', '-' and '/'";
  return null;
}

/**
 * A new, unguessable key for a file a client is about to upload: the caller's prefix, the `area`
 * (such as `kb/{kb_id}`), a fresh id and the file name made safe.
 */
export function newObjectKey(scope: TenantScope, area: string, filename: string): StorageKey {
  const key = `${ownerPrefix(scope)}${area}/${newId()}/${safeFileName(filename)}`;
  const problem = keyProblem(key);
  if (problem) throw new StoragePathError(`area ${problem}`);
  return key as StorageKey;
}

/** The last segment of a client's file name in the key's character set, its extension kept. */
export function safeFileName(filename: string): string {
  // Decomposed, then without the combining marks: "résumé" becomes "resume".
  const base =
    filename
      .normalize('NFKD')
      .replace(/[\u0300-\u036f]/g, '')
      .split(/[/\\]/)
      .pop() ?? '';
  const safe = base
    .replace(/[^A-Za-z0-9._-]+/g, '-')
    .replace(/-*\.[-.]*/g, '.')
    .replace(/-{2,}/g, '-')
    .replace(/^[.-]+|[.-]+$/g, '');
  if (!safe) return 'file';
  if (safe.length <= 120) return safe;
  const dot = safe.lastIndexOf('.');
  const extension = dot > 0 && safe.length - dot <= 16 ? safe.slice(dot) : '';
  return `${safe.slice(0, 120 - extension.length).replace(/[.-]+$/, '')}${extension}`;
}
