import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { DocumentFetchError, type DocumentFetchOptions, fetchDocument } from './document-fetch.ts';

function listen(server: http.Server, host: string): Promise<number> {
  return new Promise((resolve) =>
    server.listen(0, host, () => resolve((server.address() as AddressInfo).port)),
  );
}

async function close(server: http.Server): Promise<void> {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
}

describe('fetchDocument', () => {
  const hits: string[] = [];
  const internalHits: string[] = [];
  let port: number;
  let internalPort: number;
  // The site, on 127.0.0.1, which the guarded tests exempt; an "internal service" on 127.0.0.2, which they do not.
  const site = http.createServer((req, res) => {
    const url = req.url ?? '/';
    hits.push(url);
    const chain = /^\/chain\/(\d+)$/.exec(url);
    if (chain) {
      const left = Number(chain[1]);
      if (left > 0) return res.writeHead(302, { location: `/chain/${left - 1}` }).end();
      return res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end('<p>arrived</p>');
    }
    if (url === '/to-internal')
      return res.writeHead(301, { location: `http://127.0.0.2:${internalPort}/admin` }).end();
    if (url === '/to-localhost')
      return res.writeHead(307, { location: `http://localhost:${port}/chain/0` }).end();
    if (url === '/to-rebinding')
      return res.writeHead(302, { location: `http://docs.rebinding.test:${port}/chain/0` }).end();
    if (url === '/to-file') return res.writeHead(302, { location: 'file:///etc/passwd' }).end();
    if (url === '/no-location') return res.writeHead(302).end();
    if (url === '/big') return res.writeHead(200, { 'content-type': 'text/plain' }).end('z'.repeat(300_000));
    if (url === '/exact') return res.writeHead(200, { 'content-type': 'text/plain' }).end('z'.repeat(1000));
    if (url === '/hang') return;
    if (url === '/slow-chain') return setTimeout(() => res.writeHead(302, { location: '/hang' }).end(), 150);
    res.writeHead(404, { 'content-type': 'text/html' }).end('<h1>Not here</h1>');
  });
  const internal = http.createServer((req, res) => {
    internalHits.push(req.url ?? '');
    res.writeHead(200).end('internal secrets');
  });

  before(async () => {
    port = await listen(site, '127.0.0.1');
    internalPort = await listen(internal, '127.0.0.2');
  });
  after(async () => {
    await close(site);
    await close(internal);
  });

  const guarded: DocumentFetchOptions = {
    maxBytes: 100_000,
    timeoutMs: 5000,
    allowPrivate: false,
    exemptAddresses: ['127.0.0.1'],
  };
  const at = (path: string) => `http://127.0.0.1:${port}${path}`;

  const failure = async (promise: Promise<unknown>, reason: string) => {
    const error = await promise.then(
      () => null,
      (thrown: unknown) => thrown,
    );
    assert.ok(error instanceof DocumentFetchError, `expected DocumentFetchError, got ${error}`);
    assert.equal(error.reason, reason, error.message);
    return error;
  };

  test('follows a chain of 5 redirects to the document', async () => {
    const document = await fetchDocument(at('/chain/5'), guarded);
    assert.equal(document.finalUrl, at('/chain/0'));
    assert.equal(document.status, 200);
    assert.equal(document.contentType, 'text/html; charset=utf-8');
    assert.equal(document.body.toString(), '<p>arrived</p>');
  });

  test('refuses a sixth redirect without following it', async () => {
    const before = hits.length;
    const error = await failure(fetchDocument(at('/chain/6'), guarded), 'too_many_redirects');
    assert.match(error.message, /More than 5 redirects/);
    assert.deepEqual(hits.slice(before), [
      '/chain/6',
      '/chain/5',
      '/chain/4',
      '/chain/3',
      '/chain/2',
      '/chain/1',
    ]);
  });

  test('with the guard on, a redirect to a private address is refused and never reached', async () => {
    const error = await failure(fetchDocument(at('/to-internal'), guarded), 'blocked_address');
    assert.match(error.message, /127\.0\.0\.2.*loopback/);
    await failure(fetchDocument(at('/to-localhost'), guarded), 'blocked_address');
    // A name whose DNS answer is private is refused on the answer, at connect time.
    const rebinding = await failure(
      fetchDocument(at('/to-rebinding'), {
        ...guarded,
        resolve: (hostname, _options, callback) =>
          callback(null, [
            { address: hostname === 'docs.rebinding.test' ? '127.0.0.2' : '127.0.0.1', family: 4 },
          ]),
      }),
      'blocked_address',
    );
    // The host is named; the address it resolved to is not (stored messages never map the network).
    assert.match(rebinding.message, /docs\.rebinding\.test resolves to a loopback address/);
    assert.ok(!rebinding.message.includes('127.0.0.2'), rebinding.message);
    assert.deepEqual(internalHits, []);
  });

  test('with OUTBOUND_ALLOW_PRIVATE the same redirect is followed', async () => {
    const document = await fetchDocument(at('/to-internal'), {
      maxBytes: 1000,
      timeoutMs: 5000,
      allowPrivate: true,
    });
    assert.equal(document.body.toString(), 'internal secrets');
    assert.deepEqual(internalHits, ['/admin']);
  });

  test('with the guard on and no exemption, the private site itself is refused', async () => {
    await failure(fetchDocument(at('/chain/0'), { ...guarded, exemptAddresses: [] }), 'blocked_address');
  });

  test('refuses schemes other than http(s), also as a redirect target, and URLs with credentials', async () => {
    await failure(fetchDocument('ftp://example.com/file.pdf', guarded), 'invalid_url');
    const file = await failure(fetchDocument(at('/to-file'), guarded), 'invalid_url');
    assert.match(file.message, /not file:/);
    await failure(fetchDocument(`http://user:pass@127.0.0.1:${port}/chain/0`, guarded), 'invalid_url');
    await failure(fetchDocument('not a url', guarded), 'invalid_url');
    await failure(fetchDocument(at('/no-location'), guarded), 'http_status');
  });

  test('stops at maxBytes with a clear error; a body of exactly maxBytes passes', async () => {
    const error = await failure(fetchDocument(at('/big'), { ...guarded, maxBytes: 1000 }), 'too_large');
    assert.equal(error.message, 'The document is larger than the limit of 1000 bytes.');
    assert.equal((await fetchDocument(at('/exact'), { ...guarded, maxBytes: 1000 })).body.length, 1000);
  });

  test('a server that never answers is a time-out, and the time-out covers the whole redirect chain', async () => {
    const started = Date.now();
    const error = await failure(fetchDocument(at('/hang'), { ...guarded, timeoutMs: 300 }), 'timeout');
    assert.equal(error.message, 'No complete answer within 300 ms.');
    await failure(fetchDocument(at('/slow-chain'), { ...guarded, timeoutMs: 400 }), 'timeout');
    assert.ok(Date.now() - started < 10_000);
  });

  test('a 404 is an error naming the URL and the status', async () => {
    const error = await failure(fetchDocument(at('/missing'), guarded), 'http_status');
    assert.equal(error.status, 404);
    assert.equal(error.message, `${at('/missing')} answered HTTP 404.`);
  });
});
