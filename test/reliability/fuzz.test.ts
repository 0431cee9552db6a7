/**
 * The fuzzer in CI: a fixed seed and a bounded count (FUZZ_SEED, FUZZ_RUNS override them;
 * `npm run fuzz` runs longer with a random seed). A failure prints its seed and the smallest
 * request fast-check shrank it to; replay it with FUZZ_SEED=<seed> npm run fuzz.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { buildTestApp, createTenant, type TestApp, type TestTenant } from '../helpers.ts';
import { check, type Operation, operationsOf, requestsOf } from './fuzz.ts';
import { creators, makePath, ownerOf, pathParams, resourceKey } from './route-sweep.ts';

const seed =
  process.env.FUZZ_SEED === 'random'
    ? Math.floor(Math.random() * 2 ** 31)
    : Number(process.env.FUZZ_SEED ?? 17);
const numRuns = Number(process.env.FUZZ_RUNS ?? 1000);

describe('fuzzer over every operation of /v1/openapi.json', () => {
  let t: TestApp;
  let tenant: TestTenant;
  let operations: Operation[];
  const ids = new Map<string, Record<string, string>>();
  before(async () => {
    t = await buildTestApp({ AUTH_FAILURES_PER_MINUTE: '1000000' });
    tenant = await createTenant(t.app);
    const document = (await t.app.inject({ method: 'GET', url: '/v1/openapi.json' })).json();
    operations = operationsOf(document);
    // Real resources of the tenant, so generated requests reach past the lookups to the work.
    const owner = ownerOf(t, tenant);
    for (const operation of operations) {
      const url = operation.path.replace(/\{(\w+)\}/g, ':$1');
      const params = pathParams(url);
      if (params.length === 0 || params.some((param) => !creators[resourceKey(url, param)])) continue;
      const filled = await makePath(owner, url);
      const values = filled.split('/');
      ids.set(
        url,
        Object.fromEntries(
          url
            .split('/')
            .flatMap((segment, i) =>
              segment.startsWith(':') ? [[segment.slice(1), decodeURIComponent(values[i])]] : [],
            ),
        ),
      );
    }
  });
  after(() => t.close());

  test(`every answer is below 500 and every 4xx is the envelope (seed ${seed}, ${numRuns} runs)`, async () => {
    assert.ok(operations.length >= 50, `only ${operations.length} operations in the document`);
    const requests = requestsOf(
      operations,
      tenant,
      (operation) => ids.get(operation.path.replace(/\{(\w+)\}/g, ':$1')) ?? {},
    );
    const details = await fc.check(
      fc.asyncProperty(requests, async (request) => {
        const faults = await check(t.app, request);
        if (faults.length) throw new Error(faults.join('\n'));
      }),
      { seed, numRuns, endOnFailure: false },
    );
    if (details.failed) {
      const shown = JSON.stringify(details.counterexample?.[0], (_k, v) =>
        typeof v !== 'string'
          ? v
          : v.startsWith('Bearer ')
            ? 'Bearer <a test key>'
            : v.length > 300
              ? `${v.slice(0, 300)}… (${v.length} chars)`
              : v,
      );
      process.stderr.write(`\nfuzz failure: FUZZ_SEED=${seed} FUZZ_RUNS=${numRuns}\n${shown}\n`);
      assert.fail(
        `seed ${seed}: ${details.errorInstance instanceof Error ? details.errorInstance.message : details.errorInstance}\nrequest: ${shown}`,
      );
    }
  });
});
