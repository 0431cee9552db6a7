import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { buildTestApp, type TestApp } from '../helpers.ts';

describe('docs API rate limit: 120 requests per sliding minute per source IP', () => {
  let t: TestApp;

  before(async () => {
    t = await buildTestApp();
  });
  after(() => t.close());

  const get = (remoteAddress: string, headers: Record<string, string> = {}, url = '/v1/docs/products') =>
    t.app.inject({ method: 'GET', url, remoteAddress, headers });

  test('121 requests from one IP in a minute give exactly one 429, with the headers on every response', async () => {
    const statuses: number[] = [];
    for (let i = 1; i <= 121; i++) {
      // The site and every API route share the one budget.
      const url = ['/v1/docs/products', '/v1/docs/search?q=key', '/docs', '/v1/docs/pages'][i % 4];
      const response = await get('203.0.113.7', {}, url);
      statuses.push(response.statusCode);
      assert.equal(response.headers['x-ratelimit-limit'], '120', `request ${i}`);
      const remaining = Number(response.headers['x-ratelimit-remaining']);
      assert.equal(remaining, Math.max(0, 120 - i), `request ${i}`);
      const reset = Number(response.headers['x-ratelimit-reset']);
      assert.ok(reset >= 1 && reset <= 60, `request ${i}: reset ${reset}`);
      if (i === 121) {
        assert.equal(response.statusCode, 429);
        const body = response.json();
        assert.equal(body.error, 'rate_limited');
        assert.equal(typeof body.message, 'string');
        assert.equal(body.details.limit, 120);
        const retryAfter = Number(response.headers['retry-after']);
        assert.ok(retryAfter >= 1 && retryAfter <= 60, `Retry-After ${retryAfter}`);
        assert.equal(response.headers['access-control-allow-origin'], '*');
        assert.equal(response.headers['cache-control'], 'no-store');
        assert.ok(response.headers.etag);
      }
    }
    assert.equal(statuses.filter((status) => status === 429).length, 1);
    assert.equal(statuses.lastIndexOf(429), 120);

    // Another source has its own budget; an Authorization header changes nothing.
    assert.equal((await get('203.0.113.8', { authorization: 'Bearer whatever' })).statusCode, 200);
  });

  test('without TRUST_PROXY, X-Forwarded-For is ignored: one peer is one budget', async () => {
    for (let i = 0; i < 120; i++) {
      const response = await get('198.51.100.1', { 'x-forwarded-for': `192.0.2.${i}` });
      assert.equal(response.statusCode, 200, `request ${i + 1}`);
    }
    const over = await get('198.51.100.1', { 'x-forwarded-for': '192.0.2.250' });
    assert.equal(over.statusCode, 429);
  });
});

for (const trustProxy of ['1', '10.0.0.0/8']) {
  describe(`docs API rate limit behind a trusted proxy (TRUST_PROXY=${trustProxy})`, () => {
    let t: TestApp;

    before(async () => {
      t = await buildTestApp({ TRUST_PROXY: trustProxy, DOCS_RATE_LIMIT_PER_MINUTE: '3' });
    });
    after(() => t.close());

    /** Through the proxy at 10.0.0.1, which appends the address it saw to what the client sent. */
    const viaProxy = (client: string, claimed?: string) =>
      t.app.inject({
        method: 'GET',
        url: '/v1/docs/products',
        remoteAddress: '10.0.0.1',
        headers: { 'x-forwarded-for': claimed ? `${claimed}, ${client}` : client },
      });

    test('each client behind the proxy has its own budget; the limit is configurable', async () => {
      for (let i = 0; i < 3; i++) assert.equal((await viaProxy('192.0.2.10')).statusCode, 200);
      const over = await viaProxy('192.0.2.10');
      assert.equal(over.statusCode, 429);
      assert.equal(over.headers['x-ratelimit-limit'], '3');
      assert.equal((await viaProxy('192.0.2.11')).statusCode, 200);
    });

    test('a client cannot pick its own IP with X-Forwarded-For: only the proxy is believed', async () => {
      for (let i = 0; i < 3; i++)
        assert.equal((await viaProxy('192.0.2.20', `198.51.100.${i}`)).statusCode, 200);
      const over = await viaProxy('192.0.2.20', '198.51.100.99');
      assert.equal(over.statusCode, 429, 'a fresh X-Forwarded-For value is no fresh budget');
    });
  });
}
