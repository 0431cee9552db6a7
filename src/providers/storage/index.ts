import path from 'node:path';
import type { Config } from '../../config.ts';
import type { Secrets } from '../../platform/secrets.ts';
import { LocalStorage } from './local.ts';
import type { S3Storage } from './s3.ts';

export type { StorageKey } from './storage-path.ts';
export { newObjectKey, StoragePathError } from './storage-path.ts';
export type { StorageProvider, UploadTarget } from './types.ts';
export { StorageObjectError } from './types.ts';

type StorageConfig = Pick<
  Config,
  | 'storageProvider'
  | 'dataDir'
  | 'uploadUrlTtlMs'
  | 's3Bucket'
  | 's3Region'
  | 's3Endpoint'
  | 's3AccessKeyId'
  | 's3SecretAccessKey'
>;

/**
 * The configured object storage. `publicBaseUrl` is where this service is reached from outside: the
 * local storage's upload URLs point at it.
 */
export async function createStorageProvider(
  config: StorageConfig,
  secrets: Pick<Secrets, 'encryptionKey'>,
  publicBaseUrl: string,
): Promise<LocalStorage | S3Storage> {
  if (config.storageProvider === 'local')
    return new LocalStorage({
      root: path.join(config.dataDir, 'storage'),
      signingKeys: secrets.encryptionKey.derive('upload-urls'),
      publicBaseUrl,
      uploadTtlMs: config.uploadUrlTtlMs,
    });
  const { S3Storage } = await import('./s3.ts');
  return new S3Storage({
    bucket: config.s3Bucket as string,
    region: config.s3Region,
    endpoint: config.s3Endpoint,
    credentials:
      config.s3AccessKeyId && config.s3SecretAccessKey
        ? { accessKeyId: config.s3AccessKeyId, secretAccessKey: config.s3SecretAccessKey }
        : null,
    uploadTtlMs: config.uploadUrlTtlMs,
  });
}
