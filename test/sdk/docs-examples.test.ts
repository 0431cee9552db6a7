import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { signPayload } from '../../src/modules/webhooks/signing.ts';
import { eventually } from '../helpers.ts';
import { docExamples } from './examples.ts';
import { type SdkService, startService } from './service.ts';

const root = path.resolve(import.meta.dirname, '../..');
const sdkEntry = path.join(root, 'sdk/src/index.ts');

const SCRIPTS = ['quickstart.ts', 'pages-and-retries.ts', 'errors.ts', 'subscribe.ts'];
const SERVERS = ['express.ts', 'fastify.ts'];
const HANDLERS = ['app/api/hooks/agency/route.ts', 'hono.ts'];

function run(file: string, env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', file], { env: { ...process.env, ...env } });
    let output = '';
    child.stdout.on('data', (chunk) => {
      output += chunk;
    });
    child.stderr.on('data', (chunk) => {
      output += chunk;
    });
    child.on('exit', (code) => resolve({ code, output }));
  });
}

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

describe('every example of docs/pages/platform/sdk.md runs', () => {
  let service: SdkService;
  let dir: string;
  let examples: Map<string, string>;
  const children: ChildProcess[] = [];
  const secret = `whsec_${randomBytes(32).toString('base64url')}`;

  before(async () => {
    service = await startService();
    examples = await docExamples();
    // Inside the repository, so the examples resolve express, fastify and hono; the SDK is its source.
    dir = path.join(root, '.test-data', `sdk-docs-${randomBytes(4).toString('hex')}`);
    for (const [name, code] of examples) {
      const file = path.join(dir, name);
      await fs.mkdir(path.dirname(file), { recursive: true });
      await fs.writeFile(file, code.replaceAll("'@agency-platform/sdk'", `'${sdkEntry}'`));
    }
  });
  after(async () => {
    for (const child of children) child.kill();
    await fs.rm(dir, { recursive: true, force: true });
    await service.close();
  });

  /** A delivery signed as the service signs one, and the same with one byte changed. */
  const deliveries = () => {
    const body = JSON.stringify({
      id: 'evt_0192f1c2-7d4e-7a1b-9c3d-5e6f7a8b9c0d',
      type: 'contact.created',
      created: String(Math.floor(Date.now() / 1000)),
      data: { id: 'c1', email: 'ana@example.com' },
      metadata: {},
    });
    const timestamp = String(Math.floor(Date.now() / 1000));
    const headers = {
      'content-type': 'application/json',
      'x-service-timestamp': timestamp,
      'x-service-signature': signPayload(secret, timestamp, body),
    };
    return { genuine: { headers, body }, forged: { headers, body: body.replace('ana@', 'eve@') } };
  };

  test('the page holds exactly the examples this test runs', () => {
    assert.deepEqual([...examples.keys()].sort(), [...SCRIPTS, ...SERVERS, ...HANDLERS].sort());
  });

  test("the package README's example is the page's quick start", async () => {
    const readme = await fs.readFile(path.join(root, 'sdk/README.md'), 'utf8');
    assert.equal(readme.match(/```ts\n([\s\S]*?)```/)?.[1], examples.get('quickstart.ts'));
  });

  test('every example type-checks in strict mode with exactOptionalPropertyTypes', async () => {
    await fs.writeFile(
      path.join(dir, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          strict: true,
          exactOptionalPropertyTypes: true,
          noEmit: true,
          allowImportingTsExtensions: true,
          skipLibCheck: true,
          types: ['node'],
        },
        include: ['**/*.ts'],
      }),
    );
    const { code, output } = await new Promise<{ code: number | null; output: string }>((resolve) => {
      const tsc = spawn(process.execPath, [path.join(root, 'node_modules/typescript/bin/tsc'), '-p', dir]);
      let text = '';
      tsc.stdout.on('data', (chunk) => {
        text += chunk;
      });
      tsc.on('exit', (exitCode) => resolve({ code: exitCode, output: text }));
    });
    assert.equal(code, 0, output);
  });

  for (const name of SCRIPTS) {
    test(`${name} runs against the service`, async () => {
      const { code, output } = await run(path.join(dir, name), {
        AGENCY_API_KEY: service.tenant.agencyKey,
        AGENCY_BASE_URL: service.baseUrl,
        AGENCY_CLIENT_ID: service.tenant.clientId,
      });
      assert.equal(code, 0, output);
      if (name === 'quickstart.ts')
        assert.match(output, /Signed in with agency \(agency key\)\n(Created|Matched) /);
      if (name === 'errors.ts') assert.match(output, /No such contact/);
      if (name === 'subscribe.ts') assert.match(output, /store whsec_/);
    });
  }

  for (const name of SERVERS) {
    test(`${name} accepts a signed delivery and refuses a changed one`, async () => {
      const port = await freePort();
      const child = spawn(process.execPath, ['--import', 'tsx', path.join(dir, name)], {
        env: { ...process.env, PORT: String(port), WEBHOOK_SECRET: secret },
        stdio: 'ignore',
      });
      children.push(child);
      const url = `http://127.0.0.1:${port}/hooks/agency`;
      const { genuine, forged } = deliveries();
      const accepted = await eventually(() => fetch(url, { method: 'POST', ...genuine }), 20_000, 200);
      assert.equal(accepted.status, 204);
      assert.equal((await fetch(url, { method: 'POST', ...forged })).status, 400);
      child.kill();
    });
  }

  test('the Next.js route handler and the Hono app accept a signed delivery and refuse a changed one', async () => {
    process.env.WEBHOOK_SECRET = secret;
    const route = await import(path.join(dir, 'app/api/hooks/agency/route.ts'));
    const hono = (await import(path.join(dir, 'hono.ts'))).default;
    const { genuine, forged } = deliveries();
    const url = 'http://localhost/hooks/agency';
    assert.equal((await route.POST(new Request(url, { method: 'POST', ...genuine }))).status, 204);
    assert.equal((await route.POST(new Request(url, { method: 'POST', ...forged }))).status, 400);
    assert.equal((await hono.request(url, { method: 'POST', ...genuine })).status, 204);
    assert.equal((await hono.request(url, { method: 'POST', ...forged })).status, 400);
  });
});
