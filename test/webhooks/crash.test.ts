import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { LOST_LEASES_MAX } from '../../src/modules/webhooks/dispatcher.ts';
import { buildTestApp, createTenant, eventually, type TestApp, testEnv } from '../helpers.ts';
import {
  createWebhook,
  deliveryLog,
  emitEvent,
  type Receiver,
  signatureMatches,
  startReceiver,
} from './receiver.ts';

const root = path.resolve(import.meta.dirname, '..', '..');
const ENV = {
  OUTBOUND_ALLOW_PRIVATE: 'true',
  WEBHOOK_RETRY_SCHEDULE: '0s,200ms,200ms,200ms,200ms',
  WEBHOOK_TIMEOUT_MS: '3000',
};

/** `npm start -- worker` as its own process, against the test's database. */
function startWorkerProcess(databaseUrl: string): ChildProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', 'worker'], {
    cwd: root,
    env: { ...process.env, ...testEnv(databaseUrl, { ...ENV, LOG_LEVEL: 'error', DATABASE_POOL_MAX: '5' }) },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  return child;
}

describe('a worker killed while deliveries are in flight', () => {
  let t: TestApp;
  let receiver: Receiver;
  let child: ChildProcess | null = null;

  before(async () => {
    t = await buildTestApp(ENV);
  });
  after(async () => {
    if (child && child.exitCode === null) child.kill('SIGKILL');
    await receiver?.close();
    await t.close();
  });

  test('loses nothing: after a restart every event is delivered at least once', async () => {
    const tenant = await createTenant(t.app);
    // The receiver holds every request open, so they are in flight when the worker dies.
    receiver = await startReceiver(() => ({ status: 200, delayMs: 60_000 }));
    const { id, secret } = await createWebhook(t, tenant.agency, { url: receiver.url, events: ['*'] });
    const scope = { orgId: tenant.orgId, clientId: tenant.clientId };
    const events: string[] = [];
    for (let i = 0; i < 20; i++) events.push((await emitEvent(t, scope, 'contact.updated', { i })).id);

    const worker = startWorkerProcess(t.database.url);
    child = worker;
    await eventually(() => Promise.resolve(receiver.requests.length >= events.length), 30_000);
    const exited = new Promise((resolve) => worker.once('exit', resolve));
    worker.kill('SIGKILL');
    await exited;

    const { rows: leased } = await t.database.pool.query(
      `SELECT count(*)::int AS n FROM webhook_deliveries
       WHERE subscription_id = $1 AND status = 'pending' AND lease_until > now()`,
      [id],
    );
    assert.equal(leased[0].n, events.length, 'every delivery was in flight when the worker died');

    // More events while no worker runs, then a fresh worker; the receiver now answers at once.
    for (let i = 20; i < 25; i++) events.push((await emitEvent(t, scope, 'contact.updated', { i })).id);
    receiver.handle(() => ({ status: 200 }));
    const inFlightAtKill = receiver.requests.length;
    await t.startWorker();

    await eventually(async () => {
      const answered = new Set(
        receiver.requests
          .slice(inFlightAtKill)
          .map((request) => String(request.headers['x-service-event-id'])),
      );
      return events.every((event) => answered.has(event));
    }, 60_000);
    for (const request of receiver.requests) assert.ok(signatureMatches(request, secret));

    await eventually(async () => {
      const { rows: now } = await t.database.pool.query(
        `SELECT count(*)::int AS n FROM webhook_deliveries WHERE subscription_id = $1 AND status = 'succeeded'`,
        [id],
      );
      return now[0].n === events.length;
    });
  });
});

describe('a delivery whose workers die every time', () => {
  let t: TestApp;
  let receiver: Receiver;

  before(async () => {
    // A retry an hour after the first attempt: only the lost leases below make the delivery due again.
    t = await buildTestApp({ ...ENV, WEBHOOK_RETRY_SCHEDULE: '0s,1h,1h' });
    await t.startWorker();
  });
  after(async () => {
    await receiver?.close();
    await t.close();
  });

  test('is given up as worker_lost instead of sent again; a manual retry sends it', async () => {
    const tenant = await createTenant(t.app);
    receiver = await startReceiver((_request, index) => ({ status: index === 0 ? 503 : 200 }));
    const { id } = await createWebhook(t, tenant.agency, { url: receiver.url, events: ['*'] });
    const event = await emitEvent(
      t,
      { orgId: tenant.orgId, clientId: tenant.clientId },
      'contact.updated',
      {},
    );
    const [first] = await eventually(async () => {
      const log = await deliveryLog(t, tenant.agency, id);
      return log.length === 1 ? log : undefined;
    });
    assert.equal(first.status, 'retrying');

    // Its retry taken by as many workers as are allowed, each of which died before recording: the
    // last one's lease has just run out.
    await t.database.pool.query(
      `UPDATE webhook_deliveries SET next_attempt_at = now(), lease_id = gen_random_uuid(),
         lease_until = now() - interval '1 millisecond', unrecorded_claims = $2
       WHERE subscription_id = $1`,
      [id, LOST_LEASES_MAX],
    );
    const [givenUp] = await eventually(async () => {
      const log = await deliveryLog(t, tenant.agency, id);
      return log.length === 2 ? log : undefined;
    });
    assert.deepEqual(
      [givenUp.attempt, givenUp.status, givenUp.error_class, givenUp.response_status],
      [2, 'failed', 'worker_lost', null],
    );
    assert.match(givenUp.error, /5 workers in a row took this delivery/);
    const { rows } = await t.database.pool.query(
      'SELECT status, unrecorded_claims, lease_id FROM webhook_deliveries WHERE subscription_id = $1',
      [id],
    );
    assert.deepEqual(rows, [{ status: 'failed', unrecorded_claims: 0, lease_id: null }]);
    assert.equal(receiver.requests.length, 1, 'the given-up claim sent nothing');

    const retry = await t.app.inject({
      method: 'POST',
      url: `/v1/webhooks/${id}/deliveries/${givenUp.id}/retry`,
      headers: tenant.agency,
    });
    assert.equal(retry.statusCode, 202);
    await eventually(() => Promise.resolve(receiver.requests.length === 2));
    assert.equal(receiver.requests[1].headers['x-service-event-id'], event.id);
    const [manual] = await eventually(async () => {
      const log = await deliveryLog(t, tenant.agency, id);
      return log.length === 3 ? log : undefined;
    });
    assert.deepEqual([manual.attempt, manual.status, manual.manual], [3, 'succeeded', true]);
  });
});
