import {
  DeleteObjectCommand,
  GetObjectCommand,
  type GetObjectCommandOutput,
  NoSuchKey,
  PutObjectCommand,
  S3Client,
  type S3ClientConfig,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import type { TenantScope } from '../../platform/auth/tenant.ts';
import { keyFromStoragePath, type StorageKey } from './storage-path.ts';
import { notFound, type StorageProvider, tooLarge, type UploadRequest, type UploadTarget } from './types.ts';

export interface S3StorageOptions {
  bucket: string;
  /** Null leaves it to the SDK's chain (AWS_REGION, profiles); with an endpoint it defaults to us-east-1. */
  region: string | null;
  /** MinIO, R2 or another S3-compatible endpoint; addressed path-style. */
  endpoint: string | null;
  /** Null leaves credentials to the SDK's default chain (environment, profile, instance role). */
  credentials: { accessKeyId: string; secretAccessKey: string } | null;
  uploadTtlMs: number;
}

/**
 * Objects in an S3-compatible bucket. Clients upload with a presigned `PUT` that binds the key, the
 * content type and the exact length; the service reads and deletes with its own credentials.
 */
export class S3Storage implements StorageProvider {
  readonly kind = 's3';
  private readonly client: S3Client;
  private readonly base: string;

  constructor(private readonly options: S3StorageOptions) {
    const config: S3ClientConfig = {
      region: options.region ?? (options.endpoint ? 'us-east-1' : undefined),
      // Checksums only where S3 requires them: a presigned PUT must not carry the checksum of an empty body,
      // and MinIO and R2 differ in what they accept.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    };
    if (options.endpoint) {
      config.endpoint = options.endpoint;
      config.forcePathStyle = true;
    }
    if (options.credentials) config.credentials = options.credentials;
    this.client = new S3Client(config);
    this.base = `s3://${options.bucket}/`;
  }

  storagePath(key: StorageKey): string {
    return `${this.base}${key}`;
  }

  keyFromStoragePath(storagePath: unknown, scope: TenantScope): StorageKey {
    return keyFromStoragePath(storagePath, this.base, scope);
  }

  async createUpload(key: StorageKey, request: UploadRequest): Promise<UploadTarget> {
    const expiresIn = Math.ceil(this.options.uploadTtlMs / 1000);
    const issuedAt = Date.now();
    const url = await getSignedUrl(
      this.client,
      new PutObjectCommand({
        Bucket: this.options.bucket,
        Key: key,
        ContentType: request.mimeType,
        ContentLength: request.byteSize,
      }),
      // Content-Length is signed by default; Content-Type only when asked, and the upload must keep to it.
      { expiresIn, signableHeaders: new Set(['content-type']) },
    );
    return {
      url,
      method: 'PUT',
      headers: { 'content-type': request.mimeType },
      expires_at: new Date(issuedAt + expiresIn * 1000).toISOString(),
    };
  }

  async read(key: StorageKey, options: { maxBytes: number }): Promise<Buffer> {
    let response: GetObjectCommandOutput;
    try {
      response = await this.client.send(new GetObjectCommand({ Bucket: this.options.bucket, Key: key }));
    } catch (error) {
      if (error instanceof NoSuchKey || (error as { name?: string }).name === 'NoSuchKey') throw notFound();
      throw error;
    }
    const body = response.Body as (AsyncIterable<Uint8Array> & { destroy(): void }) | undefined;
    if (!body) return Buffer.alloc(0);
    if ((response.ContentLength ?? 0) > options.maxBytes) {
      body.destroy();
      throw tooLarge(response.ContentLength ?? null, options.maxBytes);
    }
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of body) {
      size += chunk.length;
      if (size > options.maxBytes) {
        body.destroy();
        throw tooLarge(null, options.maxBytes);
      }
      chunks.push(Buffer.from(chunk));
    }
    return Buffer.concat(chunks);
  }

  async delete(key: StorageKey): Promise<void> {
    await this.client.send(new DeleteObjectCommand({ Bucket: this.options.bucket, Key: key }));
  }

  close(): void {
    this.client.destroy();
  }
}
