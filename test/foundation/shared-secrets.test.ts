import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { ADMIN_TOKEN, createTestDatabase, eventually } from '../helpers.ts';
import { type Started, spawnService, startProcess, stopProcess } from '../processes.ts';
import { type Receiver, signatureMatches, startReceiver } from '../webhooks/receiver.ts';

const withinSeconds = <T>(seconds: number, promise: Promise<T>) =>
  Promise.race([
    promise,
    new Promise<never>((_, reject) =>
      setTimeout(() => reject(new Error(`still running after ${seconds} s`)), seconds * 1000),
    ),
  ]);

describe('several processes on one database share their secrets', () => {
  let database: { url: string; drop: () => Promise<void> };
  let receiver: Receiver;
  const running: Started[] = [];
  const oldKey = randomBytes(32).toString('base64');
  const newKey = randomBytes(32).toString('base64url');

  before(async () => {
    database = await createTestDatabase();
    receiver = await startReceiver();
  });
  after(async () => {
    for (const started of running) await stopProcess(started);
    await receiver.close();
    await database.drop();
  });

  const env = (keys: Record<string, string>) => ({
    DATABASE_URL: database.url,
    DATA_DIR: path.join(os.tmpdir(), `ap-shared-${randomBytes(4).toString('hex')}`),
    OUTBOUND_ALLOW_PRIVATE: 'true',
    ...keys,
  });
  const start = async (role: string, keys: Record<string, string>) => {
    const started = await startProcess(role, env(keys));
    running.push(started);
    return started;
  };

  test('with DATABASE_URL, a process without ADMIN_TOKEN and ENCRYPTION_KEY refuses to start, naming both', async () => {
    const missing: Record<string, string>[] = [{}, { ADMIN_TOKEN }, { ENCRYPTION_KEY: oldKey }];
    for (const keys of missing) {
      const started = await spawnService('api', env(keys));
      running.push(started);
      const code = await withinSeconds(60, started.exited).catch(async (error) => {
        await stopProcess(started);
        throw new Error(`${JSON.stringify(Object.keys(keys))}: ${error.message}\n${started.output()}`);
      });
      assert.equal(code, 1);
      assert.match(started.output(), /ADMIN_TOKEN/);
      assert.match(started.output(), /ENCRYPTION_KEY/);
    }
  });

  test('a webhook made through one api process is signed by a worker process; a page token of one api works on the other; then the keys rotate', async () => {
    const shared = { ADMIN_TOKEN, ENCRYPTION_KEY: oldKey };
    const [a, b, worker] = await Promise.all([
      start('api', shared),
      start('api', shared),
      start('worker', shared),
    ]);
    const url = (started: Started, pathname: string) => `http://127.0.0.1:${started.port}${pathname}`;
    const admin = { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' };
    const call = async (
      started: Started,
      method: string,
      pathname: string,
      headers: Record<string, string>,
      body?: unknown,
    ) => {
      const response = await fetch(url(started, pathname), {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      assert.ok(
        response.status < 300,
        `${method} ${pathname}: ${response.status} ${await response.clone().text()}`,
      );
      return response.json();
    };

    // No demo agency on a database someone else runs, and no secret in the logs.
    for (const started of [a, b, worker])
      assert.doesNotMatch(started.output(), /agency key|client key|admin token/);
    const demo = new pg.Client({ connectionString: database.url });
    await demo.connect();
    const { rows } = await demo.query(`SELECT count(*)::int AS n FROM orgs`).finally(() => demo.end());
    assert.equal(rows[0].n, 0, 'no demo agency was seeded');

    // The admin token is the same on both.
    const { org } = await call(a, 'POST', '/admin/v1/orgs', admin, { name: 'Two processes' });
    const { key } = await call(b, 'POST', `/admin/v1/orgs/${org.id}/keys`, admin, {
      name: 'k',
      kind: 'agency',
    });
    const tenant = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };

    const { secret } = await call(a, 'POST', '/v1/webhooks', tenant, {
      url: `${receiver.url}/hooks`,
      events: ['contact.created'],
    });
    for (const name of ['ada', 'grace', 'edsger'])
      await call(a, 'POST', '/v1/crm/contacts', tenant, { email: `${name}@two.test`, first_name: name });

    // The worker process opens the secret the api process sealed.
    await eventually(async () => receiver.requests.length >= 3, 30_000);
    for (const request of receiver.requests)
      assert.ok(signatureMatches(request, secret), 'signed with the secret');

    // A page token from one api process is good on the other.
    const first = await call(a, 'GET', '/v1/crm/contacts?limit=1', tenant);
    assert.ok(first.next_page_token);
    const second = await call(
      b,
      'GET',
      `/v1/crm/contacts?limit=1&page_token=${first.next_page_token}`,
      tenant,
    );
    assert.equal(second.data.length, 1);
    assert.notEqual(second.data[0].id, first.data[0].id);

    // Rotation: every secret re-sealed under the new key, then the old key can go.
    await stopProcess(worker);
    const rotate = await spawnService(
      'rotate-keys',
      env({ ADMIN_TOKEN, ENCRYPTION_KEYS: `${newKey},${oldKey}`, LOG_LEVEL: 'info' }),
    );
    assert.equal(await withinSeconds(60, rotate.exited), 0, rotate.output());
    assert.match(rotate.output(), /re-encrypted 1 of 1/);

    const rotatedWorker = await start('worker', { ADMIN_TOKEN, ENCRYPTION_KEY: newKey });
    const delivered = receiver.requests.length;
    await call(a, 'POST', '/v1/crm/contacts', tenant, { email: 'barbara@two.test', first_name: 'Barbara' });
    await eventually(async () => receiver.requests.length > delivered, 30_000);
    assert.ok(
      signatureMatches(receiver.requests[delivered], secret),
      'the new key alone opens the re-sealed secret',
    );
    assert.equal(rotatedWorker.child.exitCode, null);

    // While both keys are listed, a page token signed under the old one still pages.
    const bothKeys = await start('api', { ADMIN_TOKEN, ENCRYPTION_KEYS: `${newKey},${oldKey}` });
    const paged = await call(
      bothKeys,
      'GET',
      `/v1/crm/contacts?limit=1&page_token=${first.next_page_token}`,
      tenant,
    );
    assert.equal(paged.data[0].id, second.data[0].id);
  });
});
