import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, test } from 'node:test';
import { loadConfig } from '../../config.ts';
import { Keyring } from '../../platform/crypto.ts';
import { createStorageProvider, newObjectKey } from './index.ts';

const secrets = { encryptionKey: new Keyring([Buffer.alloc(32, 1)]) };
const scope = { orgId: randomUUID(), clientId: randomUUID() };

describe('createStorageProvider', () => {
  test('local by default: files under DATA_DIR/storage, upload URLs on the public base URL', async () => {
    const storage = await createStorageProvider(
      loadConfig({ DATA_DIR: '/tmp/x' }),
      secrets,
      'https://api.example.com',
    );
    assert.equal(storage.kind, 'local');
    const key = newObjectKey(scope, 'kb/1', 'a.md');
    assert.equal(storage.storagePath(key), `local://${key}`);
    const target = await storage.createUpload(key, { byteSize: 3, mimeType: 'text/markdown' });
    assert.ok(target.url.startsWith(`https://api.example.com/uploads/${key}?`), target.url);
    assert.ok(!target.url.includes(secrets.encryptionKey.current.toString('base64url')));
  });

  test('s3 with a bucket, an endpoint and static credentials', async () => {
    const storage = await createStorageProvider(
      loadConfig({
        STORAGE_PROVIDER: 's3',
        S3_BUCKET: 'kb',
        S3_ENDPOINT: 'http://127.0.0.1:9000',
        S3_ACCESS_KEY_ID: 'a',
        S3_SECRET_ACCESS_KEY: 'b',
      }),
      secrets,
      'https://api.example.com',
    );
    assert.equal(storage.kind, 's3');
    assert.equal(storage.storagePath(newObjectKey(scope, 'kb/1', 'a.md')).startsWith('s3://kb/orgs/'), true);
  });

  test('configuration is refused when it cannot work', () => {
    assert.throws(() => loadConfig({ STORAGE_PROVIDER: 's3' }), /S3_BUCKET is required/);
    assert.throws(() => loadConfig({ STORAGE_PROVIDER: 'gcs' }), /STORAGE_PROVIDER must be one of local, s3/);
    assert.throws(() => loadConfig({ S3_ACCESS_KEY_ID: 'a' }), /set together/);
    assert.throws(
      () => loadConfig({ LLM_PROVIDER: 'claude' }),
      /LLM_PROVIDER must be one of builtin, openai/,
    );
    const defaults = loadConfig({});
    assert.equal(defaults.llmProvider, 'builtin');
    assert.equal(defaults.llmTimeoutMs, 30_000);
    assert.equal(defaults.kbFetchMaxBytes, 10 * 1024 * 1024);
    assert.equal(defaults.uploadUrlTtlMs, 15 * 60_000);
  });
});
