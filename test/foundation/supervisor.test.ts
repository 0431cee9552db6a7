import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import fs from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';
import { eventually, sleep } from '../helpers.ts';
import { type Started, startProcess } from '../processes.ts';

/** `npm start` exactly as an operator or a supervisor runs it, on its own embedded PostgreSQL. */
const npmStart = (dataDir: string) => startProcess('serve', { DATA_DIR: dataDir, LOG_LEVEL: 'info' }, 'npm');

function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

function procFile(pid: number, name: string): string | null {
  try {
    return readFileSync(`/proc/${pid}/${name}`, 'utf8');
  } catch {
    return null;
  }
}

/** Whether `pid` runs: a zombie, exited and waiting for its new parent to reap it, does not. */
function alive(pid: number): boolean {
  const stat = procFile(pid, 'stat');
  return stat !== null && stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
}

function procState(pid: number): string {
  return procFile(pid, 'status')?.split('\n').slice(0, 7).join(' | ') ?? 'gone';
}

async function postmasterPid(dataDir: string): Promise<number | null> {
  const content = await fs
    .readFile(path.join(dataDir, 'postgres', 'postmaster.pid'), 'utf8')
    .catch(() => null);
  return content ? Number(content.split('\n')[0]) : null;
}

/** Everything the start left behind is gone within 10 s: the API port, the feed port, PostgreSQL. */
async function assertStoppedWithin10s(started: Started, postgresPid: number): Promise<void> {
  const since = Date.now();
  await eventually(async () => !(await listening(started.port)) && !alive(postgresPid), 10_000, 100).catch(
    () => {
      throw new Error(
        `still running ${Date.now() - since} ms after the signal: port ${started.port} ${
          alive(postgresPid) ? 'and PostgreSQL' : ''
        }\n${started.output()}`,
      );
    },
  );
}

describe('a supervisor stops npm start by signalling the process it started, and only that one', () => {
  test('SIGTERM, then a crash that leaves PostgreSQL running, then SIGINT', async () => {
    const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'ap-supervisor-'));
    await fs.chmod(dataDir, 0o755);
    const leftovers: number[] = [];
    try {
      const first = await npmStart(dataDir);
      const firstPostgres = await postmasterPid(dataDir);
      assert.ok(firstPostgres && alive(firstPostgres), 'the embedded PostgreSQL runs');
      leftovers.push(firstPostgres);
      first.child.kill('SIGTERM');
      await assertStoppedWithin10s(first, firstPostgres);
      await first.exited;

      // A crash: the service dies at once, without stopping its PostgreSQL.
      const second = await npmStart(dataDir);
      const orphan = (await postmasterPid(dataDir)) as number;
      leftovers.push(orphan);
      for (const pid of await serviceProcesses(second.child.pid as number)) process.kill(pid, 'SIGKILL');
      await second.exited;
      await sleep(200);
      assert.ok(alive(orphan), 'the crash left PostgreSQL running');

      const startedAt = Date.now();
      const third = await npmStart(dataDir);
      assert.ok(Date.now() - startedAt < 60_000, 'the next start did not hang');
      assert.ok(
        !alive(orphan),
        `the left-over PostgreSQL was stopped: ${procState(orphan)}\n${third.output()}`,
      );
      assert.match(third.output(), /left running/i, 'the start says what it found');
      const thirdPostgres = (await postmasterPid(dataDir)) as number;
      leftovers.push(thirdPostgres);
      third.child.kill('SIGINT');
      await assertStoppedWithin10s(third, thirdPostgres);
      await third.exited;
    } finally {
      for (const pid of leftovers) if (alive(pid)) process.kill(pid, 'SIGQUIT');
      await fs.rm(dataDir, { recursive: true, force: true });
    }
  });
});

/** The node processes under `pid` that run the service (npm's shell and tsx's wrapper, if any, included). */
async function serviceProcesses(pid: number): Promise<number[]> {
  const table = await new Promise<string>((resolve) => {
    const child = spawn('ps', ['-eo', 'pid=,ppid=,args='], { stdio: ['ignore', 'pipe', 'ignore'] });
    let stdout = '';
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
    });
    child.on('exit', () => resolve(stdout));
  });
  const rows = table
    .trim()
    .split('\n')
    .map((line) => /^\s*(\d+)\s+(\d+)\s+(.*)$/.exec(line))
    .filter((match) => match !== null)
    .map((match) => ({ pid: Number(match[1]), ppid: Number(match[2]), args: match[3] }));
  const tree = new Set([pid]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const row of rows)
      if (tree.has(row.ppid) && !tree.has(row.pid)) {
        tree.add(row.pid);
        grew = true;
      }
  }
  return rows.filter((row) => tree.has(row.pid) && row.args.includes('src/main.ts')).map((row) => row.pid);
}
