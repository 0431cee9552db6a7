import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { emit } from '../../src/platform/events/emit.ts';
import { relayEvents } from '../../src/platform/events/outbox-relay.ts';
import { buildTestApp, createTenant, eventually, type TestApp, type TestTenant } from '../helpers.ts';

describe('events and pagination', () => {
  let t: TestApp;
  let tenant: TestTenant;
  let other: TestTenant;

  before(async () => {
    t = await buildTestApp();
    tenant = await createTenant(t.app);
    other = await createTenant(t.app);
  });
  after(() => t.close());

  const record = (
    scope: { orgId: string; clientId: string },
    type: string,
    data: Record<string, unknown> = {},
  ) => t.platform.db.transaction().execute((trx) => emit(trx, scope, type, data, { source: 'test' }));

  const list = (headers: Record<string, string>, query = '') =>
    t.app.inject({ method: 'GET', url: `/v1/events${query}`, headers });

  test('emit writes the event; the outbox relay hands it to the consumers exactly once, even with two relays racing', async () => {
    const event = await record({ orgId: tenant.orgId, clientId: tenant.clientId }, 'contact.created', {
      id: 'x',
    });
    assert.match(event.id, /^evt_[0-9a-f-]{36}$/);
    assert.match(event.created, /^\d{10}$/);
    const seen: string[] = [];
    const consumer = async (_db: unknown, received: { id: string }) => {
      seen.push(received.id);
    };
    await Promise.all([relayEvents(t.platform.db, [consumer]), relayEvents(t.platform.db, [consumer])]);
    await relayEvents(t.platform.db, [consumer]);
    assert.equal(seen.filter((id) => id === event.id).length, 1);
  });

  test('a consumer failure fails its own event only, and a later run hands it over again', async () => {
    const event = await record({ orgId: tenant.orgId, clientId: tenant.clientId }, 'contact.updated', {
      id: 'y',
    });
    const sibling = await record({ orgId: other.orgId, clientId: other.clientId }, 'contact.updated', {
      id: 'z',
    });
    const seen: string[] = [];
    const failing = async (_db: unknown, received: { id: string }) => {
      if (received.id === event.id) throw new Error('receiver store down');
      seen.push(received.id);
    };
    const policy = { maxAttempts: 5, retryBaseMs: 0, retryMaxMs: 0 };
    await relayEvents(t.platform.db, [failing], policy);
    assert.ok(seen.includes(sibling.id), 'the rest of the batch went on');
    const { rows } = await t.database.pool.query(
      'SELECT relay_attempts, dispatched_at FROM events WHERE id = $1',
      [event.id],
    );
    assert.deepEqual(rows[0], { relay_attempts: 1, dispatched_at: null });
    await relayEvents(
      t.platform.db,
      [
        async (_db: unknown, received: { id: string }) => {
          seen.push(received.id);
        },
      ],
      policy,
    );
    assert.ok(seen.includes(event.id));
    assert.equal(seen.filter((id) => id === sibling.id).length, 1);
  });

  test('a consumer meeting a database outage costs its event no attempt: the batch is claimed again', async () => {
    const event = await record({ orgId: tenant.orgId, clientId: tenant.clientId }, 'contact.updated', {
      id: 'outage',
    });
    const unreachable = async (_db: unknown, received: { id: string }) => {
      if (received.id === event.id)
        throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    };
    await assert.rejects(
      relayEvents(t.platform.db, [unreachable], { maxAttempts: 1, retryBaseMs: 0, retryMaxMs: 0 }),
    );
    const { rows } = await t.database.pool.query(
      'SELECT relay_attempts, relay_dead_at, dispatched_at FROM events WHERE id = $1',
      [event.id],
    );
    assert.deepEqual(rows[0], { relay_attempts: 0, relay_dead_at: null, dispatched_at: null });
    await relayEvents(t.platform.db, [async () => {}]);
    const after = await t.database.pool.query('SELECT dispatched_at FROM events WHERE id = $1', [event.id]);
    assert.notEqual(after.rows[0].dispatched_at, null);
  });

  test('a rolled-back change leaves no event', async () => {
    const before = (await t.database.pool.query('SELECT count(*)::int AS n FROM events')).rows[0].n;
    await assert.rejects(
      t.platform.db.transaction().execute(async (trx) => {
        await emit(trx, { orgId: tenant.orgId, clientId: tenant.clientId }, 'contact.created', {});
        throw new Error('abort');
      }),
    );
    assert.equal((await t.database.pool.query('SELECT count(*)::int AS n FROM events')).rows[0].n, before);
  });

  test('a running worker dispatches new events', async () => {
    await t.startWorker();
    const event = await record({ orgId: tenant.orgId, clientId: tenant.clientId }, 'task.completed');
    await eventually(async () => {
      const { rows } = await t.database.pool.query('SELECT dispatched_at FROM events WHERE id = $1', [
        event.id,
      ]);
      return rows[0].dispatched_at !== null;
    });
  });

  test('visibility: agency-as-itself sees every client of its org; client scopes see their own', async () => {
    const house = await record({ orgId: tenant.orgId, clientId: tenant.houseClientId }, 'deal.created');
    const client = await record({ orgId: tenant.orgId, clientId: tenant.clientId }, 'deal.created');
    const foreign = await record({ orgId: other.orgId, clientId: other.clientId }, 'deal.created');

    const ids = async (headers: Record<string, string>) =>
      (await list(headers, '?type=deal.created')).json().data.map((e: { id: string }) => e.id);

    const agencyIds = await ids(tenant.agency);
    assert.ok(agencyIds.includes(house.id) && agencyIds.includes(client.id));
    assert.ok(!agencyIds.includes(foreign.id));

    for (const headers of [tenant.client, tenant.agencyAsClient]) {
      const clientIds = await ids(headers);
      assert.ok(clientIds.includes(client.id));
      assert.ok(!clientIds.includes(house.id));
      assert.ok(!clientIds.includes(foreign.id));
    }

    const one = await t.app.inject({ method: 'GET', url: `/v1/events/${client.id}`, headers: tenant.client });
    assert.equal(one.statusCode, 200);
    assert.deepEqual(Object.keys(one.json().event).sort(), ['created', 'data', 'id', 'metadata', 'type']);
    assert.deepEqual(one.json().event.metadata, { source: 'test' });
    const hidden = await t.app.inject({
      method: 'GET',
      url: `/v1/events/${house.id}`,
      headers: tenant.client,
    });
    assert.equal(hidden.statusCode, 404);
    const foreignRead = await t.app.inject({
      method: 'GET',
      url: `/v1/events/${foreign.id}`,
      headers: tenant.agency,
    });
    assert.equal(foreignRead.statusCode, 404);
  });

  test('pagination: newest first, no row skipped or repeated while rows are inserted between pages', async () => {
    const scope = { orgId: other.orgId, clientId: other.houseClientId };
    const original: string[] = [];
    for (let i = 0; i < 25; i++) original.push((await record(scope, 'page.test', { i })).id);

    const seen: string[] = [];
    let token: string | null = null;
    let pages = 0;
    do {
      const query = `?type=page.test&limit=7${token ? `&page_token=${encodeURIComponent(token)}` : ''}`;
      const response = await list(other.agency, query);
      assert.equal(response.statusCode, 200);
      const body = response.json();
      assert.equal(body.limit, 7);
      assert.ok(body.data.length <= 7);
      seen.push(...body.data.map((e: { id: string }) => e.id));
      token = body.next_page_token;
      pages += 1;
      // Concurrent writers keep adding rows while the client pages.
      await Promise.all([
        record(scope, 'page.test', { late: pages }),
        record(scope, 'page.test', { late: -pages }),
      ]);
    } while (token);

    assert.equal(new Set(seen).size, seen.length, 'no row repeated');
    assert.deepEqual(seen, [...original].reverse(), 'every original row once, newest first');
  });

  test('pagination: limit bounds and bad tokens', async () => {
    for (const limit of ['0', '201', 'abc', '-1']) {
      const response = await list(tenant.agency, `?limit=${limit}`);
      assert.equal(response.statusCode, 400, limit);
      assert.equal(response.json().error, 'validation_error');
    }
    const ok = await list(tenant.agency, '?limit=1');
    assert.equal(ok.json().limit, 1);
    const token = ok.json().next_page_token as string;
    assert.ok(token);

    const tampered = token.slice(0, -2) + (token.endsWith('AA') ? 'BB' : 'AA');
    const forged = `${Buffer.from(JSON.stringify(['evt_ffffffff-ffff-7fff-bfff-ffffffffffff'])).toString('base64url')}.${token.split('.')[1]}`;
    for (const bad of [tampered, forged, 'garbage', 'a.b.c']) {
      const response = await list(tenant.agency, `?limit=1&page_token=${encodeURIComponent(bad)}`);
      assert.equal(response.statusCode, 400, bad);
      assert.equal(response.json().error, 'invalid_request');
    }
    // A token is bound to its tenant and its list: another tenant, or another filter, cannot use it.
    const foreign = await list(other.agency, `?limit=1&page_token=${encodeURIComponent(token)}`);
    assert.equal(foreign.statusCode, 400);
    const otherList = await list(
      tenant.agency,
      `?limit=1&type=deal.created&page_token=${encodeURIComponent(token)}`,
    );
    assert.equal(otherList.statusCode, 400);
  });
});
