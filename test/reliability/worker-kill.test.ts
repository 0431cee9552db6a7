import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { buildTestApp, createTenant, type TestApp, testEnv } from '../helpers.ts';
import { createWebhook, emitEvent, type Receiver, startReceiver } from '../webhooks/receiver.ts';
import { type Fleet, jobsLockedBy, jobWorkerIds, killMidWork, startWorkers } from './takeover.ts';

/** `npm run chaos` raises these. */
const EVENTS = Number(process.env.CHAOS_EVENTS ?? 30);
const ITERATIONS = Number(process.env.CHAOS_ITERATIONS ?? 1);
const STALE_AFTER_MS = 3000;
const ENV = {
  OUTBOUND_ALLOW_PRIVATE: 'true',
  WEBHOOK_RETRY_SCHEDULE: '0s,200ms,200ms,200ms,200ms,200ms,200ms,200ms',
  WEBHOOK_TIMEOUT_MS: '8000',
  WEBHOOK_CONCURRENCY: '5',
  WORKER_STALE_AFTER: `${STALE_AFTER_MS}ms`,
};

/**
 * Two worker processes deliver webhooks to a real receiver that holds every request open; the first
 * is killed with SIGKILL once it is mid-delivery inside a graphile-worker job (a dispatcher hands
 * over to a `webhook_dispatch` job after its run budget). The other takes over: every event reaches
 * the receiver, and the job the dead worker held is unlocked within WORKER_STALE_AFTER (plus a beat)
 * rather than graphile-worker's 4 hours.
 */
describe('kill -9 of a worker in the middle of webhook delivery', () => {
  let t: TestApp;
  let receiver: Receiver | null = null;
  let fleet: Fleet | null = null;

  before(async () => {
    t = await buildTestApp(ENV);
  });
  after(async () => {
    await fleet?.stop();
    await receiver?.close();
    await t.close();
  });

  test("another worker takes over: no event is lost, and the dead worker's jobs are unlocked", {
    timeout: 120_000 * ITERATIONS,
  }, async () => {
    for (let iteration = 1; iteration <= ITERATIONS; iteration++) {
      receiver = await startReceiver(() => ({ status: 200, delayMs: 60_000 }));
      const hooks = receiver;
      const tenant = await createTenant(t.app);
      const { id: subscriptionId } = await createWebhook(t, tenant.agency, { url: hooks.url, events: ['*'] });
      const scope = { orgId: tenant.orgId, clientId: tenant.clientId };
      const events: string[] = [];
      for (let i = 0; i < EVENTS; i++) events.push((await emitEvent(t, scope, 'contact.updated', { i })).id);

      fleet = await startWorkers(2, testEnv(t.database.url, ENV));
      const pool = t.database.pool;
      let held: { id: string; task: string }[] = [];
      await killMidWork(fleet, async (worker) => {
        held = await jobsLockedBy(pool, await jobWorkerIds(pool, worker));
        return held.some((job) => job.task === 'webhook_dispatch') && hooks.requests.length > 0;
      });
      const victim = fleet.victim;
      const victimIds = await jobWorkerIds(pool, victim);
      assert.ok(held.length > 0, 'the victim held a graphile-worker job when it died');

      // The receiver answers at once from now on; every event must arrive with a 200.
      const before = hooks.requests.length;
      hooks.handle(() => ({ status: 200 }));
      const answered = () =>
        new Set(hooks.requests.slice(before).map((request) => String(request.headers['x-service-event-id'])));

      const unlockedAfter = await fleet.tookOver(
        async () => (await jobsLockedBy(pool, victimIds)).length === 0,
        STALE_AFTER_MS + 10_000,
      );
      assert.ok(unlockedAfter < STALE_AFTER_MS + 8000, `unlocked ${unlockedAfter} ms after the kill`);
      const deliveredAfter = await fleet.tookOver(
        async () => events.every((id) => answered().has(id)),
        60_000,
      );
      const { rows } = await pool.query(
        `SELECT count(*)::int AS n FROM webhook_deliveries WHERE subscription_id = $1 AND status = 'succeeded'`,
        [subscriptionId],
      );
      assert.equal(rows[0].n, events.length);
      const { rows: beats } = await pool.query(
        'SELECT jobs_released_at FROM worker_heartbeats WHERE pid = $1',
        [victim.child.pid],
      );
      assert.notEqual(beats[0].jobs_released_at, null, 'the victim was taken for dead');
      console.log(
        `# takeover ${iteration}/${ITERATIONS}: jobs unlocked ${unlockedAfter} ms, all ${events.length} events delivered ${deliveredAfter} ms after the kill`,
      );
      await fleet.stop();
      fleet = null;
      await hooks.close();
      receiver = null;
    }
  });
});
