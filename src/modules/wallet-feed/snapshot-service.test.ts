import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import pino from 'pino';
import type { Db } from '../../platform/db/pool.ts';
import { type BuildResult, type BuiltSnapshot, SnapshotCache } from './snapshot-service.ts';

const HOUR = 3_600_000;

function built(generatedAt: number, indexUpdatedAt = generatedAt): BuildResult {
  const snapshot: BuiltSnapshot = {
    generatedAt: new Date(generatedAt),
    indexUpdatedAt: new Date(indexUpdatedAt),
    indexFailed: false,
    counts: {} as BuiltSnapshot['counts'],
    formats: {
      json: { body: Buffer.from(String(generatedAt)), etag: `W/"${generatedAt}"`, gzipped: null },
      csv: { body: Buffer.from(''), etag: 'W/"c"', gzipped: null },
    },
  };
  return { status: 'built', snapshot };
}

function harness(cacheMs: number) {
  let now = 1_000_000;
  const results: Array<() => Promise<BuildResult>> = [];
  let builds = 0;
  const cache = new SnapshotCache(
    null as unknown as Db,
    {
      cacheMs,
      refreshMs: HOUR,
      clock: () => now,
      build: async () => {
        builds += 1;
        const next = results.shift();
        return next ? next() : built(now);
      },
    },
    pino({ level: 'silent' }),
  );
  return {
    cache,
    advance: (ms: number) => {
      now += ms;
    },
    queue: (result: () => Promise<BuildResult>) => results.push(result),
    builds: () => builds,
    now: () => now,
  };
}

describe('snapshot cache', () => {
  test('serves one build for the cache time, then the old one while one rebuild runs', async () => {
    const h = harness(30_000);
    const first = await h.cache.current();
    assert.equal(h.builds(), 1);
    h.advance(29_000);
    assert.equal((await h.cache.current())?.snapshot, first?.snapshot);
    assert.equal(h.builds(), 1);
    assert.equal((await h.cache.current())?.ageSeconds, 29);

    h.advance(2_000);
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    h.queue(async () => {
      await gate;
      return built(h.now());
    });
    const during = await Promise.all([h.cache.current(), h.cache.current(), h.cache.current()]);
    assert.ok(
      during.every((served) => served?.snapshot === first?.snapshot),
      'no request waits',
    );
    assert.equal(h.builds(), 2, 'one rebuild for many requests');
    release();
    await new Promise((resolve) => setImmediate(resolve));
    assert.notEqual((await h.cache.current())?.snapshot, first?.snapshot);
  });

  test('null (503) until a first build succeeds, retried on the next request', async () => {
    const h = harness(30_000);
    h.queue(async () => ({ status: 'not_ready' }));
    assert.equal(await h.cache.current(), null);
    assert.ok(await h.cache.current());
    assert.equal(h.builds(), 2);
  });

  test('a failed or unbalanced build keeps the last good snapshot, marked stale', async () => {
    const h = harness(0);
    const good = await h.cache.current();
    assert.equal(good?.stale, false);
    h.queue(async () => {
      throw new Error('database down');
    });
    const afterError = await h.cache.current();
    assert.equal(afterError?.snapshot, good?.snapshot);
    assert.equal(afterError?.stale, true);
    h.queue(async () => ({
      status: 'unbalanced',
      reconciliation: {
        supply: 2,
        members: 1,
        non_members: 0,
        platform: 0,
        marketplace_escrow: 0,
        balanced: false,
      },
    }));
    assert.equal((await h.cache.current())?.stale, true);
    assert.equal((await h.cache.current())?.stale, false, 'the next good build clears it');
  });

  test('stale once the index is older than twice its refresh interval', async () => {
    const h = harness(0);
    h.queue(async () => built(h.now(), h.now() - 2 * HOUR));
    assert.equal((await h.cache.current())?.stale, false, 'exactly twice is not yet stale');
    h.queue(async () => built(h.now(), h.now() - 2 * HOUR - 1));
    assert.equal((await h.cache.current())?.stale, true);
  });
});
