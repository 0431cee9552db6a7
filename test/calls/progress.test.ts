import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import type { CallProgress } from '../../src/modules/calls/service.ts';
import { applyReport } from '../../src/modules/calls/voice.ts';
import { caller } from '../crm/crm-client.ts';
import { buildTestApp, createTenant, type TestApp, type TestTenant } from '../helpers.ts';
import { callEventsOf, dialRequest, outboundSetup, reportsOf, startCall } from './support.ts';

const FROM = '+14155550300';

/** Applying progress reports as the provider delivers them: twice, late, out of order. No worker runs. */
describe('call progress reports', () => {
  let t: TestApp;
  let tenant: TestTenant;
  let agentId: string;
  let n = 0;

  before(async () => {
    t = await buildTestApp();
    tenant = await createTenant(t.app);
    ({ agentId } = await outboundSetup(t, tenant, FROM));
  });
  after(() => t.close());

  const newCall = async () => {
    const { call } = await startCall(
      t,
      tenant,
      dialRequest({ agentId, from: FROM, to: `+1415555${4000 + n++}` }),
    );
    return { call, report: reportsOf(call, `sim_${call.id}`) };
  };
  const read = async (id: string) => (await caller(t, tenant.client)('GET', `/calls/${id}`)).body.call;
  const types = async (id: string) => (await callEventsOf(t, id)).map((e) => e.type);
  const applyOne = (report: Parameters<typeof applyReport>[2]) =>
    applyReport(t.platform.db, t.platform.hooks.callProgress, report);
  const apply = (...reports: Parameters<typeof applyReport>[2][]) =>
    reports.reduce((done, report) => done.then(() => applyOne(report)), Promise.resolve());

  test('an outbound call moves queued → ringing → in_progress → completed, one event per step, in order', async () => {
    const { call, report } = await newCall();
    assert.equal((await read(call.id)).status, 'queued');
    await apply(report.ringing());
    assert.equal((await read(call.id)).status, 'ringing');
    await apply(report.answered('2026-06-01T10:00:05.000Z'));
    const answered = await read(call.id);
    assert.equal(answered.status, 'in_progress');
    assert.equal(answered.answered_at, '2026-06-01T10:00:05.000Z');
    await apply(report.completed({ outcome: 'booked', durationSeconds: 95, summary: 'Booked.' }));
    const done = await read(call.id);
    assert.equal(done.status, 'completed');
    assert.equal(done.outcome, 'booked');
    assert.equal(done.cost_cents, 12);
    assert.equal(done.recording_url, 'https://recordings.example/call.wav');
    assert.deepEqual(await types(call.id), ['call.answered', 'call.completed']);
  });

  test('a report delivered twice, in turn or at once, is applied once', async () => {
    const { call, report } = await newCall();
    const answered = report.answered();
    await apply(report.ringing(), answered, answered);
    const completed = report.completed();
    await Promise.all([applyOne(completed), applyOne(completed)]);
    await apply(completed);
    assert.deepEqual(await types(call.id), ['call.answered', 'call.completed']);
    assert.equal((await read(call.id)).transcript.length, 1, 'the transcript once');
  });

  test('the first final report wins: a later completion or failure changes nothing', async () => {
    const { call, report } = await newCall();
    await apply(report.answered(), report.completed({ summary: 'From the analysis.' }));
    await apply(report.failed('failed'));
    const fallback = { ...report.completed({ summary: null }), id: 'simulator:other:completed' };
    await apply(fallback);
    const read1 = await read(call.id);
    assert.equal(read1.status, 'completed');
    assert.equal(read1.summary, 'From the analysis.');
    assert.deepEqual(await types(call.id), ['call.answered', 'call.completed']);
  });

  test('a completion before its pickup implies the pickup: call.answered first, and the late pickup changes nothing', async () => {
    const { call, report } = await newCall();
    const endedAt = '2026-06-01T10:05:00.000Z';
    await apply(report.completed({ durationSeconds: 120 }, endedAt));
    await apply(report.answered('2026-06-01T10:03:30.000Z'), report.ringing());
    const done = await read(call.id);
    assert.equal(done.status, 'completed', 'never moved back');
    assert.equal(done.answered_at, '2026-06-01T10:03:00.000Z', 'worked out from the end and the duration');
    assert.deepEqual(await types(call.id), ['call.answered', 'call.completed']);
  });

  test('an outbound voicemail drop: call.answered, call.voicemail_left, call.completed; status voicemail', async () => {
    const { call, report } = await newCall();
    await apply(report.ringing(), report.answered(), report.voicemail(true));
    assert.equal((await read(call.id)).status, 'voicemail');
    await apply(report.completed({ outcome: 'voicemail', durationSeconds: 20 }));
    const done = await read(call.id);
    assert.equal(done.status, 'voicemail');
    assert.equal(done.outcome, 'voicemail');
    assert.deepEqual(await types(call.id), ['call.answered', 'call.voicemail_left', 'call.completed']);
  });

  test('voicemail without a message left raises no call.voicemail_left, and no pickup is implied', async () => {
    const { call, report } = await newCall();
    await apply(report.ringing(), report.voicemail(false), report.completed({ outcome: 'voicemail' }));
    assert.equal((await read(call.id)).answered_at, null);
    assert.deepEqual(await types(call.id), ['call.completed']);
  });

  test('a call that never connects fails with its reason; a late pickup report does not revive it', async () => {
    const { call, report } = await newCall();
    await apply(report.ringing(), report.failed('no_answer'), report.answered());
    const failed = await read(call.id);
    assert.equal(failed.status, 'no_answer');
    assert.equal(failed.answered_at, null);
    assert.equal(failed.disposition, 'dial_no_answer');
    const events = await callEventsOf(t, call.id);
    assert.deepEqual(
      events.map((e) => e.type),
      ['call.failed'],
    );
    assert.equal(events[0].data.reason, 'no_answer');
  });

  test('reports of calls the platform does not know change nothing', async () => {
    const stranger = reportsOf(
      { id: '00000000-0000-7000-8000-000000000001', direction: 'outbound' },
      'sim_x',
    );
    await apply(stranger.answered(), stranger.completed());
    const malformed = reportsOf({ id: 'not-a-uuid', direction: 'outbound' } as never, 'sim_y');
    await apply(malformed.answered());
    const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM events WHERE type LIKE 'call.%'
      AND data->>'call_id' = '00000000-0000-7000-8000-000000000001'`.execute(t.platform.db);
    assert.equal(rows[0].n, 0);
  });

  test('onCallProgress runs in the transaction that applies the report, with the call before and after', async () => {
    const { call, report } = await newCall();
    const seen: CallProgress[] = [];
    const off = t.platform.hooks.callProgress.on(async (trx, progress) => {
      if (progress.after.id !== call.id) return;
      seen.push(progress);
      await sql`INSERT INTO test_progress_log (call_id, stage) VALUES (${progress.after.id}, ${progress.stage})`.execute(
        trx,
      );
      if (progress.stage === 'failed') throw new Error('the handler refuses');
    });
    await sql`CREATE TABLE test_progress_log (call_id uuid, stage text)`.execute(t.platform.db);
    try {
      await apply(report.ringing(), report.answered(), report.answered());
      assert.deepEqual(
        seen.map((p) => [p.stage, p.before?.status, p.after.status]),
        [
          ['ringing', 'queued', 'ringing'],
          ['answered', 'ringing', 'in_progress'],
        ],
        'once per applied report, repeats excluded',
      );
      assert.match(seen[1].after.cause_key ?? '', /^test:/);
      assert.deepEqual(seen[1].tenant, { orgId: tenant.orgId, clientId: tenant.clientId });

      await assert.rejects(apply(report.failed('failed')), /the handler refuses/);
      assert.equal((await read(call.id)).status, 'in_progress', 'the report rolled back with the handler');
      assert.deepEqual(await types(call.id), ['call.answered']);
      const { rows } = await sql<{ stage: string }>`SELECT stage FROM test_progress_log`.execute(
        t.platform.db,
      );
      assert.deepEqual(
        rows.map((r) => r.stage),
        ['ringing', 'answered'],
      );
    } finally {
      off();
    }
    await apply(report.failed('failed'));
    assert.equal((await read(call.id)).status, 'failed', 'applied once the handler is gone');
  });
});
