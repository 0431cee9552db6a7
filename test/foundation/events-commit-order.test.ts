import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { openDatabase } from '../../src/platform/db/pool.ts';
import { emit } from '../../src/platform/events/emit.ts';
import { type EventBatchConsumer, relayEvents } from '../../src/platform/events/outbox-relay.ts';
import { buildTestApp, createTenant, eventually, sleep, type TestApp, type TestTenant } from '../helpers.ts';

const GATED = 20;
const WRITERS = 4;

/**
 * The relay reads an append-only log by sequence: an event whose transaction took its seq early and
 * commits late must not be skipped by a relay that has meanwhile handed over later seqs.
 */
describe('events committed out of order', () => {
  let t: TestApp;
  let tenant: TestTenant;
  let other: TestTenant;

  before(async () => {
    t = await buildTestApp();
    tenant = await createTenant(t.app);
    other = await createTenant(t.app);
  });
  after(() => t.close());

  test('20 transactions commit in shuffled order under load: every event is handed over, none skipped, in seq order', async () => {
    const gatedDb = openDatabase(t.database.url, { max: GATED + 2 });
    const seen: string[] = [];
    const consumer: EventBatchConsumer = {
      batch: async (_db, events) => {
        for (const { event } of events) seen.push(event.id);
      },
    };
    let running = true;
    const scopes = [
      { orgId: tenant.orgId, clientId: tenant.clientId },
      { orgId: other.orgId, clientId: other.clientId },
    ];

    // Load: short transactions emitting events all along, and a relay passing as fast as it can.
    const loadIds: string[] = [];
    const writers = Array.from({ length: WRITERS }, async (_, w) => {
      for (let i = 0; running; i++) {
        const event = await t.platform.db
          .transaction()
          .execute((trx) => emit(trx, scopes[(w + i) % 2], 'contact.updated', { w, i }));
        loadIds.push(event.id);
      }
    });
    let passes = 0;
    const relay = (async () => {
      while (running) {
        await relayEvents(t.platform.db, [consumer]);
        passes += 1;
        await sleep(2);
      }
    })();

    // Twenty transactions take their seqs among the load's, then wait.
    const gates: (() => void)[] = [];
    const opened: Promise<string>[] = [];
    for (let i = 0; i < GATED; i++) {
      const gate = new Promise<void>((resolve) => gates.push(resolve));
      let written: (id: string) => void = () => {};
      const wrote = new Promise<string>((resolve) => {
        written = resolve;
      });
      opened.push(
        gatedDb.db.transaction().execute(async (trx) => {
          const event = await emit(trx, scopes[i % 2], 'deal.updated', { gated: i });
          written(event.id);
          await gate;
          return event.id;
        }),
      );
      await wrote;
      await sleep(5);
    }
    // The relay keeps passing while later events commit around the open transactions.
    const passesBefore = passes;
    await sleep(300);
    assert.ok(passes > passesBefore, 'the relay ran while the transactions were open');

    // Commit them in a shuffled order, the load going on.
    const order = [...gates.keys()].sort(() => Math.random() - 0.5);
    for (const i of order) {
      gates[i]();
      await sleep(10 + Math.floor(Math.random() * 20));
    }
    const committed = await Promise.all(opened);
    await sleep(100);
    running = false;
    await Promise.all(writers);
    await relay;
    await gatedDb.close();

    // Drain: every event written, gated and load alike, reaches the consumer.
    const expected = [...committed, ...loadIds];
    await eventually(async () => {
      await relayEvents(t.platform.db, [consumer]);
      const have = new Set(seen);
      return expected.every((id) => have.has(id));
    }, 30_000).catch(async (error) => {
      const have = new Set(seen);
      const missing = expected.filter((id) => !have.has(id));
      const state = await t.database.pool.query('SELECT * FROM event_relay');
      const seqs = await t.database.pool.query('SELECT id, seq, xid FROM event_log WHERE id = ANY($1)', [
        missing,
      ]);
      console.log(
        JSON.stringify({ missing: missing.length, relay: state.rows, first: seqs.rows.slice(0, 5) }),
      );
      throw error;
    });
    assert.ok(loadIds.length > GATED, `load wrote ${loadIds.length} events`);
    const have = new Set(seen);
    assert.deepEqual(
      committed.filter((id) => !have.has(id)),
      [],
      'no transaction committed late was skipped',
    );

    // Handed over once each (a healthy run), in seq order.
    assert.equal(seen.length, have.size, 'no event handed over twice');
    const { rows } = await t.database.pool.query<{ id: string; seq: string }>(
      'SELECT id, seq::text FROM event_log WHERE id = ANY($1)',
      [seen],
    );
    const seqOf = new Map(rows.map((row) => [row.id, BigInt(row.seq)]));
    for (let i = 1; i < seen.length; i++)
      assert.ok(
        (seqOf.get(seen[i - 1]) ?? 0n) < (seqOf.get(seen[i]) ?? 0n),
        `event ${i} handed over after a later seq`,
      );
  });

  test('a transaction open without an event does not hold the relay back; one that wrote an event does', async () => {
    const other = openDatabase(t.database.url, { max: 2 });
    const seen: string[] = [];
    const consumer: EventBatchConsumer = {
      batch: async (_db, events) => {
        for (const { event } of events) seen.push(event.id);
      },
    };
    const scope = { orgId: tenant.orgId, clientId: tenant.clientId };
    await relayEvents(t.platform.db, [consumer]);

    // A writing transaction (it has a transaction id) that wrote no event, left open.
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let started: () => void = () => {};
    const began = new Promise<void>((resolve) => {
      started = resolve;
    });
    const open = other.db.transaction().execute(async (trx) => {
      await sql`UPDATE orgs SET name = name WHERE id = ${tenant.orgId}`.execute(trx);
      started();
      await gate;
    });
    await began;
    const first = await t.platform.db.transaction().execute((trx) => emit(trx, scope, 'task.completed', {}));
    await relayEvents(t.platform.db, [consumer]);
    assert.ok(seen.includes(first.id), 'handed over while an unrelated transaction is open');
    release();
    await open;

    // A transaction that wrote an event and stays open holds back the events written after it.
    let releaseEmitter: () => void = () => {};
    const emitterGate = new Promise<void>((resolve) => {
      releaseEmitter = resolve;
    });
    let wrote: (id: string) => void = () => {};
    const written = new Promise<string>((resolve) => {
      wrote = resolve;
    });
    const emitter = other.db.transaction().execute(async (trx) => {
      const event = await emit(trx, scope, 'task.completed', { held: true });
      wrote(event.id);
      await emitterGate;
    });
    const held = await written;
    const after = await t.platform.db.transaction().execute((trx) => emit(trx, scope, 'task.completed', {}));
    await relayEvents(t.platform.db, [consumer]);
    await relayEvents(t.platform.db, [consumer]);
    assert.ok(!seen.includes(after.id), 'not handed over past an open event');
    releaseEmitter();
    await emitter;
    await relayEvents(t.platform.db, [consumer]);
    await relayEvents(t.platform.db, [consumer]);
    assert.deepEqual(
      seen.filter((id) => id === held || id === after.id),
      [held, after.id],
    );
    await other.close();
  });
});
