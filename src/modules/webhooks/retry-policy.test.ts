import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { afterFailure } from './dispatcher.ts';
import { isRetryable, jittered, nextDelayMs, parseRetryAfter } from './retry-policy.ts';

const SCHEDULE = [0, 30_000, 300_000, 1_800_000, 14_400_000];

describe('webhook retry policy', () => {
  test('retries 5xx, 408, 429, time-outs and network errors only', () => {
    for (const status of [500, 502, 503, 599, 408, 429])
      assert.ok(isRetryable({ kind: 'response', status, retryAfterMs: null }), String(status));
    for (const status of [400, 401, 403, 404, 410, 422, 301, 302])
      assert.ok(!isRetryable({ kind: 'response', status, retryAfterMs: null }), String(status));
    assert.ok(isRetryable({ kind: 'error', errorClass: 'timeout' }));
    assert.ok(isRetryable({ kind: 'error', errorClass: 'network_error' }));
    assert.ok(!isRetryable({ kind: 'error', errorClass: 'blocked_address' }));
  });

  test('each slot is the delay after the previous attempt, within ±10 %', () => {
    assert.equal(
      nextDelayMs(SCHEDULE, 1, null, () => 0.5),
      30_000,
    );
    assert.equal(
      nextDelayMs(SCHEDULE, 1, null, () => 0),
      27_000,
    );
    assert.equal(
      nextDelayMs(SCHEDULE, 1, null, () => 1),
      33_000,
    );
    assert.equal(
      nextDelayMs(SCHEDULE, 4, null, () => 0.5),
      14_400_000,
    );
    assert.equal(nextDelayMs(SCHEDULE, 5, null), null, 'five attempts, then none');
    for (let i = 0; i < 200; i++) {
      const delay = jittered(300_000);
      assert.ok(delay >= 270_000 && delay <= 330_000);
    }
  });

  test('Retry-After is honoured within the next slot', () => {
    assert.equal(
      nextDelayMs(SCHEDULE, 2, 10_000, () => 0.5),
      10_000,
    );
    assert.equal(
      nextDelayMs(SCHEDULE, 1, 3_600_000, () => 0.5),
      30_000,
      'capped at the slot',
    );
    assert.equal(parseRetryAfter('120'), 120_000);
    const now = Date.parse('2026-01-01T00:00:00Z');
    assert.equal(parseRetryAfter('Thu, 01 Jan 2026 00:01:00 GMT', now), 60_000);
    assert.equal(parseRetryAfter('soon'), null);
    assert.equal(parseRetryAfter(undefined), null);
  });

  test('after a failure: retrying, dead letter after the fifth, failed on a final status, back after a manual attempt', () => {
    const scheduled = { manual: false, resume_status: null, resume_at: null, scheduled_attempts: 0 };
    const e500 = { kind: 'response' as const, status: 500, retryAfterMs: null };
    assert.equal(afterFailure(scheduled, e500, SCHEDULE, true).status, 'retrying');
    assert.equal(
      afterFailure({ ...scheduled, scheduled_attempts: 4 }, e500, SCHEDULE, true).status,
      'dead_letter',
    );
    const e400 = { kind: 'response' as const, status: 400, retryAfterMs: null };
    assert.equal(afterFailure(scheduled, e400, SCHEDULE, true).outcome.deliveryStatus, 'failed');
    const cut = afterFailure(scheduled, e500, SCHEDULE, false);
    assert.deepEqual([cut.status, cut.outcome.deliveryStatus], ['failed', 'skipped']);
    const resumeAt = new Date(Date.now() + 60_000);
    const manual = afterFailure(
      { manual: true, resume_status: 'pending', resume_at: resumeAt, scheduled_attempts: 2 },
      e500,
      SCHEDULE,
      true,
    );
    assert.deepEqual(manual.outcome, {
      deliveryStatus: 'pending',
      scheduledAttempts: 2,
      delayMs: null,
      resumeAt,
    });
    const manualDead = afterFailure(
      { manual: true, resume_status: 'dead_letter', resume_at: null, scheduled_attempts: 5 },
      e500,
      SCHEDULE,
      true,
    );
    assert.equal(manualDead.outcome.deliveryStatus, 'dead_letter');
  });
});
