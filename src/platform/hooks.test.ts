import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Trx } from './db/pool.ts';
import { Hook } from './hooks.ts';

const trx = {} as Trx;

describe('Hook', () => {
  test('runs its handlers in the order registered, each with the transaction and the value', async () => {
    const hook = new Hook<number>();
    const seen: string[] = [];
    hook.on(async (given, value) => {
      assert.equal(given, trx);
      seen.push(`first ${value}`);
    });
    hook.on(async (_trx, value) => {
      seen.push(`second ${value}`);
    });
    await hook.run(trx, 7);
    assert.deepEqual(seen, ['first 7', 'second 7']);
  });

  test('a failing handler fails the run and stops the handlers after it; off removes a handler', async () => {
    const hook = new Hook<string>();
    const seen: string[] = [];
    const off = hook.on(async () => {
      throw new Error('refused');
    });
    hook.on(async (_trx, value) => {
      seen.push(value);
    });
    await assert.rejects(hook.run(trx, 'a'), /refused/);
    assert.deepEqual(seen, []);
    off();
    await hook.run(trx, 'b');
    assert.deepEqual(seen, ['b']);
  });
});
