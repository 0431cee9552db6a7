/**
 * `npm test`: starts a PostgreSQL (the embedded one, or the server of DATABASE_URL), migrates a
 * template database once, and runs every test file with Node's test runner; each file clones the
 * template into a throwaway database of its own.
 *
 * Usage: npm test [-- file-or-dir ...]
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';
import { startEmbeddedPostgres } from '../src/platform/db/embedded.ts';
import { migrate } from '../src/platform/db/migrate.ts';
import { openDatabase } from '../src/platform/db/pool.ts';
import { scanServiceLog } from './log-scan.ts';

const root = path.resolve(import.meta.dirname, '..');

async function findTests(targets: string[]): Promise<string[]> {
  const files: string[] = [];
  const walk = async (target: string): Promise<void> => {
    const stat = await fs.stat(target);
    if (stat.isFile()) {
      if (target.endsWith('.test.ts')) files.push(target);
      return;
    }
    for (const entry of await fs.readdir(target)) {
      if (entry === 'node_modules' || entry.startsWith('.')) continue;
      await walk(path.join(target, entry));
    }
  };
  for (const target of targets) await walk(path.resolve(target));
  return files.sort();
}

async function main(): Promise<number> {
  const targets = process.argv.slice(2);
  const files = await findTests(targets.length ? targets : [path.join(root, 'src'), path.join(root, 'test')]);

  let serverUrl = process.env.DATABASE_URL ?? null;
  let stopEmbedded: (() => Promise<void>) | null = null;
  let embeddedDir: string | null = null;
  if (!serverUrl) {
    embeddedDir = path.join(root, '.test-data', `pg-${process.pid}`);
    await fs.rm(embeddedDir, { recursive: true, force: true });
    const embedded = await startEmbeddedPostgres(embeddedDir, { password: 'test', fast: true });
    serverUrl = embedded.url;
    stopEmbedded = embedded.stop;
  }

  const template = `ap_template_${randomBytes(4).toString('hex')}`;
  const adminUrl = withDatabase(serverUrl, 'postgres');
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${template}`);
  const templateDb = openDatabase(withDatabase(serverUrl, template), { max: 2 });
  await migrate(templateDb);
  await templateDb.close();

  // The service log of every app and process the tests start, scanned for secrets afterwards.
  const logDir = path.join(root, '.test-data', `log-${process.pid}`);
  await fs.rm(logDir, { recursive: true, force: true });
  await fs.mkdir(logDir, { recursive: true });

  let code = await new Promise<number>((resolve) => {
    const child = spawn(
      process.execPath,
      // The time-out bounds each file as a whole too: the PostgreSQL restart test waits for two minute
      // boundaries, which took past 3 minutes against a loaded server.
      [
        '--import',
        'tsx',
        '--test',
        '--test-concurrency=2',
        '--test-timeout=420000',
        // A file whose before hook failed would otherwise wait out the time-out on its open handles.
        '--test-force-exit',
        ...files,
      ],
      {
        stdio: 'inherit',
        env: {
          ...process.env,
          TEST_SERVER_URL: adminUrl,
          TEST_TEMPLATE_DB: template,
          TEST_SERVICE_LOG_DIR: logDir,
        },
      },
    );
    child.on('exit', (exitCode, signal) => resolve(exitCode ?? (signal ? 1 : 0)));
  });

  const scan = await scanServiceLog(logDir);
  if (scan.findings.length) {
    process.stderr.write(
      `\nThe service log holds ${scan.findings.length} secret(s) (test/log-scan.ts):\n${scan.findings.slice(0, 20).join('\n')}\n`,
    );
    code = code || 1;
  } else {
    process.stdout.write(`# service log: ${scan.lines} lines, no key, token or secret\n`);
  }
  await fs.rm(logDir, { recursive: true, force: true });

  // Databases left by the files (a crashed file leaves its own) and the template go with the run.
  const leftovers = await admin.query<{ datname: string }>(
    `SELECT datname FROM pg_database WHERE datname LIKE $1 OR datname = $2`,
    [`${template.replace('ap_template_', 'ap_test_')}_%`, template],
  );
  for (const { datname } of leftovers.rows) {
    await admin.query(`DROP DATABASE IF EXISTS ${datname} WITH (FORCE)`).catch(() => {});
  }
  await admin.end();
  await stopEmbedded?.();
  if (embeddedDir) await fs.rm(embeddedDir, { recursive: true, force: true });
  return code;
}

function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

main().then(
  (code) => process.exit(code),
  (error) => {
    process.stderr.write(`test run failed to start: ${error?.stack ?? error}\n`);
    process.exit(1);
  },
);
