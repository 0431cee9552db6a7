/**
 * Two guarantees a planted fault once slipped past the whole suite (issue 17):
 *  - a page token is bound to the client it was issued to: client B of the same org replaying client
 *    A's token is 400, over every list operation of the route table that has a creator;
 *  - an agency-wide webhook subscription (made by an agency key acting as itself) is invisible to the
 *    agency key acting as the house client through X-Service-Client-Id.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Call, caller } from '../crm/crm-client.ts';
import { adminCall, buildTestApp, createTenant, type TestApp, type TestTenant } from '../helpers.ts';
import { type Creator, creators, ownerOf, pathParams, tenantOperations } from './route-sweep.ts';

describe('tenant scopes no test held before', () => {
  let t: TestApp;
  let tenant: TestTenant;
  let clientB: Call;
  let agencyAsB: Call;
  before(async () => {
    t = await buildTestApp();
    tenant = await createTenant(t.app);
    const { client } = await adminCall(t.app, 'POST', `/orgs/${tenant.orgId}/clients`, { name: 'B' });
    const key = await adminCall(t.app, 'POST', `/orgs/${tenant.orgId}/keys`, {
      name: 'b',
      kind: 'client',
      client_id: client.id,
    });
    clientB = caller(t, { authorization: `Bearer ${key.key}` });
    agencyAsB = caller(t, { ...tenant.agency, 'x-service-client-id': client.id });
  });
  after(() => t.close());

  test("client A's page token replayed by client B of the same org is 400, on every list", async () => {
    const lists = tenantOperations(t.app.routeTable).filter((route) => {
      const query = route.schema?.querystring as { properties?: Record<string, unknown> } | undefined;
      return route.method === 'GET' && pathParams(route.url).length === 0 && query?.properties?.page_token;
    });
    const owner = ownerOf(t, tenant);
    const covered: string[] = [];
    const failures: string[] = [];
    for (const route of lists) {
      const entry = Object.entries(creators).find(
        ([key]) => key.slice(0, key.lastIndexOf('/')) === route.url,
      );
      // An agency resource has one owner, the agency, whichever client its key acts as: no client scope to replay.
      if (!entry || entry[1].scope === 'agency') continue;
      const make = makerOf(entry[1], route.url);
      for (let i = 0; i < 2; i++) await make(owner);
      const url = `${route.url.replace(/^\/v1/, '')}?limit=1`;
      const first = await owner.call('GET', url);
      const token = first.body?.next_page_token;
      if (first.status !== 200 || typeof token !== 'string') {
        failures.push(`${route.url}: no second page for client A (${first.status})`);
        continue;
      }
      covered.push(route.url);
      const own = await owner.call('GET', `${url}&page_token=${encodeURIComponent(token)}`);
      if (own.status !== 200)
        failures.push(`${route.url}: the token fails for its own client (${own.status})`);
      for (const [who, call] of [
        ['client B', clientB],
        ['the agency key acting as client B', agencyAsB],
      ] as const) {
        const replay = await call('GET', `${url}&page_token=${encodeURIComponent(token)}`);
        if (replay.status !== 400 || replay.body.error !== 'invalid_request')
          failures.push(
            `${route.url} replayed by ${who}: ${replay.status} ${JSON.stringify(replay.body).slice(0, 200)}`,
          );
      }
    }
    assert.deepEqual(failures, []);
    for (const url of ['/v1/crm/contacts', '/v1/crm/deals', '/v1/webhooks', '/v1/agents'])
      assert.ok(covered.includes(url), `${url} not covered: ${covered.join(', ')}`);
  });

  test('an agency-wide subscription is invisible to the agency key acting as the house client', async () => {
    const agency = caller(t, tenant.agency);
    const asHouse = caller(t, { ...tenant.agency, 'x-service-client-id': tenant.houseClientId });
    const wide = await agency('POST', '/webhooks', { url: 'https://example.com/wide', events: ['*'] });
    assert.equal(wide.status, 201);
    assert.equal(wide.body.webhook.client_id, null, 'agency-wide');
    const id = wide.body.webhook.id;
    const own = await asHouse('POST', '/webhooks', { url: 'https://example.com/house', events: ['*'] });
    assert.equal(own.status, 201);

    const listed = await asHouse('GET', '/webhooks?limit=200');
    assert.equal(listed.status, 200);
    const ids = listed.body.data.map((webhook: { id: string }) => webhook.id);
    assert.ok(!ids.includes(id), 'the agency-wide subscription is listed');
    assert.ok(ids.includes(own.body.webhook.id), "the house client's own subscription is listed");
    for (const [method, body] of [
      ['GET', undefined],
      ['PATCH', { description: 'taken over' }],
      ['DELETE', undefined],
    ] as const) {
      const answer = await asHouse(method, `/webhooks/${id}`, body);
      assert.equal(answer.status, 404, `${method}: ${answer.status}`);
      assert.equal(answer.body.error, 'not_found');
    }
    for (const path of [`/webhooks/${id}/deliveries`, `/webhooks/${id}/test`]) {
      const answer = await asHouse(path.endsWith('test') ? 'POST' : 'GET', path);
      assert.equal(answer.status, 404, path);
    }
    // Unchanged, and still the agency's.
    const still = await agency('GET', `/webhooks/${id}`);
    assert.equal(still.status, 200);
    assert.equal(still.body.webhook.description, null);
    assert.ok(
      (await agency('GET', '/webhooks?limit=200')).body.data.some((w: { id: string }) => w.id === id),
    );
  });
});

/** Makes one resource of the collection at `url` as the owner, whichever way the creator does. */
function makerOf(creator: Creator, url: string) {
  return async (owner: ReturnType<typeof ownerOf>) => {
    if (creator.make) return creator.make({ ...owner, params: {} });
    const answer = await owner.call('POST', url.replace(/^\/v1/, ''), creator.post!.body());
    if (answer.status >= 300) throw new Error(`${url}: ${answer.status} ${JSON.stringify(answer.body)}`);
    return creator.post!.id(answer.body);
  };
}
