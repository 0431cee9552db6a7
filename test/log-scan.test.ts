import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { scanServiceLog } from './log-scan.ts';

test('the log scan finds a key, a webhook secret and the admin token, and passes a clean log', async () => {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'log-scan-'));
  const key = `cl_live_${'a'.repeat(43)}`;
  await fs.writeFile(path.join(dir, '1.log'), `{"msg":"request","url":"/v1/me"}\n{"msg":"ok"}\n`);
  assert.deepEqual((await scanServiceLog(dir)).findings, []);
  await fs.writeFile(
    path.join(dir, '2.log'),
    `{"headers":{"authorization":"Bearer ${key}"}}\n{"secret":"whsec_${'b'.repeat(43)}"}\n{"t":"test-admin-token"}\n` +
      `{"url":"/portal/invitations/${'c'.repeat(43)}"}\n{"url":"/portal/reset/${'d'.repeat(43)}"}\n` +
      '{"url":"/portal/reset/…"}\n',
  );
  const { findings } = await scanServiceLog(dir);
  assert.equal(findings.length, 5);
  assert.ok(
    findings.every((finding) => !finding.includes('a'.repeat(43))),
    'the finding masks the secret',
  );
  // A service process's deliberate printout (the demo keys of a first start) is not its log.
  await fs.rm(path.join(dir, '2.log'));
  await fs.writeFile(path.join(dir, 'child-1.log'), `  agency key: ${key}\n{"msg":"x","k":"${key}"}\n`);
  assert.equal((await scanServiceLog(dir)).findings.length, 1);
  await fs.rm(dir, { recursive: true });
});
