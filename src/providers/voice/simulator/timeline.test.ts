import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { CompletedReport, FailedReport } from '../types.ts';
import { type SimulatedCall, simulatedTimeline } from './timeline.ts';

const STARTED = new Date('2026-03-02T15:00:00.000Z');

function call(overrides: Partial<SimulatedCall> = {}): SimulatedCall {
  return {
    direction: 'outbound',
    callId: '0190f3a2-7b1c-7cc0-9a53-5d2b8e0c4f11',
    providerCallId: 'sim_1',
    from: '+14155550100',
    to: '+14155550111',
    startedAt: STARTED,
    callMs: 1500,
    script: { outcome: 'answered' },
    greeting: 'Hi, this is Ava.',
    maxDurationSeconds: 300,
    voicemailMessage: 'Call us back.',
    ...overrides,
  };
}

const shape = (entries: ReturnType<typeof simulatedTimeline>) =>
  entries.map((entry) => `${entry.progress.stage}@${entry.afterMs}`);

describe('simulated call timelines', () => {
  test('answered: ringing at once, answered a third of the way, completed at the end', () => {
    const entries = simulatedTimeline(call());
    assert.deepEqual(shape(entries), ['ringing@0', 'answered@500', 'completed@1500']);
    assert.deepEqual(
      entries.map((entry) => entry.progress.id),
      ['simulator:sim_1:ringing', 'simulator:sim_1:answered', 'simulator:sim_1:completed'],
    );
    assert.equal(entries[1].progress.occurredAt, '2026-03-02T15:00:00.500Z');
    const completed = entries[2].progress as CompletedReport;
    assert.equal(completed.endedAt, '2026-03-02T15:00:01.500Z');
    assert.equal(completed.disposition, 'agent_hangup');
    assert.equal(completed.costCents, 0);
  });

  test('is deterministic: the same call gives the same reports', () => {
    assert.deepEqual(
      simulatedTimeline(call({ script: { outcome: 'booked' } })),
      simulatedTimeline(call({ script: { outcome: 'booked' } })),
    );
  });

  test('failures ring until the end and fail with the outcome as reason', () => {
    for (const outcome of ['no_answer', 'busy', 'failed'] as const) {
      const entries = simulatedTimeline(call({ script: { outcome, duration_seconds: 40 } }));
      assert.deepEqual(shape(entries), ['ringing@0', 'failed@1500']);
      const failed = entries[1].progress as FailedReport;
      assert.equal(failed.reason, outcome);
      assert.equal(
        failed.disposition,
        { no_answer: 'dial_no_answer', busy: 'dial_busy', failed: 'dial_failed' }[outcome],
      );
    }
  });

  test('voicemail drops the campaign message, or leaves none when voicemail is off', () => {
    const dropped = simulatedTimeline(call({ script: { outcome: 'voicemail' } }));
    assert.deepEqual(shape(dropped), ['ringing@0', 'voicemail@500', 'completed@1500']);
    assert.equal(dropped[1].progress.stage === 'voicemail' && dropped[1].progress.messageLeft, true);
    const completed = dropped[2].progress as CompletedReport;
    assert.equal(completed.outcome, 'voicemail');
    assert.equal(completed.disposition, 'voicemail_reached');
    assert.deepEqual(completed.transcript, [
      { speaker: 'agent', content: 'Call us back.', start_time_seconds: 0 },
    ]);

    const silent = simulatedTimeline(call({ script: { outcome: 'voicemail' }, voicemailMessage: null }));
    assert.equal(silent[1].progress.stage === 'voicemail' && silent[1].progress.messageLeft, false);
    assert.deepEqual((silent[2].progress as CompletedReport).transcript, []);
  });

  test('a scripted duration past the call limit is cut at the limit, with the turns said by then', () => {
    const entries = simulatedTimeline(
      call({
        maxDurationSeconds: 60,
        script: {
          outcome: 'answered',
          duration_seconds: 600,
          transcript: [
            { speaker: 'agent', content: 'Hello.', start_time_seconds: 0 },
            { speaker: 'contact', content: 'Tell me everything.', start_time_seconds: 59 },
            { speaker: 'agent', content: 'Well…', start_time_seconds: 61 },
          ],
        },
      }),
    );
    const completed = entries.at(-1)!.progress as CompletedReport;
    assert.equal(completed.durationSeconds, 60);
    assert.equal(completed.disposition, 'max_duration_reached');
    assert.equal(completed.transcript.length, 2);
  });

  test('inbound calls start with the inbound report and carry no platform call id', () => {
    const entries = simulatedTimeline(
      call({
        direction: 'inbound',
        callId: null,
        greeting: null,
        maxDurationSeconds: null,
        voicemailMessage: null,
      }),
    );
    assert.deepEqual(shape(entries), ['inbound@0', 'answered@500', 'completed@1500']);
    const inbound = entries[0].progress;
    assert.equal(inbound.stage === 'inbound' && inbound.to, '+14155550111');
    assert.ok(
      entries.every((entry) => entry.progress.callId === null && entry.progress.direction === 'inbound'),
    );
    assert.equal(
      (entries[2].progress as CompletedReport).transcript[0].content,
      'Thank you for calling. How can I help you today?',
    );
  });
});
