import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { StatementBatch } from './statement-batch.ts';

describe('StatementBatch', () => {
  test('items of one turn share a write; items that arrive while it runs share the next', async () => {
    const writes: number[][] = [];
    let finishWrite: () => void = () => {};
    const batch = new StatementBatch<number, string>(async (items) => {
      writes.push(items);
      if (writes.length === 1) await new Promise<void>((resolve) => (finishWrite = resolve));
      return items.map((item) => `#${item}`);
    }, 100);
    const first = [batch.add(1), batch.add(2)];
    await new Promise((resolve) => setImmediate(resolve));
    const second = [batch.add(3), batch.add(4), batch.add(5)];
    finishWrite();
    assert.deepEqual(await Promise.all([...first, ...second]), ['#1', '#2', '#3', '#4', '#5']);
    assert.deepEqual(writes, [
      [1, 2],
      [3, 4, 5],
    ]);
  });

  test('a write carries at most maxItems; a failed write fails its own items only', async () => {
    const writes: number[][] = [];
    const batch = new StatementBatch<number, number>(async (items) => {
      writes.push(items);
      if (items.includes(3)) throw new Error('refused');
      return items;
    }, 2);
    const results = await Promise.allSettled([1, 2, 3, 4, 5].map((item) => batch.add(item)));
    assert.deepEqual(writes, [[1, 2], [3, 4], [5]]);
    assert.deepEqual(
      results.map((result) => result.status),
      ['fulfilled', 'fulfilled', 'rejected', 'rejected', 'fulfilled'],
    );
    // Nothing left running: a later item gets a write of its own.
    assert.equal(await batch.add(6), 6);
  });
});
