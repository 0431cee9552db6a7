import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { type S3StandIn, startS3StandIn } from '../../../test/s3-stand-in.ts';
import { S3Storage } from './s3.ts';
import { newObjectKey, StoragePathError } from './storage-path.ts';
import { StorageObjectError } from './types.ts';

const scope = { orgId: randomUUID(), clientId: randomUUID() };

describe('s3 storage against an S3 stand-in that checks signatures', () => {
  let s3: S3StandIn;
  let storage: S3Storage;

  const storageWith = (overrides: Partial<ConstructorParameters<typeof S3Storage>[0]> = {}) =>
    new S3Storage({
      bucket: s3.bucket,
      region: null,
      endpoint: s3.endpoint,
      credentials: s3.credentials,
      uploadTtlMs: 60_000,
      ...overrides,
    });

  before(async () => {
    s3 = await startS3StandIn();
    storage = storageWith();
  });
  after(async () => {
    storage.close();
    await s3.close();
  });

  const put = (url: string, body: Uint8Array | string, headers: Record<string, string>) =>
    fetch(url, { method: 'PUT', headers, body: typeof body === 'string' ? body : new Uint8Array(body) });

  test('a presigned PUT works with a plain fetch; the service reads and deletes the object', async () => {
    const key = newObjectKey(scope, 'kb/1', 'handbook.pdf');
    const bytes = randomBytes(2048);
    const target = await storage.createUpload(key, { byteSize: bytes.length, mimeType: 'application/pdf' });
    const url = new URL(target.url);
    assert.equal(url.origin, s3.endpoint);
    assert.equal(url.pathname, `/${s3.bucket}/${key}`, 'path-style with an endpoint');
    for (const name of [
      'X-Amz-Algorithm',
      'X-Amz-Credential',
      'X-Amz-Date',
      'X-Amz-Expires',
      'X-Amz-SignedHeaders',
      'X-Amz-Signature',
    ])
      assert.ok(url.searchParams.has(name), name);
    assert.equal(url.searchParams.get('X-Amz-Expires'), '60');
    assert.ok(!url.searchParams.has('x-amz-checksum-crc32'), 'no checksum of an empty body is signed in');

    const response = await put(target.url, bytes, target.headers);
    assert.equal(response.status, 200, await response.clone().text());
    assert.deepEqual(s3.objects.get(key), { body: bytes, contentType: 'application/pdf' });
    assert.equal(s3.requests.at(-1)?.auth, 'presigned');

    assert.deepEqual(await storage.read(key, { maxBytes: 4096 }), bytes);
    assert.equal(s3.requests.at(-1)?.auth, 'header');
    assert.equal(storage.storagePath(key), `s3://${s3.bucket}/${key}`);
    assert.equal(storage.keyFromStoragePath(`s3://${s3.bucket}/${key}`, scope), key);

    await storage.delete(key);
    assert.equal(s3.objects.has(key), false);
    await assert.rejects(
      storage.read(key, { maxBytes: 4096 }),
      (error: unknown) => error instanceof StorageObjectError && error.reason === 'not_found',
    );
  });

  test('the presigned PUT binds the content type, the length and the key', async () => {
    const key = newObjectKey(scope, 'kb/1', 'notes.txt');
    const target = await storage.createUpload(key, { byteSize: 5, mimeType: 'text/plain' });
    const wrongType = await put(target.url, 'hello', { 'content-type': 'text/html' });
    assert.equal(wrongType.status, 403);
    assert.match(await wrongType.text(), /SignatureDoesNotMatch/);
    const wrongLength = await put(target.url, 'hello world', target.headers);
    assert.equal(wrongLength.status, 403);
    const moved = target.url.replace('notes.txt', 'other.txt');
    assert.equal((await put(moved, 'hello', target.headers)).status, 403);
    const tampered = target.url.replace(/X-Amz-Signature=[0-9a-f]{4}/, 'X-Amz-Signature=0000');
    assert.equal((await put(tampered, 'hello', target.headers)).status, 403);
    assert.equal(s3.objects.has(key), false);
    assert.equal((await put(target.url, 'hello', target.headers)).status, 200);
  });

  test('an expired presigned URL is refused', async () => {
    const key = newObjectKey(scope, 'kb/1', 'late.txt');
    const target = await storageWith({ uploadTtlMs: 1000 }).createUpload(key, {
      byteSize: 5,
      mimeType: 'text/plain',
    });
    await new Promise((resolve) => setTimeout(resolve, Date.parse(target.expires_at) - Date.now() + 1200));
    const response = await put(target.url, 'hello', target.headers);
    assert.equal(response.status, 403);
    assert.match(await response.text(), /Request has expired/);
    assert.equal(s3.objects.has(key), false);
  });

  test('read stops at the byte cap', async () => {
    const key = newObjectKey(scope, 'kb/1', 'big.bin');
    s3.objects.set(key, { body: randomBytes(5000), contentType: 'application/octet-stream' });
    await assert.rejects(storage.read(key, { maxBytes: 4999 }), (error: unknown) => {
      assert.ok(error instanceof StorageObjectError);
      assert.equal(error.reason, 'too_large');
      assert.match(error.message, /5000 bytes, over the limit of 4999 bytes/);
      return true;
    });
  });

  test('wrong credentials are an error of the provider, not a missing object', async () => {
    const wrong = storageWith({
      credentials: { accessKeyId: s3.credentials.accessKeyId, secretAccessKey: 'wrong' },
    });
    const key = newObjectKey(scope, 'kb/1', 'x.txt');
    s3.objects.set(key, { body: Buffer.from('x'), contentType: 'text/plain' });
    await assert.rejects(
      wrong.read(key, { maxBytes: 100 }),
      (error: unknown) =>
        !(error instanceof StorageObjectError) && (error as Error).name === 'SignatureDoesNotMatch',
    );
    wrong.close();
  });

  test('paths of another bucket or another client are refused', () => {
    const key = newObjectKey(scope, 'kb/1', 'a.txt');
    assert.throws(() => storage.keyFromStoragePath(`s3://other/${key}`, scope), StoragePathError);
    assert.throws(() => storage.keyFromStoragePath(`local://${key}`, scope), StoragePathError);
    assert.throws(
      () => storage.keyFromStoragePath(`s3://${s3.bucket}/${key}`, { ...scope, clientId: randomUUID() }),
      StoragePathError,
    );
  });
});
