/**
 * CI check of the MCP endpoint with the official MCP Inspector CLI, in both protocol eras.
 *
 * Starts the API role on free ports (embedded PostgreSQL in a temporary DATA_DIR, or a throwaway
 * database on the server of DATABASE_URL), mints an agency key through the admin API, runs
 * `mcp-inspector --cli <url> --method tools/list` and a `tools/call` of `me.get` with
 * `--protocol-era legacy` and `--protocol-era modern`, checks what they print, and stops
 * everything. Exits non-zero on any failure.
 *
 * Usage: scripts/mcp-inspector-check.sh   (ADMIN_TOKEN and DATABASE_URL are optional)
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';

const root = path.resolve(import.meta.dirname, '../..');
const bin = (name: string) => path.join(root, 'node_modules', '.bin', name);

interface Check {
  name: string;
  run: () => Promise<void>;
}

async function main(): Promise<number> {
  const scratch = await fs.mkdtemp(path.join(os.tmpdir(), 'ap-mcp-inspector-'));
  // Embedded PostgreSQL runs as its own system user when started as root: it must reach DATA_DIR.
  await fs.chmod(scratch, 0o755);
  const adminToken = process.env.ADMIN_TOKEN ?? `adm_${randomBytes(24).toString('base64url')}`;
  const database = process.env.DATABASE_URL ? await createDatabase(process.env.DATABASE_URL) : null;
  const port = await freePort();
  const serverLog: string[] = [];
  let server: ChildProcess | null = null;
  try {
    // node --import tsx rather than the tsx CLI: one process to signal, no wrapper in between.
    server = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', 'api'], {
      cwd: root,
      env: {
        ...process.env,
        PORT: String(port),
        FEED_PORT: String(await freePort()),
        HOST: '127.0.0.1',
        DATA_DIR: path.join(scratch, 'data'),
        ADMIN_TOKEN: adminToken,
        SEED_DEMO: 'false',
        LOG_LEVEL: 'warn',
        // With DATABASE_URL a process must be given its encryption key (see docs/pages/platform/deployment.md).
        ...(database
          ? {
              DATABASE_URL: database.url,
              ENCRYPTION_KEY: process.env.ENCRYPTION_KEY ?? randomBytes(32).toString('base64'),
            }
          : {}),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    server.stdout?.on('data', (chunk) => serverLog.push(String(chunk)));
    server.stderr?.on('data', (chunk) => serverLog.push(String(chunk)));
    const base = `http://127.0.0.1:${port}`;
    await waitUntilReady(base, server);

    const admin = async (method: string, url: string, body: unknown) => {
      const response = await fetch(`${base}/admin/v1${url}`, {
        method,
        headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      if (!response.ok)
        throw new Error(`admin ${method} ${url}: ${response.status} ${await response.text()}`);
      return response.json();
    };
    const { org } = await admin('POST', '/orgs', { name: 'Inspector check' });
    const { key } = await admin('POST', `/orgs/${org.id}/keys`, { name: 'inspector', kind: 'agency' });

    const inspector = (url: string, era: string, args: string[]) =>
      run(
        bin('mcp-inspector'),
        [
          '--cli',
          url,
          '--protocol-era',
          era,
          '--header',
          `Authorization: Bearer ${key}`,
          '--format',
          'json',
          '-q',
          ...args,
        ],
        { ...process.env, HOME: scratch, MCP_CATALOG_PATH: path.join(scratch, 'mcp.json') },
      );

    const endpoint = `${base}/v1/mcp`;
    const checks: Check[] = [];
    for (const era of ['legacy', 'modern']) {
      checks.push({
        name: `${era}: tools/list`,
        run: async () => {
          const output = parseJson(await inspector(endpoint, era, ['--method', 'tools/list', '--strict']));
          const names: string[] = (output.tools ?? output.result?.tools ?? []).map(
            (tool: { name: string }) => tool.name,
          );
          expect(names.includes('me.get'), `me.get is listed (got ${names.join(', ')})`);
          expect(names.includes('events.list'), 'events.list is listed');
        },
      });
      checks.push({
        name: `${era}: tools/call me.get`,
        run: async () => {
          const output = parseJson(
            await inspector(endpoint, era, ['--method', 'tools/call', '--tool-name', 'me.get']),
          );
          const result = output.result ?? output;
          expect(result.isError !== true, `me.get is not an error: ${JSON.stringify(result)}`);
          const body = JSON.parse(result.content[0].text);
          expect(body.tenant.org_id === org.id, `me.get reports the key's org (${body.tenant.org_id})`);
          expect(result.structuredContent?.api_key?.kind === 'agency', 'structuredContent carries the body');
        },
      });
    }
    checks.push({
      name: 'modern: tools/call me_get with ?tool_names=underscore',
      run: async () => {
        const output = parseJson(
          await inspector(`${endpoint}?tool_names=underscore`, 'modern', [
            '--method',
            'tools/call',
            '--tool-name',
            'me_get',
          ]),
        );
        const result = output.result ?? output;
        expect(result.isError !== true, `me_get is not an error: ${JSON.stringify(result)}`);
      },
    });

    let failed = 0;
    for (const check of checks) {
      try {
        await check.run();
        process.stdout.write(`ok - ${check.name}\n`);
      } catch (error) {
        failed += 1;
        process.stdout.write(
          `not ok - ${check.name}\n  ${String((error as Error).message).replaceAll('\n', '\n  ')}\n`,
        );
      }
    }
    process.stdout.write(`${checks.length - failed}/${checks.length} Inspector checks passed\n`);
    return failed ? 1 : 0;
  } catch (error) {
    process.stderr.write(`mcp-inspector-check: ${(error as Error).stack ?? error}\n`);
    if (serverLog.length) process.stderr.write(`server output:\n${serverLog.join('')}\n`);
    return 1;
  } finally {
    if (server) await stop(server);
    await database?.drop();
    await fs.rm(scratch, { recursive: true, force: true });
  }
}

function expect(condition: boolean, message: string): void {
  if (!condition) throw new Error(message);
}

function parseJson(text: string): any {
  try {
    return JSON.parse(text);
  } catch {
    throw new Error(`the Inspector did not print JSON:\n${text}`);
  }
}

/** Runs a command to completion; a non-zero exit is an error carrying its output. */
function run(command: string, args: string[], env: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
    });
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve(stdout);
      else reject(new Error(`${path.basename(command)} exited with ${code ?? signal}\n${stdout}${stderr}`));
    });
  });
}

async function waitUntilReady(base: string, server: ChildProcess): Promise<void> {
  const deadline = Date.now() + 180_000;
  while (Date.now() < deadline) {
    if (server.exitCode !== null) throw new Error(`the service exited with ${server.exitCode}`);
    const ready = await fetch(`${base}/readyz`).then(
      (response) => response.ok,
      () => false,
    );
    if (ready) return;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error('the service did not become ready within 180 s');
}

async function stop(server: ChildProcess): Promise<void> {
  if (server.exitCode !== null || server.signalCode !== null) return;
  const exited = new Promise((resolve) => server.once('exit', resolve));
  server.kill('SIGTERM');
  const timer = setTimeout(() => server.kill('SIGKILL'), 20_000);
  await exited;
  clearTimeout(timer);
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as net.AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

/** A throwaway database on the server of `serverUrl`, so the check never touches real data. */
async function createDatabase(serverUrl: string): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `ap_mcp_inspector_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const client = new pg.Client({ connectionString: serverUrl });
      await client.connect();
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => {});
      await client.end();
    },
  };
}

main().then(
  (code) => process.exit(code),
  (error) => {
    process.stderr.write(`${error?.stack ?? error}\n`);
    process.exit(1);
  },
);
