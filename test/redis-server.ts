import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { freePort } from '../src/platform/db/embedded.ts';

/** Whether this machine has a `redis-server` to start; tests that need one skip without it. */
export function redisServerAvailable(): boolean {
  try {
    execFileSync('redis-server', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** A throwaway Redis on a free port, with nothing saved to disk. */
export async function startRedisServer(): Promise<{ port: number; url: string; process: ChildProcess }> {
  const port = await freePort();
  const child = spawn('redis-server', ['--port', String(port), '--save', '', '--appendonly', 'no'], {
    stdio: 'ignore',
  });
  return { port, url: `redis://127.0.0.1:${port}`, process: child };
}
