import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type Call, caller } from '../crm/crm-client.ts';
import { buildTestApp, createTenant, type TestApp, testEnv } from '../helpers.ts';
import { enroll, eventually, newContact, newSequence } from './support.ts';

const root = path.resolve(import.meta.dirname, '..', '..');
const ENV = { SEQUENCE_TICK_MS: '100', SEQUENCE_MINUTE_MS: '1000', SEQUENCE_LEASE_MS: '5000' };
const ENROLLMENTS = 300;

describe('a worker process killed mid-tick', () => {
  let t: TestApp;
  let call: Call;
  let child: ChildProcess | null = null;

  before(async () => {
    t = await buildTestApp(ENV);
    call = caller(t, (await createTenant(t.app)).client);
  });
  after(async () => {
    if (child && child.exitCode === null) child.kill('SIGKILL');
    await t.close();
  });

  const sent = async () => {
    const { rows } = await t.database.pool.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM sequence_step_sends',
    );
    return rows[0].n;
  };

  test('no step is sent twice or skipped: the next worker takes over the dead one’s claims after the lease', async () => {
    const sequence = await newSequence(call, [
      { kind: 'email', wait_minutes: 0, subject: 'Hi {{first_name}}', body: 'One' },
      { kind: 'email', wait_minutes: 0, subject: 'Again', body: 'Two' },
    ]);
    // Paused while enrolling, so that the whole batch falls due at once.
    await call('PATCH', `/sequences/${sequence.id}`, { status: 'paused' });
    const ids: string[] = [];
    for (let i = 0; i < ENROLLMENTS; i++)
      ids.push((await enroll(call, sequence.id, (await newContact(call, { first_name: `L${i}` })).id)).id);
    await call('PATCH', `/sequences/${sequence.id}`, { status: 'active' });

    const worker = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', 'worker'], {
      cwd: root,
      env: {
        ...process.env,
        ...testEnv(t.database.url, { ...ENV, LOG_LEVEL: 'error', DATABASE_POOL_MAX: '5' }),
      },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    child = worker;
    await eventually(async () => (await sent()) > 0, 60_000, 10);
    const exited = new Promise((resolve) => worker.once('exit', resolve));
    worker.kill('SIGKILL');
    await exited;
    const atKill = await sent();
    assert.ok(atKill < ENROLLMENTS * 2, `killed mid-tick (${atKill} of ${ENROLLMENTS * 2} steps sent)`);
    const { rows: leased } = await t.database.pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM sequence_enrollments WHERE lease_until > now() AND status = 'active'`,
    );
    assert.ok(leased[0].n > 0, 'the dead worker left claims behind');

    await t.startWorker();
    await eventually(async () => {
      const { rows } = await t.database.pool.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM sequence_enrollments WHERE sequence_id = $1 AND status = 'completed'`,
        [sequence.id],
      );
      return rows[0].n === ENROLLMENTS;
    }, 90_000);

    const { rows: perEnrollment } = await t.database.pool.query<{ steps: number[]; n: number }>(
      `SELECT array_agg(step_index ORDER BY step_index) AS steps, count(*)::int AS n
       FROM sequence_step_sends WHERE enrollment_id = ANY($1::uuid[]) GROUP BY enrollment_id`,
      [ids],
    );
    assert.equal(perEnrollment.length, ENROLLMENTS);
    for (const row of perEnrollment)
      assert.deepEqual(row.steps, [0, 1], 'both steps, once each, none skipped');
    const { rows: emails } = await t.database.pool.query<{ n: number; keys: number }>(
      `SELECT count(*)::int AS n, count(DISTINCT key)::int AS keys FROM email_messages
       WHERE key LIKE 'sequence_step:%'`,
    );
    assert.deepEqual(emails[0], { n: ENROLLMENTS * 2, keys: ENROLLMENTS * 2 }, 'one email per step');
    const { rows: activities } = await t.database.pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM activities WHERE activity_type = 'email'`,
    );
    assert.equal(
      activities[0].n,
      ENROLLMENTS * 2,
      'one timeline entry per step (rolled back with a dead step)',
    );
  });
});
