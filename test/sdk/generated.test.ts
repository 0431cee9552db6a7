import assert from 'node:assert/strict';
import { test } from 'node:test';
import { staleFiles } from '../../scripts/sdk-generate.ts';

test('the SDK generated files are what the current /v1/openapi.json generates (npm run sdk:generate)', async () => {
  assert.deepEqual(await staleFiles(true), []);
});
