import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';
import { freePort } from '../../src/platform/db/embedded.ts';
import { ADMIN_TOKEN, createTestDatabase, eventually } from '../helpers.ts';

const root = path.resolve(import.meta.dirname, '../..');

interface Started {
  child: ChildProcess;
  port: number;
  output: () => string;
  exited: Promise<number | null>;
}

async function startProcess(role: string, env: Record<string, string>): Promise<Started> {
  const port = await freePort();
  const feedPort = await freePort();
  const baseEnv = { ...process.env };
  delete baseEnv.DATABASE_URL;
  delete baseEnv.REDIS_URL;
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', role], {
    cwd: root,
    env: { ...baseEnv, PORT: String(port), FEED_PORT: String(feedPort), LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk) => {
    output += chunk;
  });
  child.stderr?.on('data', (chunk) => {
    output += chunk;
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  await eventually(
    async () => {
      if (child.exitCode !== null) throw new Error(`exited early: ${output}`);
      const response = await fetch(`http://127.0.0.1:${port}/readyz`);
      return response.ok;
    },
    120_000,
    200,
  );
  return { child, port, output: () => output, exited };
}

async function stop(started: Started): Promise<number | null> {
  started.child.kill('SIGTERM');
  return started.exited;
}

describe('processes', () => {
  test('npm start on the embedded database: demo credentials once, data kept across restarts, clean SIGTERM', async () => {
    const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'ap-restart-'));
    await fs.chmod(dataDir, 0o755);
    try {
      const first = await startProcess('serve', { DATA_DIR: dataDir });
      const agencyKey = /agency key: (\S+)/.exec(first.output())?.[1];
      const adminToken = /admin token: (\S+)/.exec(first.output())?.[1];
      assert.ok(agencyKey, first.output());
      assert.ok(adminToken);
      assert.equal((await fs.readFile(path.join(dataDir, 'admin-token'), 'utf8')).trim(), adminToken);

      const api = (port: number) => `http://127.0.0.1:${port}`;
      const me = await fetch(`${api(first.port)}/v1/me`, {
        headers: { authorization: `Bearer ${agencyKey}` },
      });
      assert.equal(me.status, 200);
      const created = await fetch(`${api(first.port)}/admin/v1/orgs`, {
        method: 'POST',
        headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'Survives restarts' }),
      });
      const { org } = await created.json();

      assert.equal(await stop(first), 0);
      assert.ok(!existsSync(path.join(dataDir, 'postgres', 'postmaster.pid')), 'PostgreSQL stopped cleanly');

      const second = await startProcess('serve', { DATA_DIR: dataDir });
      try {
        assert.ok(!second.output().includes('agency key:'), 'demo credentials are printed only once');
        const again = await fetch(`${api(second.port)}/v1/me`, {
          headers: { authorization: `Bearer ${agencyKey}` },
        });
        assert.equal(again.status, 200);
        const read = await fetch(`${api(second.port)}/admin/v1/orgs/${org.id}`, {
          headers: { authorization: `Bearer ${adminToken}` },
        });
        assert.equal(read.status, 200);
        assert.equal((await read.json()).org.name, 'Survives restarts');
      } finally {
        assert.equal(await stop(second), 0);
      }
    } finally {
      await fs.rm(dataDir, { recursive: true, force: true });
    }
  });

  test('two api processes share one rate limit through Redis', {
    skip: !process.env.REDIS_URL && 'REDIS_URL not set',
  }, async () => {
    const database = await createTestDatabase();
    const env = {
      DATABASE_URL: database.url,
      REDIS_URL: process.env.REDIS_URL ?? '',
      ADMIN_TOKEN,
      SEED_DEMO: 'false',
      DATA_DIR: path.join(os.tmpdir(), 'ap-redis-test'),
    };
    const a = await startProcess('api', env);
    const b = await startProcess('api', env);
    try {
      const headers = { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' };
      const { org } = await (
        await fetch(`http://127.0.0.1:${a.port}/admin/v1/orgs`, {
          method: 'POST',
          headers,
          body: JSON.stringify({ name: 'Shared limit' }),
        })
      ).json();
      const { key } = await (
        await fetch(`http://127.0.0.1:${a.port}/admin/v1/orgs/${org.id}/keys`, {
          method: 'POST',
          headers,
          body: JSON.stringify({ name: 'limited', kind: 'agency', rate_limit_per_minute: 10 }),
        })
      ).json();
      const statuses: number[] = [];
      for (let i = 0; i < 8; i++) {
        for (const port of [a.port, b.port]) {
          const response = await fetch(`http://127.0.0.1:${port}/v1/me`, {
            headers: { authorization: `Bearer ${key}` },
          });
          statuses.push(response.status);
        }
      }
      assert.equal(statuses.filter((status) => status === 200).length, 10, statuses.join(','));
      assert.equal(statuses.filter((status) => status === 429).length, 6);
    } finally {
      await stop(a);
      await stop(b);
      await database.drop();
    }
  });
});
