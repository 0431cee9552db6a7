import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Redis } from 'ioredis';
import { connectedRedisServer, redisServerAvailable } from '../../../test/redis-server.ts';
import { fixedWindowCounter } from './fixed-window.ts';
import type { WindowCounter, WindowState } from './window-counter.ts';

const MINUTE = 60_000;

function hit(counter: WindowCounter, key: string, max: number): Promise<WindowState> {
  return Promise.resolve(counter.count(key, MINUTE, max));
}

describe('fixed-window rate-limit counters (in process)', () => {
  test('a window starts with the first request, lasts a minute, and counts every request in it', async () => {
    let now = 3_000_000_017_000;
    const counter = fixedWindowCounter(null, 'test:', () => now);
    assert.deepEqual(await hit(counter, 'key', 3), { current: 1, ttl: MINUTE });
    now += 20_000;
    assert.deepEqual(await hit(counter, 'key', 3), { current: 2, ttl: 40_000 });
    assert.deepEqual(await hit(counter, 'key', 3), { current: 3, ttl: 40_000 });
    const refused = await hit(counter, 'key', 3);
    assert.ok(refused.current > 3, 'the fourth request of the window is past the limit');
    assert.equal(refused.ttl, 40_000, 'and is told to wait for the end of the window');
    assert.equal((await hit(counter, 'other', 3)).current, 1, 'keys are independent');

    now += 40_000;
    assert.deepEqual(await hit(counter, 'key', 3), { current: 1, ttl: MINUTE }, 'the next window starts');
  });

  test('every live caller keeps its count, however many there are', async () => {
    const counter = fixedWindowCounter(null, 'test:', () => 4_000_000_000_000);
    for (let i = 0; i < 6000; i++) await hit(counter, `caller-${i}`, 3);
    assert.equal((await hit(counter, 'caller-0', 3)).current, 2, 'the first caller is not forgotten');
  });

  test('callers whose window has ended are forgotten', async () => {
    let now = 9_000_000_000_000;
    const counter = fixedWindowCounter(null, 'test:', () => now);
    for (let i = 0; i < 1000; i++) await hit(counter, `caller-${i}`, 3);
    now += MINUTE;
    await hit(counter, 'last', 3);
    const windows = (counter as unknown as { windows: Map<string, unknown> }).windows;
    assert.deepEqual([...windows.keys()], ['test:last']);
  });
});

describe('fixed-window rate-limit counters (Redis)', {
  skip: !redisServerAvailable() && 'no redis-server',
}, () => {
  let redis: Redis;
  let stop: () => void;

  before(async () => {
    ({ redis, stop } = await connectedRedisServer());
  });
  after(() => stop());

  test('counts are shared by every process on the same Redis, and the key expires with its window', async () => {
    const [one, two] = [fixedWindowCounter(redis, 'rl:fixed:'), fixedWindowCounter(redis, 'rl:fixed:')];
    assert.deepEqual(await hit(one, 'key', 2), { current: 1, ttl: MINUTE });
    const second = await hit(two, 'key', 2);
    assert.equal(second.current, 2);
    assert.ok(second.ttl > 50_000 && second.ttl <= MINUTE, `ttl ${second.ttl}`);
    assert.ok((await hit(one, 'key', 2)).current > 2);
    const ttl = await redis.pttl('rl:fixed:key');
    assert.ok(ttl > 0 && ttl <= MINUTE, 'the key expires when its window has passed');
  });
});
