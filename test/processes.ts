import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { freePort } from '../src/platform/db/embedded.ts';
import { eventually } from './helpers.ts';

const root = path.resolve(import.meta.dirname, '..');

/** A service process started as `npm start -- <role>` would start it. */
export interface Started {
  child: ChildProcess;
  port: number;
  output: () => string;
  exited: Promise<number | null>;
}

/** The environment a started process inherits: none of the test run's own database or Redis. */
function baseEnv(): Record<string, string | undefined> {
  const env = { ...process.env };
  for (const name of ['DATABASE_URL', 'REDIS_URL', 'ADMIN_TOKEN', 'ENCRYPTION_KEY', 'ENCRYPTION_KEYS'])
    delete env[name];
  return env;
}

/**
 * Runs `src/main.ts <command>` without waiting for anything: with `node` as the tests usually do, or
 * through `npm start` exactly as an operator or a supervisor does.
 */
export async function spawnService(
  command: string,
  env: Record<string, string>,
  how: 'node' | 'npm' = 'node',
): Promise<Started> {
  const port = await freePort();
  const feedPort = await freePort();
  const [program, args] =
    how === 'npm'
      ? ['npm', ['start', ...(command === 'serve' ? [] : ['--', command])]]
      : [process.execPath, ['--import', 'tsx', 'src/main.ts', command]];
  const child = spawn(program, args, {
    cwd: root,
    // Test files run two at a time, several with service processes, against one server's max_connections.
    env: {
      ...baseEnv(),
      PORT: String(port),
      FEED_PORT: String(feedPort),
      LOG_LEVEL: 'warn',
      DATABASE_POOL_MAX: '5',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk) => {
    output += chunk;
  });
  child.stderr?.on('data', (chunk) => {
    output += chunk;
  });
  // Its log joins the suite's service log, which `npm test` scans for secrets (test/log-scan.ts).
  child.on('close', () => {
    const dir = process.env.TEST_SERVICE_LOG_DIR;
    if (dir) fs.appendFileSync(path.join(dir, `child-${process.pid}.log`), output);
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, port, output: () => output, exited };
}

/** Starts a role and waits until it is ready: `/readyz` for the API, the first heartbeat log line otherwise. */
export async function startProcess(
  role: string,
  env: Record<string, string>,
  how: 'node' | 'npm' = 'node',
): Promise<Started> {
  const started = await spawnService(role, role === 'worker' ? { LOG_LEVEL: 'info', ...env } : env, how);
  await eventually(
    async () => {
      if (started.child.exitCode !== null) throw new Error(`exited early: ${started.output()}`);
      if (role === 'worker') return started.output().includes('"worker running"');
      return (await fetch(`http://127.0.0.1:${started.port}/readyz`)).ok;
    },
    120_000,
    200,
  );
  return started;
}

export async function stopProcess(started: Started): Promise<number | null> {
  if (started.child.exitCode === null) started.child.kill('SIGTERM');
  return started.exited;
}
