import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { type EmbeddedDatabase, freePort, startEmbeddedPostgres } from '../../src/platform/db/embedded.ts';
import { ADMIN_TOKEN, ENCRYPTION_KEY, eventually, sleep } from '../helpers.ts';
import { type Receiver, startReceiver } from '../webhooks/receiver.ts';

const root = path.resolve(import.meta.dirname, '../..');
const WRITERS = 6;
/** What a careful client gives one request before it gives up on it. */
const REQUEST_TIMEOUT_MS = 15_000;
/** `npm run chaos` makes the outage longer. */
const OUTAGE_MS = Number(process.env.CHAOS_OUTAGE_MS ?? 6000);

/**
 * The service runs as its own process against a PostgreSQL this test owns, while clients keep
 * creating contacts (each with its own Idempotency-Key, retried until acknowledged) and a real
 * receiver takes the webhooks. The database is stopped across a minute boundary (when cron ticks)
 * and started again.
 */
describe('PostgreSQL restarts under load', () => {
  let dataDir: string;
  let database: EmbeddedDatabase;
  let service: ChildProcess;
  let receiver: Receiver;
  let output = '';
  let api: string;

  before(async () => {
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'ap-pg-restart-'));
    await fs.chmod(dataDir, 0o755);
    database = await startEmbeddedPostgres(path.join(dataDir, 'postgres'), {
      password: 'restart',
      fast: true,
    });
    receiver = await startReceiver();
    const port = await freePort();
    api = `http://127.0.0.1:${port}`;
    const env = { ...process.env };
    delete env.REDIS_URL;
    service = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', 'serve'], {
      cwd: root,
      env: {
        ...env,
        DATABASE_URL: database.url,
        ADMIN_TOKEN,
        ENCRYPTION_KEY,
        DATA_DIR: dataDir,
        PORT: String(port),
        FEED_PORT: String(await freePort()),
        LOG_LEVEL: 'info',
        OUTBOUND_ALLOW_PRIVATE: 'true',
        WEBHOOK_RETRY_SCHEDULE: '0s,500ms,1s,2s,2s,2s,2s,2s',
        DATABASE_CONNECT_TIMEOUT: '2s',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    service.stdout?.on('data', (chunk) => {
      output += chunk;
    });
    service.stderr?.on('data', (chunk) => {
      output += chunk;
    });
    await eventually(
      async () => {
        if (service.exitCode !== null) throw new Error(`exited early: ${output}`);
        return (await fetch(`${api}/readyz`)).ok;
      },
      60_000,
      200,
    );
  });

  after(async () => {
    if (service.exitCode === null) {
      service.kill('SIGTERM');
      await new Promise((resolve) => service.once('exit', resolve));
    }
    await receiver.close();
    await database.stop();
    await fs.rm(dataDir, { recursive: true, force: true });
  });

  // Waits for a minute boundary twice (the outage straddles one, cron's next run is at the following
  // one): test/run.ts gives each file 7 minutes for it.
  test('503 with Retry-After while it is down; afterwards every acknowledged write exists once and its event arrives', async () => {
    const admin = { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' };
    const call = async (method: string, url: string, body: unknown, headers = admin) => {
      const response = await fetch(`${api}${url}`, { method, headers, body: JSON.stringify(body) });
      assert.ok(
        response.status < 300,
        `${method} ${url}: ${response.status} ${await response.clone().text()}`,
      );
      return response.json();
    };
    const { org } = await call('POST', '/admin/v1/orgs', { name: 'Restart' });
    const { key } = await call('POST', `/admin/v1/orgs/${org.id}/keys`, {
      name: 'writer',
      kind: 'agency',
      rate_limit_per_minute: 1_000_000,
    });
    const tenant = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    await call('POST', '/v1/webhooks', { url: `${receiver.url}/hooks`, events: ['contact.created'] }, tenant);

    const acknowledged = new Map<string, string>();
    const unexpected: string[] = [];
    const inProgressAt: number[] = [];
    let unavailable = 0;
    let slowest = 0;
    let writing = true;
    /** A key not acknowledged by then never will be: the test says so rather than waiting on. */
    let giveUpAt = Number.POSITIVE_INFINITY;
    const writer = async (w: number) => {
      for (let n = 0; writing; n++) {
        const email = `w${w}-${n}@restart.test`;
        for (;;) {
          if (Date.now() > giveUpAt) {
            unexpected.push(`${email}: never acknowledged`);
            return;
          }
          const started = Date.now();
          let response: Response;
          try {
            response = await fetch(`${api}/v1/crm/contacts`, {
              method: 'POST',
              headers: { ...tenant, 'idempotency-key': `restart-${w}-${n}` },
              body: JSON.stringify({ email, first_name: 'Restart' }),
              signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
            });
          } catch (error) {
            unexpected.push(`${email}: ${error}`);
            await sleep(500);
            continue;
          }
          slowest = Math.max(slowest, Date.now() - started);
          const body = await response.json().catch(() => null);
          if (response.status === 201) {
            acknowledged.set(email, body.contact.id);
            break;
          }
          const retryAfter = Number(response.headers.get('retry-after'));
          if (response.status === 503 && body?.error === 'service_unavailable' && retryAfter >= 1)
            unavailable += 1;
          else if (response.status === 409 && body?.error === 'idempotency_in_progress')
            inProgressAt.push(Date.now());
          else unexpected.push(`${email}: ${response.status} ${JSON.stringify(body)}`);
          await sleep(Math.min(retryAfter || 1, 2) * 1000);
        }
      }
    };

    const writers = Array.from({ length: WRITERS }, (_, w) => writer(w));
    // Down across a minute boundary, when cron schedules its jobs.
    await sleep(Math.max(2000, msUntilSecond(57)));
    const before = acknowledged.size;
    await database.stop();
    await sleep(OUTAGE_MS);
    database = await startEmbeddedPostgres(path.join(dataDir, 'postgres'), {
      password: 'restart',
      fast: true,
      port: database.port,
    });
    const backAt = Date.now();
    giveUpAt = backAt + 20_000;
    const during = acknowledged.size;
    await sleep(3000);
    writing = false;
    await Promise.all(writers);

    assert.equal(service.exitCode, null, `the service survived:\n${output.slice(-3000)}`);
    assert.deepEqual(
      unexpected.slice(0, 10),
      [],
      'never a 500, a hang past the request time-out or a dropped connection',
    );
    assert.ok(slowest < REQUEST_TIMEOUT_MS, `slowest request ${slowest} ms`);
    assert.ok(unavailable > 0, 'requests during the outage were answered 503');
    assert.ok(
      before > 0 && acknowledged.size > during,
      `${before} before, ${during} by the restart, ${acknowledged.size} in all`,
    );
    const lateConflicts = inProgressAt.filter((at) => at > backAt + 3000);
    assert.deepEqual(lateConflicts, [], 'no Idempotency-Key stays in progress once the database is back');

    // Pools reconnected: ready again, and every acknowledged write exists exactly once.
    await eventually(async () => (await fetch(`${api}/readyz`)).ok, 20_000, 200);
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      const { rows } = await client.query<{ id: string; email: string; events: number }>(
        `SELECT c.id, c.primary_email AS email,
                (SELECT count(*)::int FROM events e WHERE e.type = 'contact.created' AND e.data->>'id' = c.id::text) AS events
         FROM contacts c WHERE c.org_id = $1`,
        [org.id],
      );
      assert.equal(rows.length, acknowledged.size, 'one contact per acknowledged write, nothing else');
      for (const row of rows) {
        assert.equal(acknowledged.get(row.email), row.id, row.email);
        assert.equal(row.events, 1, `${row.email}: one contact.created`);
      }

      // The worker resumed: its queue runs jobs, and cron runs again after failing at the minute.
      await client.query(`SELECT graphile_worker.add_job('idempotency_cleanup')`);
      await eventually(async () => {
        const jobs = await client.query(
          `SELECT 1 FROM graphile_worker.jobs WHERE task_identifier = 'idempotency_cleanup'`,
        );
        return jobs.rowCount === 0;
      }, 20_000);
    } finally {
      await client.end();
    }
    await eventually(async () => cronStartedSince(output, backAt), 30_000, 200).catch(() => {
      throw new Error(`cron did not run again after the outage:\n${output.slice(-3000)}`);
    });

    // Every event of an acknowledged write reaches the receiver, at least once.
    await eventually(
      async () => {
        const delivered = new Set(receiver.requests.map((request) => request.body?.data?.id));
        return [...acknowledged.values()].every((id) => delivered.has(id));
      },
      30_000,
      200,
    );
  });
});

function msUntilSecond(second: number): number {
  const now = Date.now();
  const into = now % 60_000;
  const target = second * 1000;
  return into < target ? target - into : 60_000 - into + target;
}

function cronStartedSince(log: string, since: number): boolean {
  return log.split('\n').some((line) => {
    if (!line.includes('"cron running"')) return false;
    try {
      return JSON.parse(line).time > since;
    } catch {
      return false;
    }
  });
}
