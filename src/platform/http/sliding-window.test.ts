import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Redis } from 'ioredis';
import { connectedRedisServer, redisServerAvailable } from '../../../test/redis-server.ts';
import { slidingWindowCounter } from './sliding-window.ts';
import type { WindowCounter, WindowState } from './window-counter.ts';

const MINUTE = 60_000;

function hit(counter: WindowCounter, key: string, max: number): Promise<WindowState> {
  return Promise.resolve(counter.count(key, MINUTE, max));
}

describe('sliding-window rate-limit store (in process)', () => {
  test('the window slides: a burst at the end of one minute still counts at the start of the next', async () => {
    let now = 1_000_000_020_000; // 20 s into a minute: a fixed window would reset 40 s later.
    const store = slidingWindowCounter(null, 'test:', () => now);

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
      const store = slidingWindowCounter(null, 'test:', () => now);
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

  test('refused requests are not counted, keys are independent', async () => {
    let now = 5_000_000_000_000;
    const store = slidingWindowCounter(null, 'test:', () => now);
    for (let i = 0; i < 3; i++) await hit(store, 'a', 3);
    for (let i = 0; i < 10; i++) assert.equal((await hit(store, 'a', 3)).current, 4);
    assert.equal((await hit(store, 'b', 3)).current, 1);
    now += 61_000;
    assert.equal((await hit(store, 'a', 3)).current, 1, 'a full window later the budget is whole again');
  });
});

describe('sliding-window rate-limit store (Redis)', {
  skip: !redisServerAvailable() && 'no redis-server',
}, () => {
  let redis: Redis;
  let stop: () => void;

  before(async () => {
    ({ redis, stop } = await connectedRedisServer());
  });
  after(() => stop());

  test('counts are shared by every store on the same Redis, refused requests are not counted', async () => {
    const [one, two] = [slidingWindowCounter(redis, 'rl:test:'), slidingWindowCounter(redis, 'rl:test:')];
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
    assert.equal((await hit(one, 'other', 3)).current, 1);
    const ttl = await redis.pttl('rl:test:ip');
    assert.ok(ttl > 0 && ttl <= 60_000, 'the key expires when its window has passed');
  });
});
