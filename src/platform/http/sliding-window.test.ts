import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { after, before, describe, test } from 'node:test';
import type { FastifyRateLimitStore } from '@fastify/rate-limit';
import { Redis } from 'ioredis';
import { redisServerAvailable, startRedisServer } from '../../../test/redis-server.ts';
import { slidingWindowStore, type WindowState } from './sliding-window.ts';

const MINUTE = 60_000;

function hit(store: FastifyRateLimitStore, key: string, max: number) {
  return new Promise<WindowState>((resolve, reject) =>
    store.incr(key, (error, result) => (error ? reject(error) : resolve(result!)), MINUTE, max),
  );
}

function peek(store: any, key: string, max: number) {
  return new Promise<WindowState>((resolve, reject) =>
    store.read(
      key,
      (error: Error | null, result?: WindowState) => (error ? reject(error) : resolve(result!)),
      MINUTE,
      max,
    ),
  );
}

describe('sliding-window rate-limit store (in process)', () => {
  test('the window slides: a burst at the end of one minute still counts at the start of the next', async () => {
    let now = 1_000_000_020_000; // 20 s into a minute: a fixed window would reset 40 s later.
    const Store = slidingWindowStore(null, 'test:', () => now);
    const store = new Store({});

    for (let i = 1; i <= 60; i++) assert.equal((await hit(store, 'ip', 120)).current, i);
    now += 45_000;
    for (let i = 61; i <= 120; i++) assert.equal((await hit(store, 'ip', 120)).current, i);
    const refused = await hit(store, 'ip', 120);
    assert.ok(refused.current > 120, 'the 121st request within a minute is refused');
    // The first 60 leave the window 59-60 s after they were made, that is 14-15 s from now.
    assert.ok(refused.ttl > 14_000 && refused.ttl <= 15_000, `ttl ${refused.ttl}`);

    now += 15_000; // 60 s after the first burst, 15 s after the second.
    for (let i = 0; i < 60; i++) assert.ok((await hit(store, 'ip', 120)).current <= 120, `request ${i}`);
    const again = await hit(store, 'ip', 120);
    assert.ok(again.current > 120, 'the second burst still counts: no fixed-window reset');
    assert.ok(again.ttl > 44_000 && again.ttl <= 45_000, `ttl ${again.ttl}`);
  });

  test('the time to wait never exceeds the window, wherever in its second a burst falls', async () => {
    for (const offset of [0, 1, 500, 999]) {
      let now = 7_000_000_000_000 + offset;
      const Store = slidingWindowStore(null, 'test:', () => now);
      const store = new Store({});
      for (let i = 0; i < 3; i++) await hit(store, 'ip', 3);
      const refused = await hit(store, 'ip', 3);
      assert.ok(refused.current > 3);
      assert.ok(refused.ttl > 0 && refused.ttl <= MINUTE, `offset ${offset}: ttl ${refused.ttl}`);
      now += refused.ttl;
      assert.equal(
        (await hit(store, 'ip', 3)).current,
        1,
        `offset ${offset}: accepted once the wait is over`,
      );
    }
  });

  test('refused requests are not counted, keys are independent, read does not count', async () => {
    let now = 5_000_000_000_000;
    const Store = slidingWindowStore(null, 'test:', () => now);
    const store = new Store({});
    for (let i = 0; i < 3; i++) await hit(store, 'a', 3);
    for (let i = 0; i < 10; i++) assert.equal((await hit(store, 'a', 3)).current, 4);
    assert.equal((await hit(store, 'b', 3)).current, 1);
    assert.equal((await peek(store, 'b', 3)).current, 1);
    assert.equal((await peek(store, 'b', 3)).current, 1);
    assert.deepEqual(await peek(store, 'c', 3), { current: 0, ttl: 0 });
    now += 61_000;
    assert.equal((await hit(store, 'a', 3)).current, 1, 'a full window later the budget is whole again');
  });
});

describe('sliding-window rate-limit store (Redis)', {
  skip: !redisServerAvailable() && 'no redis-server',
}, () => {
  let server: ChildProcess;
  let redis: Redis;

  before(async () => {
    const started = await startRedisServer();
    server = started.process;
    const { port } = started;
    redis = new Redis({ port, host: '127.0.0.1', lazyConnect: true, retryStrategy: () => 50 });
    redis.on('error', () => {}); // refused connections while the server starts
    for (let attempt = 0; attempt < 100; attempt++) {
      try {
        await redis.connect();
        break;
      } catch {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
  });
  after(async () => {
    redis.disconnect();
    server.kill('SIGTERM');
  });

  test('counts are shared by every store on the same Redis, refused requests are not counted', async () => {
    const Store = slidingWindowStore(redis, 'rl:test:');
    const [one, two] = [new Store({}), new Store({})];
    // The first counted hit leaves one window after the start of its bucket (1 s of 60): 59-60 s after
    // it, less what has passed since; under load, that may be more than a second.
    const started = Date.now();
    const inWindow = (ttl: number) => ttl > 59_000 - (Date.now() - started) && ttl <= 60_000;
    assert.equal((await hit(one, 'ip', 3)).current, 1);
    assert.equal((await hit(two, 'ip', 3)).current, 2);
    const third = await hit(one, 'ip', 3);
    assert.equal(third.current, 3);
    assert.ok(inWindow(third.ttl), `ttl ${third.ttl}`);
    for (let i = 0; i < 5; i++) {
      const refused = await hit(two, 'ip', 3);
      assert.equal(refused.current, 4);
      assert.ok(inWindow(refused.ttl), `ttl ${refused.ttl}`);
    }
    assert.equal((await peek(one, 'ip', 3)).current, 3);
    assert.deepEqual(await peek(one, 'other', 3), { current: 0, ttl: 0 });
    assert.equal((await hit(one, 'other', 3)).current, 1);
    const ttl = await redis.pttl('rl:test:ip');
    assert.ok(ttl > 0 && ttl <= 60_000, 'the key expires when its window has passed');
  });
});
