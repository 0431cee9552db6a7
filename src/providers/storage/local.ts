import { randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { type Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { TenantScope } from '../../platform/auth/tenant.ts';
import { keyFromStoragePath, type StorageKey } from './storage-path.ts';
import { notFound, type StorageProvider, tooLarge, type UploadRequest, type UploadTarget } from './types.ts';
import { signUpload, type UploadGrant, verifyUpload } from './upload-signature.ts';

export interface LocalStorageOptions {
  /** `DATA_DIR/storage`. */
  root: string;
  /** Sign upload URLs, derived from the encryption keys: the first signs, every one verifies (key rotation). */
  signingKeys: readonly Buffer[];
  /** Where this service is reached; upload URLs are `{publicBaseUrl}/uploads/{key}?…&signature=…`. */
  publicBaseUrl: string;
  uploadTtlMs: number;
}

/** Why an upload was refused; the upload route turns it into the error envelope. */
export class UploadRefusedError extends Error {
  constructor(
    readonly reason: 'too_large' | 'wrong_size',
    message: string,
  ) {
    super(message);
    this.name = 'UploadRefusedError';
  }
}

const BASE = 'local://';

/**
 * Objects as files under `DATA_DIR/storage/{key}`, uploaded through this service's own
 * `PUT /uploads/{key}` with a signed query (see upload-routes.ts). One machine, or a disk the API and worker processes share.
 */
export class LocalStorage implements StorageProvider {
  readonly kind = 'local';

  constructor(private readonly options: LocalStorageOptions) {}

  storagePath(key: StorageKey): string {
    return `${BASE}${key}`;
  }

  keyFromStoragePath(storagePath: unknown, scope: TenantScope): StorageKey {
    return keyFromStoragePath(storagePath, BASE, scope);
  }

  async createUpload(key: StorageKey, request: UploadRequest): Promise<UploadTarget> {
    const expires = Math.ceil((Date.now() + this.options.uploadTtlMs) / 1000);
    const query = signUpload(this.options.signingKeys[0], { key, ...request, expires });
    return {
      url: `${this.options.publicBaseUrl.replace(/\/+$/, '')}/uploads/${key}?${query}`,
      method: 'PUT',
      headers: { 'content-type': request.mimeType },
      expires_at: new Date(expires * 1000).toISOString(),
    };
  }

  /** The grant of an upload URL; an `UploadSignatureError` when it is forged, moved or expired. */
  grantOf(key: string, query: Record<string, unknown>): UploadGrant {
    return verifyUpload(this.options.signingKeys, key, query);
  }

  /**
   * Writes an upload's body to its key: all of it or nothing (a temporary file renamed into place),
   * exactly the granted size, or an `UploadRefusedError`.
   */
  async receive(grant: UploadGrant, body: Readable): Promise<void> {
    const file = this.fileOf(grant.key);
    await fs.mkdir(path.dirname(file), { recursive: true });
    const partial = `${file}.${randomBytes(6).toString('hex')}.part`;
    let written = 0;
    const counter = new Transform({
      transform(chunk: Buffer, _encoding, callback) {
        written += chunk.length;
        if (written > grant.byteSize)
          return callback(
            new UploadRefusedError(
              'too_large',
              `The body is larger than the ${grant.byteSize} bytes this URL was issued for.`,
            ),
          );
        callback(null, chunk);
      },
    });
    // Piped rather than pipelined: a refused body must not destroy the request, so the refusal can still be answered.
    body.pipe(counter);
    try {
      await pipeline(counter, createWriteStream(partial, { flags: 'wx', mode: 0o600 }));
      if (written !== grant.byteSize)
        throw new UploadRefusedError(
          'wrong_size',
          `The body is ${written} bytes; this URL was issued for ${grant.byteSize}.`,
        );
      await fs.rename(partial, file);
    } catch (error) {
      body.unpipe(counter);
      await fs.rm(partial, { force: true });
      throw error;
    }
  }

  async read(key: StorageKey, options: { maxBytes: number }): Promise<Buffer> {
    const file = this.fileOf(key);
    const stat = await fs.stat(file).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') throw notFound();
      throw error;
    });
    if (stat.size > options.maxBytes) throw tooLarge(stat.size, options.maxBytes);
    return fs.readFile(file);
  }

  async delete(key: StorageKey): Promise<void> {
    await fs.rm(this.fileOf(key), { force: true });
  }

  private fileOf(key: StorageKey): string {
    const root = path.resolve(this.options.root);
    const file = path.resolve(root, key);
    // Keys were checked already; this holds even if a check above were ever loosened.
    if (!file.startsWith(`${root}${path.sep}`))
      throw new Error(`storage key escapes the storage root: ${key}`);
    return file;
  }
}
