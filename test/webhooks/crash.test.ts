import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { buildTestApp, createTenant, eventually, type TestApp, testEnv } from '../helpers.ts';
import { createWebhook, emitEvent, type Receiver, signatureMatches, startReceiver } from './receiver.ts';

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
