/**
 * Failed authentication is throttled per address (issue 17): well-formed unknown keys were answered
 * 401 for ever, as fast as a guesser could send them.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { buildTestApp, createTenant, type TestApp, type TestTenant } from '../helpers.ts';

describe('per-address limit on failed authentication', () => {
  let t: TestApp;
  let tenant: TestTenant;
  before(async () => {
    t = await buildTestApp({ AUTH_FAILURES_PER_MINUTE: '5' });
    tenant = await createTenant(t.app);
  });
  after(() => t.close());

  const get = (authorization: string, remoteAddress: string) =>
    t.app.inject({ method: 'GET', url: '/v1/me', headers: { authorization }, remoteAddress });
  /** A key of the real shape that no org holds. */
  const guess = (i: number) => {
    const key = tenant.clientKey;
    return `Bearer ${key.slice(0, -4)}${String(i).padStart(4, 'Z').slice(-4)}`;
  };

  test('the failures past the limit are 429 with Retry-After, for every key, from that address only', async () => {
    for (let i = 0; i < 5; i++) {
      const answer = await get(guess(i), '203.0.113.7');
      assert.equal(answer.statusCode, 401, answer.body);
      assert.equal(answer.json().error, 'unauthorized');
    }
    const throttled = await get(guess(99), '203.0.113.7');
    assert.equal(throttled.statusCode, 429);
    assert.equal(throttled.json().error, 'rate_limited');
    assert.deepEqual(Object.keys(throttled.json()).sort(), ['details', 'error', 'message']);
    const retryAfter = Number(throttled.headers['retry-after']);
    assert.ok(retryAfter >= 1 && retryAfter <= 60, String(retryAfter));
    // A real key from the throttled address is refused too: an answer would tell a guess from a key.
    assert.equal((await get(`Bearer ${tenant.clientKey}`, '203.0.113.7')).statusCode, 429);
    // Other addresses are not affected.
    assert.equal((await get(`Bearer ${tenant.clientKey}`, '198.51.100.1')).statusCode, 200);
    assert.equal((await get(guess(1), '198.51.100.1')).statusCode, 401);
  });

  test('successful requests do not count', async () => {
    for (let i = 0; i < 20; i++)
      assert.equal((await get(`Bearer ${tenant.clientKey}`, '192.0.2.50')).statusCode, 200);
  });
});
