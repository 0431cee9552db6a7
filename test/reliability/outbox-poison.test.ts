import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { webhookJobs } from '../../src/modules/webhooks/jobs.ts';
import { type EventConsumer, relayEvents } from '../../src/platform/events/outbox-relay.ts';
import { startWorker } from '../../src/platform/jobs/runner.ts';
import { buildTestApp, createTenant, eventually, sleep, type TestApp } from '../helpers.ts';
import { createWebhook, emitEvent, type Receiver, startReceiver } from '../webhooks/receiver.ts';

const MAX_ATTEMPTS = 3;
const ENV = {
  OUTBOUND_ALLOW_PRIVATE: 'true',
  WEBHOOK_RETRY_SCHEDULE: '0s,200ms,200ms',
  OUTBOX_MAX_ATTEMPTS: String(MAX_ATTEMPTS),
  OUTBOX_RETRY_BASE: '100ms',
  OUTBOX_RETRY_MAX: '400ms',
  LOG_LEVEL: 'silent',
};

/**
 * One event whose consumer throws, among other tenants' events in the same relay batch: the relay
 * runs as a worker runs it (the webhooks' consumer, the sweep loop, graphile-worker), with one more
 * consumer that throws on the poisoned event.
 */
describe('a poisoned event in the outbox', () => {
  let t: TestApp;
  let receiver: Receiver;
  let stop: (() => Promise<void>) | null = null;

  before(async () => {
    t = await buildTestApp(ENV);
    receiver = await startReceiver();
  });
  after(async () => {
    await stop?.();
    await receiver.close();
    await t.close();
  });

  test('fails alone: every other event is delivered, and it ends dead after OUTBOX_MAX_ATTEMPTS hand-overs', async () => {
    const a = await createTenant(t.app);
    const b = await createTenant(t.app);
    await createWebhook(t, a.agency, { url: `${receiver.url}/a`, events: ['*'] });
    await createWebhook(t, b.agency, { url: `${receiver.url}/b`, events: ['*'] });
    const scopeA = { orgId: a.orgId, clientId: a.clientId };
    const scopeB = { orgId: b.orgId, clientId: b.clientId };

    // The poisoned event first, so it leads the batch the others are claimed in.
    const poisoned = await emitEvent(t, scopeA, 'contact.updated', { poison: true });
    const healthy: string[] = [];
    for (let i = 0; i < 5; i++) {
      healthy.push((await emitEvent(t, scopeA, 'contact.updated', { i })).id);
      healthy.push((await emitEvent(t, scopeB, 'contact.updated', { i })).id);
    }

    let poisonCalls = 0;
    const poison: EventConsumer = async (_db, event) => {
      if (event.data.poison === true) {
        poisonCalls += 1;
        throw new Error('consumer bug: cannot handle this event');
      }
    };
    const webhooks = webhookJobs(t.platform);
    const { config } = t;
    const worker = await startWorker(
      t.database,
      {
        tasks: webhooks.tasks,
        crontab: [],
        loops: [
          {
            name: 'events_outbox',
            intervalMs: 20,
            run: () =>
              relayEvents(t.platform.db, [webhooks.consumer, poison], {
                maxAttempts: config.outboxMaxAttempts,
                retryBaseMs: config.outboxRetryBaseMs,
                retryMaxMs: config.outboxRetryMaxMs,
              }),
          },
          ...webhooks.loops,
        ],
      },
      t.platform.log,
      { concurrency: 2, pollInterval: 200 },
    );
    stop = () => worker.stop();

    const delivered = () => new Set(receiver.requests.map((r) => String(r.headers['x-service-event-id'])));
    await eventually(async () => healthy.every((id) => delivered().has(id)), 30_000);

    await eventually(async () => {
      const { rows } = await t.database.pool.query('SELECT relay_dead_at FROM events WHERE id = $1', [
        poisoned.id,
      ]);
      return rows[0].relay_dead_at !== null;
    }, 30_000);
    const { rows } = await t.database.pool.query(
      'SELECT relay_attempts, relay_error, dispatched_at FROM events WHERE id = $1',
      [poisoned.id],
    );
    assert.equal(rows[0].relay_attempts, MAX_ATTEMPTS);
    assert.match(rows[0].relay_error, /cannot handle this event/);
    assert.equal(rows[0].dispatched_at, null);

    // Dead means left alone: no more hand-overs, while new events still flow.
    const later = await emitEvent(t, scopeB, 'contact.updated', { later: true });
    await eventually(async () => delivered().has(later.id), 30_000);
    await sleep(1000);
    assert.equal(poisonCalls, MAX_ATTEMPTS);
    const { rows: undispatched } = await t.database.pool.query(
      'SELECT id FROM events WHERE dispatched_at IS NULL',
    );
    assert.deepEqual(
      undispatched.map((row) => row.id),
      [poisoned.id],
    );
  });
});
