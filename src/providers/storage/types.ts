import type { TenantScope } from '../../platform/auth/tenant.ts';
import type { StorageKey } from './storage-path.ts';

/** Where and how a client uploads one object: a `PUT` of exactly `byte_size` bytes with these headers. */
export interface UploadTarget {
  url: string;
  method: 'PUT';
  /** Headers the PUT must carry as given (the content type is part of what was signed). */
  headers: Record<string, string>;
  /** ISO 8601; the URL is refused after it. */
  expires_at: string;
}

export interface UploadRequest {
  byteSize: number;
  mimeType: string;
}

/** Object storage for knowledge-base uploads. Keys come only from `keyFromStoragePath` or `newObjectKey`. */
export interface StorageProvider {
  readonly kind: 'local' | 's3';
  /** The `storage_path` a client is given for a key. */
  storagePath(key: StorageKey): string;
  /** The key of a client-given `storage_path`, or a `StoragePathError` (400 naming `storage_path`). */
  keyFromStoragePath(storagePath: unknown, scope: TenantScope): StorageKey;
  createUpload(key: StorageKey, request: UploadRequest): Promise<UploadTarget>;
  /** The object's bytes; `StorageObjectError` when it is absent or larger than `maxBytes`. */
  read(key: StorageKey, options: { maxBytes: number }): Promise<Buffer>;
  /** Removes the object; an absent one is not an error. */
  delete(key: StorageKey): Promise<void>;
}

/**
 * A permanent reason the object cannot be read: retrying will not help, the document fails with the
 * message. Any other error from a provider (network, credentials) is transient and worth a retry.
 */
export class StorageObjectError extends Error {
  constructor(
    readonly reason: 'not_found' | 'too_large',
    message: string,
  ) {
    super(message);
    this.name = 'StorageObjectError';
  }
}

export function notFound(): StorageObjectError {
  return new StorageObjectError(
    'not_found',
    'Nothing was uploaded to this storage path (or it was deleted).',
  );
}

export function tooLarge(size: number | null, maxBytes: number): StorageObjectError {
  return new StorageObjectError(
    'too_large',
    `The object is ${size === null ? 'larger than' : `${size} bytes, over`} the limit of ${maxBytes} bytes.`,
  );
}
