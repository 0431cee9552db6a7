/**
 * Broken object-level authorization (OWASP API1), swept over the route table: for every tenant
 * operation with a path id, the resource is made as client A of org X, then the operation is called
 * as client B of the same org, as the agency key acting as client B, and as both keys of another
 * org. Every answer is 404 `not_found` with no part of the row, and nothing A sees changes. A new
 * route is swept with no test code; a resource with no creator in route-sweep.ts fails the sweep.
 *
 * Every list route (a GET answering `{data: [...]}`) is swept the same way: client A is given a record
 * in each, and no other tenant's answer from any list names one of A's records.
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
  isListRoute,
  makePath,
  type Owner,
  ownerOf,
  pathParams,
  resourceKey,
  seedList,
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

/** The ids a list item stands for: its `id`, else its `*_id` fields (a list member, a search hit). */
function recordIds(item: Record<string, unknown>): string[] {
  if (typeof item.id === 'string') return [item.id];
  return Object.entries(item)
    .filter(([key, value]) => key.endsWith('_id') && typeof value === 'string')
    .map(([, value]) => value as string);
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

  test("no list route shows another tenant any of client A's records", async () => {
    const lists = tenantOperations(t.app.routeTable).filter(isListRoute);
    assert.ok(lists.length >= 20, `only ${lists.length} list routes`);
    const missing: string[] = [];
    const seededQuery = new Map<string, string | undefined>();
    for (const route of lists) {
      await seedList(owner, route.url).then(
        (query) => seededQuery.set(route.url, query),
        (error) => missing.push(error.message),
      );
    }
    assert.deepEqual(missing, [], 'list routes the sweep cannot give client A a record in');

    const urls = new Map<string, string>();
    const records = new Set<string>();
    const empty: string[] = [];
    for (const route of lists) {
      const query = seededQuery.get(route.url) ?? requiredQuery(route.schema?.querystring);
      // The largest page the list gives, so every record of A is read.
      const largest = (route.schema?.querystring as any)?.properties?.limit?.maximum;
      const url = `${(await makePath(owner, route.url)).replace(/^\/v1/, '')}${query || '?'}${largest ? `&limit=${largest}` : ''}`;
      urls.set(route.url, url);
      const answer = await callerOf(owner, route.url)('GET', url);
      assert.equal(answer.status, 200, `the owner cannot list ${route.url}: ${JSON.stringify(answer.body)}`);
      const data: Record<string, unknown>[] = answer.body.data;
      if (data.length === 0) empty.push(route.url);
      for (const item of data) for (const id of recordIds(item)) records.add(id);
    }
    assert.deepEqual(empty, [], "lists that show none of client A's records: seed them in route-sweep.ts");

    const failures: string[] = [];
    for (const route of lists) {
      const atAgency = agencyScoped(route.url);
      const ownParent = pathParams(route.url).length === 0;
      for (const [who, call] of Object.entries(attackers)) {
        // The org's own agency key owns agency resources, whichever client it acts as.
        if (atAgency && who === 'the agency key acting as client B') continue;
        const url = urls.get(route.url)!;
        const answer = await call('GET', url);
        const text = JSON.stringify(answer.body);
        // A 404 may name the path's own id back: the caller sent it.
        const leaked = [...records].filter((id) => text.includes(id) && !url.includes(id));
        // Its own list (200), or 404 under a parent of A's, or 403 for a client key on an agency list.
        const clientKey = who === 'client B of the same org' || who === 'a client key of another org';
        const expected = atAgency && clientKey ? 403 : ownParent ? 200 : 404;
        if (leaked.length > 0 || answer.status !== expected)
          failures.push(
            `GET ${route.url} as ${who}: ${answer.status}, shows ${leaked.join(', ') || 'none'} of A's`,
          );
      }
    }
    assert.deepEqual(failures, []);
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
