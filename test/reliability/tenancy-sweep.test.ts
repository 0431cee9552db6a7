/**
 * Broken object-level authorization (OWASP API1), swept over the route table: for every tenant
 * operation with a path id, the resource is made as client A of org X, then the operation is called
 * as client B of the same org, as the agency key acting as client B, and as both keys of another
 * org. Every answer is 404 `not_found` with no part of the row, and nothing A sees changes. A new
 * route is swept with no test code; a resource with no creator in route-sweep.ts fails the sweep.
 *
 * The same registry drives "every creating POST honours Idempotency-Key".
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { type Call, caller } from '../crm/crm-client.ts';
import { adminCall, buildTestApp, createTenant, type TestApp, type TestTenant } from '../helpers.ts';
import {
  agencyScoped,
  callerOf,
  creators,
  exampleOf,
  makePath,
  type Owner,
  ownerOf,
  pathParams,
  resourceKey,
  tenantOperations,
} from './route-sweep.ts';

/** A valid body: the creator's for a collection POST, else a minimal one from the schema. */
function bodyFor(method: string, url: string, schema: unknown): unknown {
  if (method === 'POST') {
    const entry = Object.entries(creators).find(
      ([key, creator]) => creator.post && key.slice(0, key.lastIndexOf('/')) === url,
    );
    if (entry) return entry[1].post!.body();
  }
  return exampleOf(schema);
}

/** The route's required query parameters, with minimal valid values (`?q=x` for a search). */
function requiredQuery(schema: any): string {
  const required: string[] = schema?.required ?? [];
  const values = required.map((name) => [name, String(exampleOf(schema.properties[name]))]);
  return values.length ? `?${new URLSearchParams(values)}` : '';
}

const ORDER: Record<string, number> = { GET: 0, POST: 1, PUT: 1, PATCH: 1, DELETE: 2 };

