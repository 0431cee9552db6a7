import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { buildTestApp, createTenant, type TestApp } from '../helpers.ts';

describe('per-key rate limit', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp();
  });
  after(() => t.close());

  test('the 61st request in a minute is 429 rate_limited with the headers', async () => {
    const tenant = await createTenant(t.app, { rateLimit: 60 });
    for (let i = 1; i <= 60; i++) {
      const response = await t.app.inject({ method: 'GET', url: '/v1/me', headers: tenant.agency });
      assert.equal(response.statusCode, 200, `request ${i}`);
      assert.equal(response.headers['x-ratelimit-limit'], '60');
      assert.equal(response.headers['x-ratelimit-remaining'], String(60 - i));
      assert.ok(Number(response.headers['x-ratelimit-reset']) > 0);
    }
    const limited = await t.app.inject({ method: 'GET', url: '/v1/me', headers: tenant.agency });
    assert.equal(limited.statusCode, 429);
    assert.equal(limited.json().error, 'rate_limited');
    assert.ok(Number(limited.headers['retry-after']) > 0);
    assert.equal(limited.headers['x-ratelimit-limit'], '60');
    assert.equal(limited.headers['x-ratelimit-remaining'], '0');

    // The limit is per key: the client key of the same org is unaffected.
    const other = await t.app.inject({ method: 'GET', url: '/v1/me', headers: tenant.client });
    assert.equal(other.statusCode, 200);
  });

  test('errors of authenticated requests carry the headers too', async () => {
    const tenant = await createTenant(t.app, { rateLimit: 60 });
    const response = await t.app.inject({ method: 'GET', url: '/v1/events?limit=0', headers: tenant.agency });
    assert.equal(response.statusCode, 400);
    assert.equal(response.headers['x-ratelimit-limit'], '60');
  });
});
