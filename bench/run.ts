/**
 * `npm run bench`: builds the service, starts it in production mode against a database of its own,
 * starts the ceiling app beside it, runs every scenario in bench/scenarios (or those named on the
 * command line), prints the figures and writes them to docs/performance.md.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { freePort, runningPostmaster, startEmbeddedPostgres } from '../src/platform/db/embedded.ts';
import { type BenchContext, type Measurement, type MeasureOptions, measure, type Section } from './lib.ts';

const root = path.resolve(import.meta.dirname, '..');
const ADMIN_TOKEN = 'bench-admin-token';

async function waitFor(url: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      const response = await fetch(url);
      if (response.ok) return;
    } catch {}
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`${url} did not come up`);
}

function start(script: string, args: string[], env: Record<string, string>): ChildProcess {
  // API_NODE_ARGS="--cpu-prof --cpu-prof-dir=…" profiles the API process; WORKER_NODE_ARGS, the worker's.
  const nodeArgs =
    args[0] === 'api' || args[0] === 'serve'
      ? process.env.API_NODE_ARGS
      : args[0] === 'worker'
        ? process.env.WORKER_NODE_ARGS
        : undefined;
  const extra = nodeArgs ? nodeArgs.split(' ') : [];
  const child = spawn(process.execPath, [...extra, script, ...args], {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  return child;
}

function table(section: Section): string {
  const lines = [
    `### ${section.title}`,
    '',
    '| measurement | req/s | p50 ms | p99 ms | errors | non-2xx | server CPU µs/req | PostgreSQL CPU µs/req |',
    '|---|---:|---:|---:|---:|---:|---:|---:|',
    ...section.measurements.map(
      (m) =>
        `| ${m.name} | ${m.requestsPerSecond} | ${m.p50Ms} | ${m.p99Ms} | ${m.errors} | ${m.non2xx} | ${m.serverCpuUs ?? '–'} | ${m.databaseCpuUs ?? '–'} |`,
    ),
    '',
    '| target | result | |',
    '|---|---|---|',
    ...section.targets.map(
      (target) => `| ${target.name} | ${target.detail} | ${target.pass ? 'met' : '**missed**'} |`,
    ),
  ];
  if (section.notes?.length) lines.push('', ...section.notes.map((note) => `- ${note}`));
  return lines.join('\n');
}

/**
 * The hand-written readings of earlier runs that follow the tables, from the first `## ` heading on
 * (the tables are `### ` sections): a full run replaces the tables and keeps them.
 */
