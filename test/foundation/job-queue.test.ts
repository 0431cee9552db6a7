import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { inTransaction } from '../../src/platform/db/transaction.ts';
import { enqueueJob } from '../../src/platform/jobs/queue.ts';
import { buildTestApp, type TestApp } from '../helpers.ts';

describe('enqueueJob', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp();
  });
  after(() => t.close());

  const jobs = async (task: string) =>
    (
      await sql<{ payload: Record<string, unknown>; run_at: Date; key: string | null }>`
        SELECT job.payload, job.run_at, job.key
        FROM graphile_worker._private_jobs job
        JOIN graphile_worker._private_tasks task ON task.id = job.task_id
        WHERE task.identifier = ${task}`.execute(t.platform.db)
    ).rows;

  test('a job queued in a transaction exists only if the transaction commits', async () => {
    await assert.rejects(
      inTransaction(t.platform.db, async (trx) => {
        await enqueueJob(trx, 'queue_test_rollback', { n: 1 });
        throw new Error('the write failed');
      }),
      /the write failed/,
    );
    assert.deepEqual(await jobs('queue_test_rollback'), []);

    await inTransaction(t.platform.db, (trx) => enqueueJob(trx, 'queue_test_commit', { n: 2 }));
    assert.deepEqual(
      (await jobs('queue_test_commit')).map((job) => job.payload),
      [{ n: 2 }],
    );
  });

  test('a job key queues one job; runAt delays it', async () => {
    const runAt = new Date(Date.now() + 60_000);
    await enqueueJob(t.platform.db, 'queue_test_key', { n: 1 }, { jobKey: 'k1', runAt });
    await enqueueJob(
      t.platform.db,
      'queue_test_key',
      { n: 2 },
      { jobKey: 'k1', runAt, jobKeyMode: 'unsafe_dedupe' },
    );
    const queued = await jobs('queue_test_key');
    assert.equal(queued.length, 1);
    assert.deepEqual(queued[0].payload, { n: 1 });
    assert.equal(queued[0].key, 'k1');
    assert.ok(Math.abs(queued[0].run_at.getTime() - runAt.getTime()) < 1000);
  });
});
