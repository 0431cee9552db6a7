import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { loadConfig } from '../../src/config.ts';
import { DEMO_HOLDINGS } from '../../src/modules/wallet-feed/demo.ts';
import { readIndexState } from '../../src/modules/wallet-feed/index-store.ts';
import { holdingsSource } from '../../src/providers/index.ts';
import { buildTestApp, eventually } from '../helpers.ts';

describe('wallet index refresh interval', () => {
  test('WALLET_INDEX_REFRESH_MS below a minute is honoured, not rounded up to the minute', async () => {
    const t = await buildTestApp({ WALLET_INDEX_REFRESH_MS: '1500', SEED_DEMO: 'true' });
    try {
      await t.startWorker();
      const attempts = new Set<number>();
      const started = Date.now();
      await eventually(
        async () => {
          const state = await readIndexState(t.platform.db);
          if (state?.attempted_at) attempts.add(state.attempted_at.getTime());
          return attempts.size >= 4;
        },
        20_000,
        100,
      );
      const spans = [...attempts].sort().map((at, i, all) => (i === 0 ? 0 : at - all[i - 1]));
      assert.ok(Date.now() - started < 20_000);
      for (const span of spans.slice(1))
        assert.ok(span >= 1400 && span < 10_000, `refreshes ${spans.join(', ')} ms apart`);
    } finally {
      await t.close();
    }
  });
});

describe('demo holdings', () => {
  test('a DATABASE_URL without SEED_DEMO serves no invented holdings', async () => {
    assert.equal(
      await holdingsSource(
        loadConfig({ DATABASE_URL: 'postgres://db.internal/agency', DATA_DIR: '/tmp/x' }),
        DEMO_HOLDINGS,
      ),
      null,
    );
    assert.notEqual(
      await holdingsSource(loadConfig({ DATA_DIR: '/tmp/x' }), DEMO_HOLDINGS),
      null,
      'the embedded database has its demo',
    );
  });
});
