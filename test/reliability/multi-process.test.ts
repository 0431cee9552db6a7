import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Call } from '../crm/crm-client.ts';
import { buildTestApp, createTenant, eventually, sleep, type TestApp, testEnv } from '../helpers.ts';
import type { Started } from '../processes.ts';
import { redisServerAvailable, startRedisServer } from '../redis-server.ts';
import { assertDialedOnceEach, enableSdr, scheduledCampaign, startNow } from '../sdr/support.ts';
import { enroll, newContact, newSequence } from '../sequences/support.ts';
import { addr } from '../wallet-feed/support.ts';
import { type Receiver, startReceiver } from '../webhooks/receiver.ts';
import { type Fleet, startProcesses, startWorkers } from './takeover.ts';

const LIMIT = 40;
const CONTACTS = Number(process.env.CHAOS_CONTACTS ?? 40);
const TASKS = 12;
const ENROLLMENTS = 30;
const CAMPAIGNS = 4;
const PROSPECTS = 5;
const WALLET_REFRESH_MS = 2000;

/**
 * Two `api` and two `worker` processes on one PostgreSQL and one Redis (the machine's when REDIS_URL
 * is set, else a throwaway redis-server). Every process is started as `npm start -- api|worker`
 * starts it, on ports of its own.
 */
