import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import pino from 'pino';
import { connectRateLimitStore } from '../../src/platform/http/rate-limit.ts';
import { buildTestApp, createTenant, eventually } from '../helpers.ts';
import { redisServerAvailable, startRedisServer } from '../redis-server.ts';

describe('Redis configured but down: said in the log and in /readyz, never silently', {
  skip: !redisServerAvailable() && 'no redis-server',
}, () => {
  let server: ChildProcess;
  let redisUrl: string;

  before(async () => {
    const started = await startRedisServer();
    server = started.process;
    redisUrl = started.url;
    await eventually(async () => {
      const probe = await connectRateLimitStore(
        { redisUrl, rateLimitFailOpen: true },
        pino({ level: 'silent' }),
      );
      const up = probe?.status === 'ready';
      probe?.disconnect();
      return up;
    });
  });
  after(() => {
    server.kill('SIGKILL');
  });

  test('fails open by default, and says so; with RATE_LIMIT_FAIL_OPEN=false limited requests are 503', async () => {
    const lines: string[] = [];
    const log = pino(
      { level: 'info' },
      new Writable({
        write(chunk, _encoding, done) {
          lines.push(String(chunk));
          done();
        },
      }),
    );
    const watched = await connectRateLimitStore({ redisUrl, rateLimitFailOpen: true }, log);
    const open = await buildTestApp({ REDIS_URL: redisUrl });
    const closed = await buildTestApp({ REDIS_URL: redisUrl, RATE_LIMIT_FAIL_OPEN: 'false' });
    try {
      const tenant = await createTenant(open.app);
      const closedTenant = await createTenant(closed.app);
      const me = (app: typeof open.app, headers = tenant.agency) =>
        app.inject({ method: 'GET', url: '/v1/me', headers });
      const ready = async (app: typeof open.app) => app.inject({ method: 'GET', url: '/readyz' });
      assert.equal((await me(open.app)).headers['x-ratelimit-limit'], '100000');
      assert.deepEqual((await ready(open.app)).json().rate_limits, {
        store: 'redis',
        reachable: true,
        enforced: true,
      });

      server.kill('SIGKILL');
      await eventually(async () => (await ready(open.app)).json().rate_limits.reachable === false);

      const limitsOff = await ready(open.app);
      assert.equal(
        limitsOff.statusCode,
        200,
        `unenforced limits do not take the API out of the load balancer: ${limitsOff.body}`,
      );
      assert.deepEqual(limitsOff.json().rate_limits, { store: 'redis', reachable: false, enforced: false });
      assert.equal(limitsOff.json().checks.rate_limits, 'not_enforced');
      assert.equal((await me(open.app)).statusCode, 200);

      const refused = await me(closed.app, closedTenant.agency);
      assert.equal(refused.statusCode, 503);
      assert.equal(refused.json().error, 'service_unavailable');
      assert.ok(Number(refused.headers['retry-after']) >= 1);
      const notReady = await ready(closed.app);
      assert.equal(notReady.statusCode, 503);
      assert.equal(notReady.json().checks.rate_limits, 'redis_unreachable');

      await eventually(async () => lines.some((line) => line.includes('rate limits are NOT enforced')));
    } finally {
      watched?.disconnect();
      await open.close();
      await closed.close();
    }
  });
});