describe('tenancy sweep over the route table', () => {
  let t: TestApp;
  let tenant: TestTenant;
  let owner: Owner;
  let attackers: Record<string, Call>;
  before(async () => {
    t = await buildTestApp();
    tenant = await createTenant(t.app);
    const other = await createTenant(t.app);
    const { client: clientB } = await adminCall(t.app, 'POST', `/orgs/${tenant.orgId}/clients`, {
      name: 'B',
    });
    const keyB = await adminCall(t.app, 'POST', `/orgs/${tenant.orgId}/keys`, {
      name: 'b',
      kind: 'client',
      client_id: clientB.id,
      rate_limit_per_minute: 1_000_000,
    });
    owner = ownerOf(t, tenant);
    attackers = {
      'client B of the same org': caller(t, { authorization: `Bearer ${keyB.key}` }),
      'the agency key acting as client B': caller(t, {
        ...tenant.agency,
        'x-service-client-id': clientB.id,
      }),
      'a client key of another org': caller(t, other.client),
      'the agency key of another org': caller(t, other.agency),
      'the agency key of another org acting as its client': caller(t, other.agencyAsClient),
    };
  });
  after(() => t.close());

  test('every operation with a path id answers 404 to every other tenant, and changes nothing', async () => {
    const operations = tenantOperations(t.app.routeTable)
      .filter((route) => pathParams(route.url).length > 0)
      .sort((a, b) => ORDER[a.method] - ORDER[b.method]);
    assert.ok(operations.length >= 40, `only ${operations.length} operations with a path id`);

    // Everything first, so a missing creator is named before any call is made.
    const missing = new Set<string>();
    for (const route of operations)
      for (const param of pathParams(route.url))
        if (!creators[resourceKey(route.url, param)]) missing.add(resourceKey(route.url, param));
    assert.deepEqual([...missing], [], 'resources with no creator in test/reliability/route-sweep.ts');

    const urls = new Map<string, string>();
    for (const route of operations)
      urls.set(route.url, (await makePath(owner, route.url)) + requiredQuery(route.schema?.querystring));

    const reads = operations.filter((route) => route.method === 'GET');
    const snapshot = async () => {
      const seen: Record<string, unknown> = {};
      for (const route of reads) {
        const answer = await callerOf(owner, route.url)('GET', urls.get(route.url)!.replace(/^\/v1/, ''));
        seen[route.url] = { status: answer.status, body: answer.body };
      }
      return seen;
    };
    const before = await snapshot();
    for (const [url, seen] of Object.entries(before))
      assert.equal((seen as { status: number }).status, 200, `the owner cannot read ${url}`);

    const failures: string[] = [];
    for (const route of operations) {
      const url = urls.get(route.url)!.replace(/^\/v1/, '');
      const body = route.schema?.body ? bodyFor(route.method, route.url, route.schema.body) : undefined;
      const atAgency = agencyScoped(route.url);
      for (const [who, call] of Object.entries(attackers)) {
        // The org's own agency key owns agency resources, whichever client it acts as.
        if (atAgency && who === 'the agency key acting as client B') continue;
        const answer = await call(route.method as 'GET', url, body);
        const keys = answer.body && typeof answer.body === 'object' ? Object.keys(answer.body) : [];
        // A client key never reaches an agency resource at all: refused before any lookup.
        const refused = atAgency && answer.status === 403 && answer.body?.error === 'agency_key_required';
        const leaked = keys.some((key) => !['error', 'message', 'details'].includes(key));
        if (leaked || (!refused && (answer.status !== 404 || answer.body?.error !== 'not_found'))) {
          failures.push(
            `${route.method} ${route.url} as ${who}: ${answer.status} ${JSON.stringify(answer.body)}`,
          );
        }
      }
    }
    assert.deepEqual(failures, []);
    assert.deepEqual(await snapshot(), before, 'a call of another tenant changed what the owner sees');
  });

  test('every creating POST honours Idempotency-Key: same key, same answer, one resource', async () => {
    const creating = tenantOperations(t.app.routeTable).filter(
      (route) =>
        route.method === 'POST' && route.schema?.response && '201' in (route.schema.response as object),
    );
    assert.ok(creating.length >= 10, `only ${creating.length} creating POSTs`);
    const failures: string[] = [];
    for (const route of creating) {
      const headers = route.schema?.headers as { properties?: Record<string, unknown> } | undefined;
      if (!headers?.properties?.['idempotency-key']) {
        failures.push(`${route.url}: the schema does not declare the Idempotency-Key header`);
      }
      const entry = Object.entries(creators).find(
        ([key, creator]) => creator.post && key.slice(0, key.lastIndexOf('/')) === route.url,
      );
      if (!entry) {
        failures.push(`${route.url}: no creator with a post in test/reliability/route-sweep.ts`);
        continue;
      }
      const creator = entry[1];
      const url = (await makePath(owner, route.url)).replace(/^\/v1/, '');
      const key = randomUUID();
      const makeBody = () => creator.post!.bodyFor?.(owner) ?? Promise.resolve(creator.post!.body());
      const body = await makeBody();
      const as = callerOf(owner, route.url);
      const first = await as('POST', url, body, { 'idempotency-key': key });
      const again = await as('POST', url, body, { 'idempotency-key': key });
      if (first.status !== 201) {
        failures.push(`${route.url}: ${first.status} ${JSON.stringify(first.body)}`);
        continue;
      }
      if (again.status !== 201 || creator.post!.id(again.body) !== creator.post!.id(first.body))
        failures.push(`${route.url}: the repeat made another resource (${again.status})`);
      else if (again.headers['idempotent-replayed'] !== 'true')
        failures.push(`${route.url}: the repeat is not marked Idempotent-Replayed`);
      const reused = await as('POST', url, await makeBody(), { 'idempotency-key': key });
      if (reused.status !== 422 || reused.body.error !== 'idempotency_key_reused')
        failures.push(`${route.url}: the key reused with another body answered ${reused.status}`);
    }
    assert.deepEqual(failures, []);
  });
});
