import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';
import { ADMIN_TOKEN, createTestDatabase, ENCRYPTION_KEY } from '../helpers.ts';
import { startProcess, stopProcess as stop } from '../processes.ts';

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
        assert.ok(!second.output().includes(adminToken), 'the admin token is printed only once');
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
      ENCRYPTION_KEY,
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
