import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { Redis } from 'ioredis';
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

/** A throwaway Redis and a client connected to it; `stop` ends both. */
export async function connectedRedisServer(): Promise<{ redis: Redis; stop: () => void }> {
  const started = await startRedisServer();
  const redis = new Redis({
    port: started.port,
    host: '127.0.0.1',
    lazyConnect: true,
    retryStrategy: () => 50,
  });
  redis.on('error', () => {}); // refused connections while the server starts
  for (let attempt = 0; attempt < 100; attempt++) {
    try {
      await redis.connect();
      break;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
  return {
    redis,
    stop: () => {
      redis.disconnect();
      started.process.kill('SIGTERM');
    },
  };
}
