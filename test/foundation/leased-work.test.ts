import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, beforeEach, describe, test } from 'node:test';
import { sql } from 'kysely';
import pino from 'pino';
import { type DatabaseHandle, type Db, openDatabase } from '../../src/platform/db/pool.ts';
import {
  type Lease,
  LeasedPool,
  type LeasedWork,
  leasedLoop,
  type Refill,
} from '../../src/platform/jobs/leased.ts';
import { createTestDatabase, sleep } from '../helpers.ts';

interface Chore {
  org_id: string;
  id: string;
  state: string;
  attempts: number;
}

const log = pino({ level: 'silent' });
const ORG = randomUUID();
const LEASE_MS = 300;

describe('leased work', () => {
  let database: DatabaseHandle;
  let db: Db;
  let drop: () => Promise<void>;

  before(async () => {
    const created = await createTestDatabase();
    drop = created.drop;
    database = openDatabase(created.url, { max: 12 });
    db = database.db;
    await sql`CREATE TABLE chores (
      org_id uuid NOT NULL, id uuid NOT NULL, state text NOT NULL DEFAULT 'pending',
      lease_id uuid, lease_until timestamptz DEFAULT now(), attempts integer NOT NULL DEFAULT 0,
      unrecorded_claims integer NOT NULL DEFAULT 0, PRIMARY KEY (org_id, id))`.execute(db);
    // One row per time a unit of work committed: no unique key, so doing a row twice shows.
    await sql`CREATE TABLE chores_done (org_id uuid NOT NULL, id uuid NOT NULL, worker text NOT NULL)`.execute(
      db,
    );
  });
  after(async () => {
    await database.close();
    await drop();
  });
  beforeEach(async () => {
    await sql`TRUNCATE chores, chores_done`.execute(db);
  });

  const addChores = (count: number) =>
    sql`INSERT INTO chores (org_id, id) SELECT ${ORG}::uuid, gen_random_uuid() FROM generate_series(1, ${count}::int)`.execute(
      db,
    );

  /** Marks the chore done by `worker` and ends its lease, in one transaction that holds the row. */
  const finish = (lease: Lease<Chore>, worker: string) =>
    lease.inTransaction(async (trx) => {
      await sql`INSERT INTO chores_done VALUES (${lease.row.org_id}::uuid, ${lease.row.id}::uuid, ${worker})`.execute(
        trx,
      );
      await sql`UPDATE chores SET state = 'done' WHERE org_id = ${lease.row.org_id}::uuid AND id = ${lease.row.id}::uuid`.execute(
        trx,
      );
      await lease.complete(trx);
      return true;
    });

  const chores = (overrides: Partial<LeasedWork<Chore>>): LeasedWork<Chore> => ({
    name: 'chores',
    intervalMs: 10,
    table: 'chores',
    due: sql`t.state = 'pending'`,
    leaseMs: LEASE_MS,
    batch: 25,
    concurrency: 5,
    attempts: { max: 3, backoffMs: () => 0 },
    work: async () => {},
    exhausted: async (lease) => {
      await lease.complete();
    },
    ...overrides,
  });

  const doneCounts = async () =>
    (
      await sql<{ rows: number; distinct_ids: number }>`
        SELECT count(*)::int AS rows, count(DISTINCT id)::int AS distinct_ids FROM chores_done`.execute(db)
    ).rows[0];

  test('two workers and a stuck one over 1,000 rows: each row done exactly once', async () => {
    await addChores(1000);
    // The stuck worker claims a batch and never finishes it (as if its process hung or was killed).
    let release: () => void = () => {};
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    const stuckLeases: Lease<Chore>[] = [];
    const stuck = leasedLoop(
      db,
      chores({
        concurrency: 25,
        work: async (lease) => {
          stuckLeases.push(lease);
          await released;
          await finish(lease, 'stuck');
        },
      }),
      log,
    );
    const stuckRun = stuck.run();
    await eventuallyTrue(() => stuckLeases.length === 25);

    const worker = (name: string) =>
      leasedLoop(db, chores({ work: (lease) => finish(lease, name).then() }), log);
    const workers = [worker('a'), worker('b')];
    const started = Date.now();
    await Promise.all(
      workers.map(async (loop) => {
        while (Date.now() - started < 90_000) {
          const more = await loop.run();
          const left = await sql<{
            n: number;
          }>`SELECT count(*)::int AS n FROM chores WHERE state <> 'done'`.execute(db);
          if (left.rows[0].n === 0) return;
          if (!more) await sleep(20);
        }
      }),
    );

    release();
    await stuckRun;
    assert.deepEqual(await doneCounts(), { rows: 1000, distinct_ids: 1000 });
    const byWorker = await sql<{ worker: string; n: number }>`
      SELECT worker, count(*)::int AS n FROM chores_done GROUP BY worker ORDER BY worker`.execute(db);
    // Both live workers did work; the stuck one, whose leases ran out, committed nothing.
    assert.deepEqual(
      byWorker.rows.map((row) => row.worker),
      ['a', 'b'],
    );
    const left =
      await sql`SELECT 1 FROM chores WHERE lease_until IS NOT NULL OR lease_id IS NOT NULL`.execute(db);
    assert.equal(left.rows.length, 0);
  });

  test('a worker paused past its lease cannot commit over the one that took the row', async () => {
    await addChores(1);
    let paused: Lease<Chore> | undefined;
    let resume: () => void = () => {};
    const pausedRun = leasedLoop(
      db,
      chores({
        work: async (lease) => {
          paused = lease;
          await new Promise<void>((resolve) => {
            resume = resolve;
          });
        },
      }),
      log,
    ).run();
    await eventuallyTrue(() => paused !== undefined);
    const other = leasedLoop(db, chores({ work: (lease) => finish(lease, 'other').then() }), log);
    assert.equal(await other.run(), false);
    assert.deepEqual(await doneCounts(), { rows: 0, distinct_ids: 0 }, 'the lease still holds');
    await sleep(LEASE_MS + 50);
    await other.run();
    assert.deepEqual(await doneCounts(), { rows: 1, distinct_ids: 1 });

    const late = paused as Lease<Chore>;
    assert.equal(await finish(late, 'paused'), null);
    assert.equal(await late.complete(), false);
    assert.equal(await late.retry(0), false);
    assert.equal(await late.unconfirmed(1000), false);
    resume();
    await pausedRun;
    assert.deepEqual(await doneCounts(), { rows: 1, distinct_ids: 1 });
    const [row] = (await sql<Chore>`SELECT * FROM chores`.execute(db)).rows;
    assert.equal(row.state, 'done');
  });

  test('a failing row is retried on its back-off, then given up once its attempts are spent', async () => {
    await addChores(1);
    const tried: number[] = [];
    const exhausted: { attempt: number; error: string }[] = [];
    const loop = leasedLoop(
      db,
      chores({
        attempts: { max: 3, backoffMs: (attempt) => attempt * 200 },
        work: async (lease) => {
          tried.push(lease.attempt);
          throw new Error(`attempt ${lease.attempt} failed`);
        },
        exhausted: async (lease, error) => {
          exhausted.push({ attempt: lease.attempt, error: (error as Error).message });
          await lease.inTransaction(async (trx) => {
            await sql`UPDATE chores SET state = 'failed' WHERE org_id = ${lease.row.org_id}::uuid AND id = ${lease.row.id}::uuid`.execute(
              trx,
            );
            await lease.complete(trx);
          });
        },
      }),
      log,
    );
    const dueIn = async () =>
      (
        await sql<{ ms: number; lease_id: string | null; attempts: number }>`
          SELECT extract(epoch FROM lease_until - now()) * 1000 AS ms, lease_id, attempts FROM chores`.execute(
          db,
        )
      ).rows[0];

    await loop.run();
    assert.deepEqual(tried, [1]);
    let row = await dueIn();
    assert.equal(row.attempts, 1);
    assert.equal(row.lease_id, null);
    assert.ok(row.ms > 100 && row.ms <= 200, `due again in ${row.ms} ms, the back-off of attempt 1`);
    await loop.run();
    assert.deepEqual(tried, [1], 'not due before its back-off ends');

    await sleep(220);
    await loop.run();
    assert.deepEqual(tried, [1, 2]);
    row = await dueIn();
    assert.ok(row.ms > 300 && row.ms <= 400, `due again in ${row.ms} ms, the back-off of attempt 2`);
    await sleep(420);
    await loop.run();
    assert.deepEqual(tried, [1, 2, 3]);
    assert.deepEqual(exhausted, [{ attempt: 3, error: 'attempt 3 failed' }]);
    await sleep(50);
    await loop.run();
    assert.deepEqual(tried, [1, 2, 3]);
    const [final] = (await sql<Chore & { lease_until: Date | null }>`SELECT * FROM chores`.execute(db)).rows;
    assert.equal(final.state, 'failed');
    assert.equal(final.lease_until, null);
  });

  test('a row claimed past its attempts (its workers died every time) is given up without more work', async () => {
    await addChores(1);
    // Three claims whose workers died: attempts counted, the last lease run out.
    await sql`UPDATE chores SET attempts = 3, lease_id = gen_random_uuid(), lease_until = now() - interval '1 second'`.execute(
      db,
    );
    const worked: number[] = [];
    const exhausted: number[] = [];
    await leasedLoop(
      db,
      chores({
        work: async (lease) => {
          worked.push(lease.attempt);
        },
        exhausted: async (lease) => {
          exhausted.push(lease.attempt);
          await lease.complete();
        },
      }),
      log,
    ).run();
    assert.deepEqual(worked, []);
    assert.deepEqual(exhausted, [4]);
  });

  test('attempts counted by record: a claim costs none, each failure recorded counts one, then given up', async () => {
    await addChores(1);
    const tried: number[] = [];
    const exhausted: number[] = [];
    const loop = leasedLoop(
      db,
      chores({
        attempts: { max: 2, backoffMs: () => 0, counted: 'by record' },
        work: async (lease) => {
          tried.push(lease.attempt);
          throw new Error('failed');
        },
        exhausted: async (lease) => {
          exhausted.push(lease.attempt);
          await lease.complete();
        },
      }),
      log,
    );
    const attempts = async () => (await sql<Chore>`SELECT * FROM chores`.execute(db)).rows[0].attempts;
    // A worker that died mid-way: claimed, its lease run out, nothing recorded.
    await leasedLoop(
      db,
      chores({ attempts: { max: 2, backoffMs: () => 0, counted: 'by record' } }),
      log,
    ).run();
    await sql`UPDATE chores SET lease_id = gen_random_uuid(), lease_until = now() - interval '1 second'`.execute(
      db,
    );
    assert.equal(await attempts(), 0);
    await loop.run();
    assert.deepEqual(tried, [1]);
    assert.equal(await attempts(), 1);
    await loop.run();
    assert.deepEqual(tried, [1, 2]);
    assert.deepEqual(exhausted, [2]);
    assert.equal(await attempts(), 2, 'the give-up records the last attempt');
  });

  test('attempts counted by record: a row whose workers die every time is given up, a record starts the count again', async () => {
    await addChores(1);
    const row = async () =>
      (await sql<Chore & { unrecorded_claims: number }>`SELECT * FROM chores`.execute(db)).rows[0];
    /** The lease of the worker that "died" runs out now. */
    const leaseRunsOut = () =>
      sql`UPDATE chores SET lease_until = now() - interval '1 millisecond'`.execute(db);
    const worked: number[] = [];
    const exhausted: number[] = [];
    let fail = false;
    const loop = leasedLoop(
      db,
      chores({
        attempts: { max: 100, backoffMs: () => 0, counted: 'by record', unrecordedMax: 3 },
        // Dies mid-way (ends nothing: its lease runs out), or fails and records its attempt.
        work: async (lease) => {
          worked.push(lease.unrecorded);
          if (fail) throw new Error('failed');
        },
        exhausted: async (lease, error) => {
          exhausted.push(lease.unrecorded);
          assert.match(String(error), /3 times in a row with no attempt recorded/);
          await lease.complete();
        },
      }),
      log,
    );
    await loop.run();
    await leaseRunsOut();
    await loop.run();
    assert.equal((await row()).unrecorded_claims, 2);
    // A recorded attempt (a failure, here) starts the count again.
    await leaseRunsOut();
    fail = true;
    await loop.run();
    assert.deepEqual(worked, [0, 1, 2]);
    assert.equal((await row()).unrecorded_claims, 0);
    assert.equal((await row()).attempts, 1);
    fail = false;
    for (let lost = 0; lost < 3; lost++) {
      await loop.run();
      await leaseRunsOut();
    }
    assert.deepEqual(worked, [0, 1, 2, 0, 1, 2], 'three more leases lost in a row');
    await loop.run();
    assert.deepEqual(worked.length, 6, 'the fourth claim does no work');
    assert.deepEqual(exhausted, [3]);
    const final = await row();
    assert.equal(final.attempts, 2, 'the give-up is recorded as an attempt');
    assert.equal(final.unrecorded_claims, 0);
  });

  test('the refilling pool keeps at most N in flight and drains 1,000 rows once each with two runners', async () => {
    await addChores(1000);
    const N = 8;
    const peak = { a: 0, b: 0 };
    const now = { a: 0, b: 0 };
    let handOvers = 0;
    const refill: Refill = {
      coalesceMs: 3,
      runBudgetMs: 200,
      handOver: async () => {
        handOvers++;
      },
    };
    const runner = (name: 'a' | 'b') =>
      chores({
        batch: N,
        concurrency: N,
        refill,
        work: async (lease) => {
          now[name]++;
          peak[name] = Math.max(peak[name], now[name]);
          try {
            // Units of uneven length, so the pool refills while others are still in flight.
            await sleep(Math.floor(Math.random() * 6));
            await finish(lease, name);
          } finally {
            now[name]--;
          }
        },
      });
    const a = new LeasedPool(db, { ...runner('a'), refill }, log);
    const b = leasedLoop(db, runner('b'), log);
    const left = async () =>
      (await sql<{ n: number }>`SELECT count(*)::int AS n FROM chores WHERE state <> 'done'`.execute(db))
        .rows[0].n;
    const started = Date.now();
    await Promise.all([
      (async () => {
        while ((await left()) > 0 && Date.now() - started < 60_000) await a.run();
      })(),
      (async () => {
        while ((await left()) > 0 && Date.now() - started < 60_000) await b.run();
      })(),
    ]);
    assert.deepEqual(await doneCounts(), { rows: 1000, distinct_ids: 1000 });
    assert.ok(peak.a <= N && peak.b <= N, `at most ${N} in flight: ${JSON.stringify(peak)}`);
    assert.equal(Math.max(peak.a, peak.b), N, 'the pool fills up');
    const byWorker = await sql<{
      worker: string;
    }>`SELECT DISTINCT worker FROM chores_done ORDER BY worker`.execute(db);
    assert.deepEqual(
      byWorker.rows.map((row) => row.worker),
      ['a', 'b'],
    );
    assert.ok(handOvers > 0, 'a run past its budget hands over');
    const leased =
      await sql`SELECT 1 FROM chores WHERE lease_until IS NOT NULL OR lease_id IS NOT NULL`.execute(db);
    assert.equal(leased.rows.length, 0);
  });

  test('a woken pool claims again while units are in flight; a wake-up with no run going on says so', async () => {
    await addChores(2);
    const started: string[] = [];
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const refill: Refill = { coalesceMs: 3, runBudgetMs: 10_000, handOver: async () => {} };
    const pool = new LeasedPool(
      db,
      {
        ...chores({
          batch: 4,
          concurrency: 4,
          work: async (lease) => {
            started.push(lease.row.id);
            await held;
            await finish(lease, 'pool');
          },
        }),
        refill,
      },
      log,
    );
    assert.equal(pool.wake(), false);
    const run = pool.run();
    await eventuallyTrue(() => started.length === 2);
    // Its claim came back short: while units are in flight, only a wake-up makes it look again.
    await addChores(1);
    await sleep(50);
    assert.equal(started.length, 2);
    assert.equal(pool.wake(), true);
    await eventuallyTrue(() => started.length === 3);
    release();
    await run;
    assert.deepEqual(await doneCounts(), { rows: 3, distinct_ids: 3 });
    assert.equal(pool.wake(), false, 'the run ended when nothing was due and nothing in flight');
  });

  test('a unit that hands back its record frees its slot; records waiting are bounded; the run waits for them', async () => {
    await addChores(12);
    const N = 3;
    let working = 0;
    let peak = 0;
    let recordsWaiting = 0;
    let recordsPeak = 0;
    let releaseRecords: () => void = () => {};
    const recordsHeld = new Promise<void>((resolve) => {
      releaseRecords = resolve;
    });
    const pool = new LeasedPool(
      db,
      {
        ...chores({
          batch: N,
          concurrency: N,
          work: async (lease) => {
            working++;
            peak = Math.max(peak, working);
            await sleep(2);
            working--;
            recordsWaiting++;
            recordsPeak = Math.max(recordsPeak, recordsWaiting);
            const recorded = recordsHeld.then(async () => {
              await finish(lease, 'pool');
              recordsWaiting--;
            });
            return { recorded };
          },
        }),
        refill: { coalesceMs: 3, runBudgetMs: 10_000, handOver: async () => {} },
      },
      log,
    );
    let ended = false;
    const run = pool.run().then(() => {
      ended = true;
    });
    // More units finish their work than there are slots, while no record is written: the records hold
    // no slot. Past N records waiting, each takes a slot back, so claims stop at 2N.
    await eventuallyTrue(() => recordsWaiting === 2 * N);
    await sleep(50);
    assert.equal(recordsPeak, 2 * N);
    assert.ok(peak <= N, `at most ${N} units working at once: ${peak}`);
    assert.equal(ended, false, 'the run waits for the records');
    assert.equal((await doneCounts()).rows, 0);
    releaseRecords();
    await run;
    assert.deepEqual(await doneCounts(), { rows: 12, distinct_ids: 12 });
  });

  test('"maybe done" waits for its answer, or is settled once by the sweep after its grace', async () => {
    await addChores(2);
    const settled: string[] = [];
    const work = () =>
      chores({
        work: async (lease) => {
          await lease.unconfirmed(300);
        },
        settleUnconfirmed: async (lease) => {
          settled.push(lease.row.id);
          await sleep(20);
          await lease.inTransaction(async (trx) => {
            await sql`UPDATE chores SET state = 'failed' WHERE org_id = ${lease.row.org_id}::uuid AND id = ${lease.row.id}::uuid`.execute(
              trx,
            );
            await lease.complete(trx);
          });
        },
      });
    const a = leasedLoop(db, work(), log);
    const b = leasedLoop(db, work(), log);
    await a.run();
    const rows = (await sql<Chore>`SELECT * FROM chores ORDER BY id`.execute(db)).rows;
    assert.deepEqual(
      rows.map((row) => [row.state, row.attempts]),
      [
        ['unconfirmed', 1],
        ['unconfirmed', 1],
      ],
    );
    // One answer arrives in time: its own update settles the row (as a status callback does).
    const answered = rows[0].id;
    await sql`UPDATE chores SET state = 'done', lease_until = NULL WHERE id = ${answered}::uuid`.execute(db);
    await Promise.all([a.run(), b.run()]);
    assert.deepEqual(settled, [], 'not before its grace');

    await sleep(320);
    await Promise.all([a.run(), b.run(), a.run(), b.run()]);
    assert.deepEqual(settled, [rows[1].id]);
    const after = (await sql<Chore>`SELECT * FROM chores ORDER BY id`.execute(db)).rows;
    assert.deepEqual(
      after.map((row) => [row.state, row.attempts]),
      [
        ['done', 1],
        ['failed', 1],
      ],
    );
    await sleep(50);
    await Promise.all([a.run(), b.run()]);
    assert.equal(settled.length, 1);
  });
});

async function eventuallyTrue(check: () => boolean, timeoutMs = 30_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > until) throw new Error('timed out');
    await sleep(5);
  }
}
