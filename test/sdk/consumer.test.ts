import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { promisify } from 'node:util';
import { docExamples } from './examples.ts';
import { type SdkService, startService } from './service.ts';

const exec = promisify(execFile);
const root = path.resolve(import.meta.dirname, '../..');

let service: SdkService;
let dir: string;

before(async () => {
  service = await startService();
  // Outside the repository: the project resolves nothing but what the tarball installs.
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'sdk-consumer-'));
});
after(async () => {
  await fs.rm(dir, { recursive: true, force: true });
  await service.close();
});

test('a project that installs the npm pack tarball compiles the quick start strictly and runs it', async () => {
  const { stdout } = await exec('npm', ['pack', '--json', '--pack-destination', dir], {
    cwd: path.join(root, 'sdk'),
  });
  const [packed] = JSON.parse(stdout.slice(stdout.indexOf('['))) as {
    filename: string;
    files: { path: string }[];
  }[];
  assert.ok(packed?.files.some((f) => f.path === 'dist/index.d.ts'));
  assert.ok(
    packed?.files.every((f) => !f.path.startsWith('src/')),
    'the tarball ships dist, not sources',
  );

  const project = path.join(dir, 'consumer');
  await fs.mkdir(project);
  await fs.writeFile(
    path.join(project, 'package.json'),
    JSON.stringify({ name: 'consumer', private: true, type: 'module' }),
  );
  await exec(
    'npm',
    ['install', '--offline', '--no-audit', '--no-fund', path.join(dir, packed?.filename ?? '')],
    { cwd: project },
  );
  const installed = JSON.parse(await fs.readFile(path.join(project, 'package-lock.json'), 'utf8'));
  assert.deepEqual(
    Object.keys(installed.packages).filter(Boolean),
    ['node_modules/@agency-platform/sdk'],
    'no runtime dependency',
  );

  await fs.writeFile(path.join(project, 'quickstart.ts'), (await docExamples()).get('quickstart.ts') ?? '');
  await fs.writeFile(
    path.join(project, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'ES2022',
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        strict: true,
        exactOptionalPropertyTypes: true,
        outDir: 'dist',
        typeRoots: [path.join(root, 'node_modules/@types')],
        types: ['node'],
      },
      include: ['quickstart.ts'],
    }),
  );
  await exec(process.execPath, [path.join(root, 'node_modules/typescript/bin/tsc'), '-p', project]);

  const run = await exec(process.execPath, [path.join(project, 'dist/quickstart.js')], {
    env: { ...process.env, AGENCY_API_KEY: service.tenant.agencyKey, AGENCY_BASE_URL: service.baseUrl },
  });
  assert.match(
    run.stdout,
    /Signed in with agency \(agency key\)\nCreated [0-9a-f-]{36}\n[0-9a-f-]{36} ana@example.com\n/,
  );
});