async function readings(file: string): Promise<string> {
  const text = await fs.readFile(file, 'utf8').catch(() => '');
  const at = text.search(/^## /m);
  return at < 0 ? '' : `\n${text.slice(at)}`;
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  // `--one-process`: the service as a newcomer runs it (`npm start`: every role in one process).
  const oneProcess = args.includes('--one-process');
  const only = args.filter((arg) => !arg.startsWith('--'));
  process.stdout.write('building…\n');
  execFileSync('npx', ['tsc', '-p', 'tsconfig.build.json'], { cwd: root, stdio: 'inherit' });

  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'ap-bench-'));
  // PostgreSQL runs as its own user when we are root: it must be able to enter the folder.
  await fs.chmod(dataDir, 0o755);
  const database = await startEmbeddedPostgres(path.join(dataDir, 'postgres'), { password: 'bench' });
  const apiPort = await freePort();
  const feedPort = await freePort();
  const ceilingPort = await freePort();
  const env = {
    NODE_ENV: 'production',
    DATABASE_URL: database.url,
    DATA_DIR: dataDir,
    ADMIN_TOKEN,
    // Every role shares these, as in production: a process with DATABASE_URL refuses to start without them.
    ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    LOG_LEVEL: 'warn',
    SEED_DEMO: 'false',
    HOST: '127.0.0.1',
    PORT: String(apiPort),
    FEED_PORT: String(feedPort),
    OUTBOUND_ALLOW_PRIVATE: 'true',
    DOCS_RATE_LIMIT_PER_MINUTE: '100000000',
    FEED_RATE_LIMIT_PER_MINUTE: '1000000000',
  };
  // The production topology for more than one core: each role in its own process.
  execFileSync(process.execPath, ['dist/src/main.js', 'migrate'], {
    cwd: root,
    env: { ...process.env, ...env },
  });
  // Without --one-process, the production topology for more than one core: each role in its own process.
  const service = oneProcess
    ? [start('dist/src/main.js', ['serve'], env)]
    : [
        start('dist/src/main.js', ['api'], env),
        start('dist/src/main.js', ['worker'], env),
        start('dist/src/main.js', ['feed'], env),
      ];
  const children = [...service, start('dist/bench/ceiling.js', [], { ...env, PORT: String(ceilingPort) })];
  const pool = new pg.Pool({ connectionString: database.url, max: 10 });
  try {
    const apiUrl = `http://127.0.0.1:${apiPort}`;
    const ceilingUrl = `http://127.0.0.1:${ceilingPort}`;
    await waitFor(`${apiUrl}/readyz`);
    await waitFor(`${ceilingUrl}/bare`);

    const admin = async (method: string, urlPath: string, body?: unknown) => {
      const response = await fetch(`${apiUrl}/admin/v1${urlPath}`, {
        method,
        headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      if (!response.ok)
        throw new Error(`admin ${method} ${urlPath}: ${response.status} ${await response.text()}`);
      return response.status === 204 ? undefined : response.json();
    };
    let ceiling: Measurement | null = null;
    const servers: Array<[url: string, pid: number | undefined]> = [
      [ceilingUrl, children[children.length - 1].pid],
      [apiUrl, service[0].pid],
      [`http://127.0.0.1:${feedPort}`, service[oneProcess ? 0 : 2].pid],
    ];
    const databasePid = (await runningPostmaster(path.join(dataDir, 'postgres'))) ?? undefined;
    const measureServed = (name: string, options: MeasureOptions) =>
      measure(name, {
        serverPid: servers.find(([url]) => options.url.startsWith(`${url}/`))?.[1],
        databasePid,
        ...options,
      });
    const ctx: BenchContext = {
      apiUrl,
      feedUrl: `http://127.0.0.1:${feedPort}`,
      ceilingUrl,
      adminToken: ADMIN_TOKEN,
      databaseUrl: database.url,
      pool,
      ceiling: async () => {
        ceiling ??= await measureServed('bare Fastify JSON route (ceiling)', { url: `${ceilingUrl}/bare` });
        return ceiling;
      },
      measure: measureServed,
      admin,
      tenant: async () => {
        const { org } = await admin('POST', '/orgs', { name: 'Bench agency' });
        const { key } = await admin('POST', `/orgs/${org.id}/keys`, {
          name: 'bench',
          kind: 'agency',
          rate_limit_per_minute: 10_000_000,
        });
        return { orgId: org.id, agencyKey: key, headers: { authorization: `Bearer ${key}` } };
      },
      // The soak samples the processes' memory.
      pids: { api: service[0].pid, worker: service[oneProcess ? 0 : 1].pid },
    };

    const scenarioDir = path.join(root, 'dist', 'bench', 'scenarios');
    const files = (await fs.readdir(scenarioDir)).filter((file) => file.endsWith('.js')).sort();
    const sections: Section[] = [];
    process.stdout.write(
      `topology: ${oneProcess ? 'one process (serve)' : 'api, worker and feed processes'}\n`,
    );
    for (const file of files) {
      const name = file.replace(/\.js$/, '');
      if (only.length && !only.includes(name)) continue;
      // profile-* scenarios are diagnostics, run only when named.
      if (name.startsWith('profile-') && !only.includes(name)) continue;
      process.stdout.write(`\n== ${name}\n`);
      const scenario = (await import(path.join(scenarioDir, file))).default as (
        ctx: BenchContext,
      ) => Promise<Section>;
      const section = await scenario(ctx);
      sections.push(section);
      process.stdout.write(`${table(section)}\n`);
    }

    const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
    const report = [
      '# Performance',
      '',
      'Measured by `npm run bench`: it builds the service, starts it in production mode (`NODE_ENV=production`,',
      '`LOG_LEVEL=warn`, one process per role: api, worker, feed) against a PostgreSQL of its own, and loads it with',
      'autocannon (50 connections) from the same',
      'machine. Every ratio is taken against a ceiling measured in the same run: a bare Fastify app in the same',
      'process setup (`bench/ceiling.ts`). Run a single scenario with `npm run bench -- <name>`. The last column',
      'is the CPU time (user + system) the serving process spent per request, read from /proc: on a shared machine',
      'it moves less than a rate does, and it tells which side of a ratio moved.',
      '',
      `Last run: ${new Date().toISOString()} on ${os.cpus().length} × ${cpu}, Node ${process.version}.`,
      '',
      ...sections.map(table).flatMap((text) => [text, '']),
    ].join('\n');
    const file = path.join(root, 'docs', 'performance.md');
    if (!only.length) await fs.writeFile(file, `${report}${await readings(file)}`);
    else process.stdout.write('\n(partial run: docs/performance.md left as it was)\n');
  } finally {
    await pool.end();
    for (const child of children) child.kill('SIGTERM');
    await new Promise((resolve) => setTimeout(resolve, 1500));
    await database.stop();
    await fs.rm(dataDir, { recursive: true, force: true });
  }
}

main().catch((error) => {
  process.stderr.write(`bench failed: ${error?.stack ?? error}\n`);
  process.exit(1);
});
