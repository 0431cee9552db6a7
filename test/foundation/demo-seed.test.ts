import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';
import pg from 'pg';
import { loadConfig } from '../../src/config.ts';
import { Accounts } from '../../src/modules/users/service.ts';
import { freePort } from '../../src/platform/db/embedded.ts';
import { openDatabase } from '../../src/platform/db/pool.ts';
import { DEMO_OWNER_EMAIL } from '../../src/seed/demo.ts';
import { ADMIN_TOKEN, createTestDatabase, ENCRYPTION_KEY, eventually } from '../helpers.ts';
import { startProcess, stopProcess } from '../processes.ts';

const root = path.resolve(import.meta.dirname, '../..');

async function orgNames(url: string): Promise<string[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<{ name: string }>('SELECT name FROM orgs')).rows.map((row) => row.name);
  } finally {
    await client.end();
  }
}

describe('the demo seed with SEED_DEMO=true on your own database', () => {
  const env = (url: string) => ({
    DATABASE_URL: url,
    ADMIN_TOKEN,
    ENCRYPTION_KEY,
    SEED_DEMO: 'true',
    LOG_LEVEL: 'info',
    DATA_DIR: path.join(os.tmpdir(), 'ap-demo-seed'),
  });

  test('stdout is not a terminal (a log collector): the agency is made, its keys are not printed', async () => {
    const database = await createTestDatabase();
    try {
      const api = await startProcess('api', env(database.url));
      await stopProcess(api);
      assert.deepEqual(await orgNames(database.url), ['Demo Agency']);
      assert.doesNotMatch(api.output(), /gc_live_|cl_live_|password:/);
      assert.match(api.output(), /demo agency created; its keys are not printed/);
    } finally {
      await database.drop();
    }
  });

  test('stdout is a terminal: the keys are printed, once', async () => {
    const database = await createTestDatabase();
    const port = await freePort();
    // `script` gives the service a pseudo-terminal as stdout, as a person's shell would.
    const command = `exec node --import tsx src/main.ts api`;
    const child = spawn('script', ['-qefc', command, '/dev/null'], {
      cwd: root,
      detached: true,
      env: { ...process.env, ...env(database.url), PORT: String(port), FEED_PORT: String(await freePort()) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk) => {
      output += chunk;
    });
    const exited = new Promise((resolve) => child.on('exit', resolve));
    try {
      await eventually(async () => (await fetch(`http://127.0.0.1:${port}/readyz`)).ok, 60_000, 200);
      await eventually(async () => /agency key: gc_live_/.test(output));
      assert.match(output, /client key: cl_live_/);
      // The portal's address and the demo owner's sign-in, which work at once.
      assert.match(output, new RegExp(`The portal: http://127\\.0\\.0\\.1:${port}/portal/sign-in`));
      const owner = /owner: +(\S+) +password: (\S+)/.exec(output);
      assert.ok(owner, output);
      assert.equal(owner[1], DEMO_OWNER_EMAIL);
      const people = new Accounts(
        loadConfig(env(database.url)),
        { send: async () => ({ messageId: '', sent: true }), close: async () => {}, name: 'simulator' },
        null,
      );
      const db = openDatabase(database.url, { max: 1 });
      try {
        const signedIn = await people.signIn(
          db.db,
          { email: owner[1], password: owner[2] },
          { ip: '127.0.0.1' },
        );
        assert.equal(signedIn.user.role, 'owner');
        const clientUser = /client user: +(\S+) +password: (\S+)/.exec(output)!;
        const client = await people.signIn(
          db.db,
          { email: clientUser[1], password: clientUser[2] },
          { ip: '127.0.0.1' },
        );
        assert.equal(client.user.role, 'client');
      } finally {
        await db.close();
      }
    } finally {
      process.kill(-(child.pid as number), 'SIGTERM');
      await exited;
      await database.drop();
    }
  });
});
