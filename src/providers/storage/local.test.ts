import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import Fastify, { type FastifyInstance } from 'fastify';
import { freePort } from '../../platform/db/embedded.ts';
import { installErrorHandling } from '../../platform/http/errors.ts';
import { LocalStorage } from './local.ts';
import { newObjectKey, StoragePathError } from './storage-path.ts';
import { StorageObjectError } from './types.ts';
import { localUploadRoutes } from './upload-routes.ts';

const scope = { orgId: randomUUID(), clientId: randomUUID() };

describe('local storage and its upload URLs', () => {
  let root: string;
  let app: FastifyInstance;
  let baseUrl: string;
  let storage: LocalStorage;

  // The key 9 is the one before a rotation: it signs no more, but what it signed still verifies.
  const storageWith = (uploadTtlMs: number, signingKeys = [Buffer.alloc(32, 7), Buffer.alloc(32, 9)]) =>
    new LocalStorage({ root, signingKeys, publicBaseUrl: `${baseUrl}/`, uploadTtlMs });

  before(async () => {
    root = await fs.mkdtemp(path.join(os.tmpdir(), 'storage-'));
    const port = await freePort();
    baseUrl = `http://127.0.0.1:${port}`;
    storage = storageWith(60_000);
    app = Fastify({ logger: { level: 'error' } });
    installErrorHandling(app);
    await app.register(localUploadRoutes, { storage });
    app.post('/json', async (request) => ({ received: request.body }));
    await app.listen({ port, host: '127.0.0.1' });
  });
  after(async () => {
    await app.close();
    await fs.rm(root, { recursive: true, force: true });
  });

  const put = (url: string, body: Uint8Array | string, contentType: string) =>
    fetch(url, {
      method: 'PUT',
      headers: { 'content-type': contentType },
      body: typeof body === 'string' ? body : new Uint8Array(body),
    });

  test('a PUT to the upload URL stores the bytes at the key; read gives them back; delete removes them', async () => {
    const key = newObjectKey(scope, 'kb/123', 'Quarterly Report (final).pdf');
    // Larger than Fastify's 1 MB body limit: the upload is streamed, not parsed.
    const bytes = randomBytes(3 * 1024 * 1024);
    const target = await storage.createUpload(key, { byteSize: bytes.length, mimeType: 'application/pdf' });
    assert.equal(target.method, 'PUT');
    assert.ok(target.url.startsWith(`${baseUrl}/uploads/${key}?`), target.url);
    assert.deepEqual(target.headers, { 'content-type': 'application/pdf' });
    assert.ok(Date.parse(target.expires_at) > Date.now() + 50_000);

    const response = await put(target.url, bytes, target.headers['content-type']);
    assert.equal(response.status, 200, await response.clone().text());
    assert.deepEqual(await storage.read(key, { maxBytes: bytes.length }), bytes);
    assert.match(storage.storagePath(key), /^local:\/\/orgs\/.+\/quarterly-report-final\.pdf$/i);
    assert.equal(storage.keyFromStoragePath(storage.storagePath(key), scope), key);

    await assert.rejects(storage.read(key, { maxBytes: bytes.length - 1 }), (error: unknown) => {
      assert.ok(error instanceof StorageObjectError);
      assert.equal(error.reason, 'too_large');
      return true;
    });
    await storage.delete(key);
    await storage.delete(key);
    await assert.rejects(
      storage.read(key, { maxBytes: bytes.length }),
      (error: unknown) => error instanceof StorageObjectError && error.reason === 'not_found',
    );
  });

  test('an expired token is refused with 403 and nothing is written', async () => {
    const key = newObjectKey(scope, 'kb/1', 'a.txt');
    const target = await storageWith(1000).createUpload(key, { byteSize: 5, mimeType: 'text/plain' });
    await new Promise((resolve) => setTimeout(resolve, Date.parse(target.expires_at) - Date.now() + 200));
    const response = await put(target.url, 'hello', 'text/plain');
    assert.equal(response.status, 403);
    assert.deepEqual(await response.json(), {
      error: 'forbidden',
      message: 'This upload URL has expired; ask for a new one.',
    });
    await assert.rejects(storage.read(key, { maxBytes: 100 }), StorageObjectError);
  });

  test('a tampered URL, one signed under another key, or a signature moved to another key is refused', async () => {
    const mine = newObjectKey(scope, 'kb/1', 'mine.txt');
    const other = newObjectKey({ orgId: randomUUID(), clientId: randomUUID() }, 'kb/1', 'victim.txt');
    const good = new URL((await storage.createUpload(mine, { byteSize: 5, mimeType: 'text/plain' })).url);
    const foreign = await storageWith(60_000, [Buffer.alloc(32, 8)]).createUpload(mine, {
      byteSize: 5,
      mimeType: 'text/plain',
    });
    const altered = (name: string, value: string | null) => {
      const url = new URL(good);
      if (value === null) url.searchParams.delete(name);
      else url.searchParams.set(name, value);
      return url.toString();
    };
    for (const url of [
      `${baseUrl}/uploads/${other}${good.search}`,
      `${baseUrl}/uploads/${mine.replace('mine.txt', 'other.txt')}${good.search}`,
      `${baseUrl}/uploads/${mine}/../../x${good.search}`,
      altered('size', '10000000'),
      altered('expires', String(Number(good.searchParams.get('expires')) + 3600)),
      altered('type', 'text/html'),
      altered('signature', `${good.searchParams.get('signature')?.slice(0, -2)}AA`),
      altered('signature', null),
      foreign.url,
    ]) {
      const response = await put(url, 'hello', new URL(url).searchParams.get('type') ?? 'text/plain');
      assert.equal(response.status, 403, url);
      assert.equal((await response.json()).error, 'forbidden');
    }
    await assert.rejects(storage.read(other, { maxBytes: 100 }), StorageObjectError);
    await assert.rejects(storage.read(mine, { maxBytes: 100 }), StorageObjectError);
  });

  test('an upload URL signed under the previous key of a rotation is still accepted', async () => {
    const key = newObjectKey(scope, 'kb/1', 'before-rotation.txt');
    const target = await storageWith(60_000, [Buffer.alloc(32, 9)]).createUpload(key, {
      byteSize: 5,
      mimeType: 'text/plain',
    });
    const response = await put(target.url, 'hello', 'text/plain');
    assert.equal(response.status, 200, await response.clone().text());
    assert.deepEqual(await storage.read(key, { maxBytes: 100 }), Buffer.from('hello'));
  });

  test('a body past the declared size is refused with 413, by its Content-Length or while streaming', async () => {
    const key = newObjectKey(scope, 'kb/1', 'big.txt');
    const target = await storage.createUpload(key, { byteSize: 10, mimeType: 'text/plain' });
    const declared = await put(target.url, 'x'.repeat(11), 'text/plain');
    assert.equal(declared.status, 413);
    assert.equal((await declared.json()).error, 'payload_too_large');

    // Chunked: no Content-Length to check first, so the limit holds while the bytes arrive.
    const streamed = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const request = http.request(target.url, { method: 'PUT', headers: { 'content-type': 'text/plain' } });
      request.on('response', (response) => {
        let body = '';
        response.on('data', (chunk) => {
          body += chunk;
        });
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
      });
      request.on('error', reject);
      request.write('x'.repeat(8));
      request.end('y'.repeat(8));
    });
    assert.equal(streamed.status, 413);
    assert.equal(JSON.parse(streamed.body).error, 'payload_too_large');
    await assert.rejects(storage.read(key, { maxBytes: 100 }), StorageObjectError);
    const leftovers = await fs.readdir(path.join(root, path.dirname(key)));
    assert.deepEqual(leftovers, [], 'no partial file is left behind');
  });

  test('a short body or another content type is refused', async () => {
    const key = newObjectKey(scope, 'kb/1', 'short.txt');
    const target = await storage.createUpload(key, { byteSize: 10, mimeType: 'text/plain' });
    const short = await put(target.url, 'abc', 'text/plain');
    assert.equal(short.status, 400);
    assert.match((await short.json()).message, /3 bytes; this URL was issued for 10/);
    const wrongType = await put(target.url, '0123456789', 'text/html');
    assert.equal(wrongType.status, 415);
    const untyped = await fetch(target.url, { method: 'PUT', body: new Uint8Array(10) });
    assert.equal(untyped.status, 415);
    await assert.rejects(storage.read(key, { maxBytes: 100 }), StorageObjectError);
    assert.equal((await put(target.url, '0123456789', 'text/plain; charset=utf-8')).status, 200);
  });

  test('the upload route leaves the JSON body parsing of the rest of the app alone', async () => {
    const response = await fetch(`${baseUrl}/json`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"a":1}',
    });
    assert.deepEqual(await response.json(), { received: { a: 1 } });
  });

  test('a storage path of another org or client, or of another storage, is refused before anything is read', () => {
    const key = newObjectKey(scope, 'kb/1', 'a.txt');
    const path = storage.storagePath(key);
    assert.throws(
      () => storage.keyFromStoragePath(path, { ...scope, orgId: randomUUID() }),
      StoragePathError,
    );
    assert.throws(
      () => storage.keyFromStoragePath(path, { ...scope, clientId: randomUUID() }),
      StoragePathError,
    );
    assert.throws(() => storage.keyFromStoragePath(`s3://bucket/${key}`, scope), StoragePathError);
  });
});