describe('2 api + 2 worker processes on one database', {
  skip: !process.env.REDIS_URL && !redisServerAvailable() && 'no Redis',
}, () => {
  let t: TestApp;
  let redis: ChildProcess | null = null;
  let apis: Started[] = [];
  let fleet: Fleet | null = null;
  let receiver: Receiver;
  let dir = '';

  before(async () => {
    t = await buildTestApp();
    let redisUrl = process.env.REDIS_URL;
    if (!redisUrl) {
      const started = await startRedisServer();
      redis = started.process;
      redisUrl = started.url;
    }
    receiver = await startReceiver();
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'multi-process-'));
    const holdings = path.join(dir, 'holdings.json');
    await fs.writeFile(
      holdings,
      JSON.stringify({
        collection: addr(0xc0),
        tokens: [{ token_id: '1', owner: addr(1) }],
        delegations: [],
      }),
    );
    const env = testEnv(t.database.url, {
      REDIS_URL: redisUrl,
      OUTBOUND_ALLOW_PRIVATE: 'true',
      WEBHOOK_RETRY_SCHEDULE: '0s,200ms,200ms,200ms',
      TASK_REMINDER_MINUTES: '30',
      WALLET_INDEX_REFRESH_MS: String(WALLET_REFRESH_MS),
      CHAIN_HOLDINGS_FILE: holdings,
      COLLECTION_ADDRESS: addr(0xc0),
      SEQUENCE_TICK_MS: '100',
      SEQUENCE_MINUTE_MS: '1000',
      SDR_TICK_MS: '100',
      VOICE_SIMULATOR_CALL_MS: '200',
    });
    apis = await startProcesses('api', 2, env);
    fleet = await startWorkers(2, env);
  });
  after(async () => {
    await fleet?.stop();
    for (const api of apis) api.child.kill('SIGKILL');
    await Promise.all(apis.map((api) => api.exited));
    redis?.kill('SIGKILL');
    await receiver?.close();
    await t.close();
    if (dir) await fs.rm(dir, { recursive: true, force: true });
  });

  const url = (i: number, path: string) => `http://127.0.0.1:${apis[i % apis.length].port}${path}`;

  /** Calls `/v1` with a tenant's headers, each request through the next API process in turn. */
  function through(tenantHeaders: Record<string, string>): Call {
    let i = 0;
    return async (method, path, payload, headers = {}) => {
      const response = await fetch(url(i++, `/v1${path}`), {
        method,
        headers: { ...tenantHeaders, ...headers, 'content-type': 'application/json' },
        body: payload === undefined ? undefined : JSON.stringify(payload),
      });
      const text = await response.text();
      return {
        status: response.status,
        body: text ? JSON.parse(text) : undefined,
        headers: Object.fromEntries(response.headers),
      };
    };
  }

  test("a key's per-minute limit holds across both API processes: exactly the limit admitted", async () => {
    const tenant = await createTenant(t.app, { rateLimit: LIMIT });
    const statuses = await Promise.all(
      Array.from({ length: LIMIT * 2 }, (_, i) =>
        fetch(url(i, '/v1/me'), { headers: tenant.agency }).then((response) => response.status),
      ),
    );
    assert.equal(statuses.filter((status) => status === 200).length, LIMIT, statuses.join(','));
    assert.equal(statuses.filter((status) => status === 429).length, LIMIT);
  });

  test('events from both APIs are delivered by both workers, each once (no retry was needed)', async () => {
    const tenant = await createTenant(t.app);
    const headers = { ...tenant.agency, 'content-type': 'application/json' };
    const hook = await fetch(url(0, '/v1/webhooks'), {
      method: 'POST',
      headers,
      body: JSON.stringify({ url: receiver.url, events: ['contact.created'] }),
    });
    assert.equal(hook.status, 201);
    const ids = await Promise.all(
      Array.from({ length: CONTACTS }, async (_, i) => {
        const response = await fetch(url(i, '/v1/crm/contacts'), {
          method: 'POST',
          headers: { ...headers, 'idempotency-key': `multi-${i}` },
          body: JSON.stringify({ email: `m${i}@multi.test` }),
        });
        assert.equal(response.status, 201);
        return (await response.json()).contact.id as string;
      }),
    );
    const received = () =>
      receiver.requests.map((request) => request.body?.data?.object?.id ?? request.body?.data?.id);
    await eventually(async () => ids.every((id) => received().includes(id)), 30_000);
    await sleep(1000);
    const counts = new Map<string, number>();
    for (const id of received()) counts.set(id, (counts.get(id) ?? 0) + 1);
    const { rows } = await t.database.pool.query(
      `SELECT d.event_id, d.attempts, d.status FROM webhook_deliveries d
       JOIN webhook_subscriptions s ON s.id = d.subscription_id WHERE s.org_id = $1`,
      [tenant.orgId],
    );
    assert.equal(rows.length, CONTACTS);
    for (const row of rows) assert.deepEqual([row.status, row.attempts], ['succeeded', 1]);
    // A duplicate would need a retry to explain it, and there was none.
    assert.deepEqual(
      [...counts.values()].filter((n) => n !== 1),
      [],
    );
  });

  test('tick-driven work runs once per due item: task reminders and the wallet index refresh', {
    timeout: 90_000,
  }, async () => {
    const tenant = await createTenant(t.app);
    const headers = { ...tenant.agency, 'content-type': 'application/json' };
    const taskIds: string[] = [];
    for (let i = 0; i < TASKS; i++) {
      const response = await fetch(url(i, '/v1/crm/tasks'), {
        method: 'POST',
        headers,
        body: JSON.stringify({ title: `due ${i}`, due_at: new Date(Date.now() + 10 * 60_000).toISOString() }),
      });
      assert.equal(response.status, 201, await response.clone().text());
      taskIds.push((await response.json()).task.id);
    }

    // The wallet index: every refresh notes attempted_at; two workers must not refresh twice per interval.
    const attempts = new Set<number>();
    const sampling = (async () => {
      const until = Date.now() + 12_000;
      while (Date.now() < until) {
        const { rows } = await t.database.pool.query('SELECT attempted_at FROM feed_index_state');
        if (rows[0]?.attempted_at) attempts.add(rows[0].attempted_at.getTime());
        await sleep(50);
      }
    })();

    // Cron runs task_reminders at the next minute boundary, in one of the two workers.
    await eventually(
      async () => {
        const { rows } = await t.database.pool.query(
          `SELECT count(*)::int AS n FROM tasks WHERE id = ANY($1::uuid[]) AND reminded_at IS NOT NULL`,
          [taskIds],
        );
        return rows[0].n === TASKS;
      },
      75_000,
      250,
    );
    await sampling;
    await sleep(1000);
    const { rows } = await t.database.pool.query(
      `SELECT data->>'id' AS id, count(*)::int AS n FROM events
       WHERE type = 'task.due_soon' AND org_id = $1 GROUP BY 1`,
      [tenant.orgId],
    );
    assert.equal(rows.length, TASKS);
    assert.deepEqual(
      rows.filter((row) => row.n !== 1),
      [],
    );

    const times = [...attempts].sort((a, b) => a - b);
    assert.ok(times.length >= 3, `the index was refreshed (${times.length} times)`);
    for (let i = 1; i < times.length; i++)
      assert.ok(
        times[i] - times[i - 1] >= WALLET_REFRESH_MS * 0.9,
        `two refreshes ${times[i] - times[i - 1]} ms apart (interval ${WALLET_REFRESH_MS} ms)`,
      );
  });

  test('tick-driven work runs once per due item: sequence steps and SDR dials', {
    timeout: 120_000,
  }, async () => {
    const tenant = await createTenant(t.app);
    const client = through(tenant.client);
    const agency = through(tenant.agency);
    const pool = t.database.pool;

    // A sequence of two emails whose enrollments all fall due at once: it is paused while enrolling.
    const sequence = await newSequence(client, [
      { kind: 'email', wait_minutes: 0, subject: 'Hi {{first_name}}', body: 'One' },
      { kind: 'email', wait_minutes: 0, subject: 'Again', body: 'Two' },
    ]);
    assert.equal((await client('PATCH', `/sequences/${sequence.id}`, { status: 'paused' })).status, 200);
    const enrollments: string[] = [];
    for (let i = 0; i < ENROLLMENTS; i++)
      enrollments.push((await enroll(client, sequence.id, (await newContact(client)).id)).id);

    // SDR campaigns, each dialing all its prospects at once.
    const from = '+14155550902';
    await enableSdr(t, tenant, from);
    const campaigns: string[] = [];
    for (let c = 0; c < CAMPAIGNS; c++) {
      const contacts: string[] = [];
      for (let p = 0; p < PROSPECTS; p++) contacts.push((await newContact(client)).id);
      campaigns.push(await scheduledCampaign(agency, from, `Both workers ${c}`, contacts));
    }

    // Both fall due now, while both workers tick.
    assert.equal((await client('PATCH', `/sequences/${sequence.id}`, { status: 'active' })).status, 200);
    await startNow(pool, campaigns);
    await eventually(
      async () => {
        const { rows } = await pool.query(
          `SELECT (SELECT count(*)::int FROM sequence_enrollments
                   WHERE sequence_id = $1 AND status = 'completed') AS enrollments,
                  (SELECT count(*)::int FROM sdr_campaigns
                   WHERE id = ANY($2::uuid[]) AND status = 'completed') AS campaigns`,
          [sequence.id, campaigns],
        );
        if (rows[0].enrollments === ENROLLMENTS && rows[0].campaigns === CAMPAIGNS) return true;
        // What a time-out reports: how far each got.
        const { rows: states } = await pool.query(
          `SELECT status, paused_reason, current_step, count(*)::int AS n FROM sequence_enrollments
           WHERE sequence_id = $1 GROUP BY 1, 2, 3`,
          [sequence.id],
        );
        throw new Error(`completed: ${JSON.stringify(rows[0])}, enrollments: ${JSON.stringify(states)}`);
      },
      90_000,
      250,
    );

    const { rows: steps } = await pool.query(
      `SELECT array_agg(step_index ORDER BY step_index) AS steps FROM sequence_step_sends
       WHERE enrollment_id = ANY($1::uuid[]) GROUP BY enrollment_id`,
      [enrollments],
    );
    assert.equal(steps.length, ENROLLMENTS);
    for (const row of steps) assert.deepEqual(row.steps, [0, 1], 'each step once');
    const keys = enrollments.flatMap((id) => [`sequence_step:${id}:0`, `sequence_step:${id}:1`]);
    const { rows: emails } = await pool.query(
      'SELECT count(*)::int AS n, count(DISTINCT key)::int AS keys FROM email_messages WHERE key = ANY($1::text[])',
      [keys],
    );
    assert.deepEqual(emails[0], { n: keys.length, keys: keys.length }, 'one email per step');

    await assertDialedOnceEach(pool, campaigns, CAMPAIGNS * PROSPECTS);
  });
});
