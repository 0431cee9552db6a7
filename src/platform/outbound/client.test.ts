import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { type LookupFunction, OutboundClient, OutboundError } from './client.ts';

describe('outbound HTTP client', () => {
  let server: http.Server;
  let port: number;
  const hits: string[] = [];

  before(async () => {
    server = http.createServer((req, res) => {
      hits.push(req.url ?? '');
      if (req.url === '/redirect') {
        res.writeHead(301, { location: '/target' }).end();
      } else if (req.url === '/slow') {
        setTimeout(() => res.writeHead(200).end('late'), 800);
      } else if (req.url === '/big') {
        res.writeHead(200).end('y'.repeat(10_000));
      } else {
        res.writeHead(200, { 'content-type': 'text/plain' }).end(`hello ${req.method}`);
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  const client = (allowPrivate: boolean, resolve?: LookupFunction) =>
    new OutboundClient({ allowPrivate, timeoutMs: 400, userAgent: 'test-agent', resolve });

  const refusal = async (promise: Promise<unknown>) => {
    const error = await promise.then(
      () => null,
      (failure: unknown) => failure,
    );
    assert.ok(error instanceof OutboundError, `expected a refusal, got ${error}`);
    return error;
  };

  test('refuses loopback by IP literal, by IPv6 literal and by a name that resolves to it (localhost)', async () => {
    const guarded = client(false);
    const before = hits.length;
    for (const url of [
      `http://127.0.0.1:${port}/a`,
      `http://[::1]:${port}/b`,
      `http://localhost:${port}/c`,
    ]) {
      const error = await refusal(guarded.request({ url, method: 'POST', body: '{}' }));
      assert.equal(error.errorClass, 'blocked_address', url);
      assert.match(error.message, /loopback/);
    }
    assert.equal(hits.length, before, 'no request reached the server');
    await guarded.close();
  });

  test('checks the address DNS returns at connect time: a rebinding answer or an IPv4-mapped one is refused', async () => {
    for (const address of ['127.0.0.1', '::ffff:127.0.0.1', '169.254.169.254', '10.0.0.5']) {
      const family = address.includes(':') ? 6 : 4;
      const rebinding = client(false, (_host, _options, callback) => callback(null, [{ address, family }]));
      const error = await refusal(rebinding.request({ url: `http://public.example:${port}/` }));
      assert.equal(error.errorClass, 'blocked_address', address);
      await rebinding.close();
    }
    const mixed = client(false, (_host, _options, callback) =>
      callback(null, [
        { address: '93.184.216.34', family: 4 },
        { address: '127.0.0.1', family: 4 },
      ]),
    );
    assert.equal(
      (await refusal(mixed.request({ url: `http://mixed.example:${port}/` }))).errorClass,
      'blocked_address',
    );
    await mixed.close();
  });

  test('with private addresses allowed, requests go through; redirects are returned, not followed', async () => {
    const open = client(true);
    const ok = await open.request({ url: `http://localhost:${port}/hi`, method: 'POST', body: 'x' });
    assert.equal(ok.status, 200);
    assert.equal(ok.body.toString(), 'hello POST');
    const before = hits.length;
    const moved = await open.request({ url: `http://127.0.0.1:${port}/redirect` });
    assert.equal(moved.status, 301);
    assert.equal(moved.headers.location, '/target');
    assert.deepEqual(hits.slice(before), ['/redirect'], 'the target was never requested');
    await open.close();
  });

  test('times out, keeps only the first bytes of a body, and classifies network errors', async () => {
    const open = client(true);
    assert.equal(
      (await refusal(open.request({ url: `http://127.0.0.1:${port}/slow` }))).errorClass,
      'timeout',
    );
    const big = await open.request({ url: `http://127.0.0.1:${port}/big`, maxResponseBytes: 2048 });
    assert.equal(big.body.length, 2048);
    assert.equal(big.truncated, true);
    const closed = await refusal(open.request({ url: 'http://127.0.0.1:1/' }));
    assert.equal(closed.errorClass, 'network_error');
    assert.equal((await refusal(open.request({ url: 'file:///etc/passwd' }))).errorClass, 'invalid_url');
    await open.close();
  });

  test('no message names the address a hostname resolved to: refusals and network errors', async () => {
    for (const address of ['10.0.0.5', '169.254.169.254', 'fd00::7']) {
      const family = address.includes(':') ? 6 : 4;
      const internal = client(false, (_host, _options, callback) => callback(null, [{ address, family }]));
      const error = await refusal(internal.request({ url: `https://hooks.customer.example:${port}/x` }));
      assert.equal(error.errorClass, 'blocked_address');
      assert.match(error.message, /hooks\.customer\.example resolves to a/);
      assert.ok(!error.message.includes(address), error.message);
      await internal.close();
    }
    // Allowed, but nothing listens there: the refused connection's message loses the address.
    const closedPort = await new Promise<number>((resolve) => {
      const probe = http.createServer().listen(0, '127.0.0.1', () => {
        const { port: free } = probe.address() as AddressInfo;
        probe.close(() => resolve(free));
      });
    });
    const open = client(true, (_host, _options, callback) =>
      callback(null, [{ address: '127.0.0.1', family: 4 }]),
    );
    const refused = await refusal(open.request({ url: `http://internal.customer.example:${closedPort}/` }));
    assert.equal(refused.errorClass, 'network_error');
    assert.ok(!refused.message.includes('127.0.0.1'), refused.message);
    assert.match(refused.message, /ECONNREFUSED/);
    await open.close();
    // An address the user wrote in the URL is theirs: it stays.
    const literal = await refusal(client(false).request({ url: 'http://10.1.2.3/' }));
    assert.match(literal.message, /10\.1\.2\.3/);
  });
});
