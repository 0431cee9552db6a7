import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { v7 } from 'uuid';
import { caller } from '../crm/crm-client.ts';
import { adminCall, buildTestApp, createTenant, type TestApp, type TestTenant } from '../helpers.ts';

interface Seed {
  at: string;
  direction?: 'inbound' | 'outbound';
  status?: string;
  agentId?: string | null;
  contactId?: string | null;
}

describe('GET /v1/calls: days, filters and count', () => {
  let t: TestApp;
  let tenant: TestTenant;
  let client: ReturnType<typeof caller>;
  let agentId: string;
  let contactId: string;

  /** Calls as the provider would have left them, at chosen instants; returns their ids. */
  const seed = async (scope: { orgId: string; clientId: string }, calls: Seed[]) => {
    const rows = calls.map((call) => ({
      id: v7(),
      org_id: scope.orgId,
      client_id: scope.clientId,
      direction: call.direction ?? 'inbound',
      from_number: '+14155550100',
      to_number: '+14155550101',
      status: (call.status ?? 'completed') as 'completed',
      agent_id: call.agentId ?? null,
      contact_id: call.contactId ?? null,
      created_at: new Date(call.at),
      updated_at: new Date(call.at),
    }));
    await t.platform.db.insertInto('calls').values(rows).execute();
    return rows.map((row) => row.id);
  };

  /** Every page of a query, with the count each page reported. */
  const allPages = async (call: ReturnType<typeof caller>, query: string, limit: number) => {
    const ids: string[] = [];
    const counts: number[] = [];
    let token: string | null = null;
    do {
      const suffix: string = token ? `&page_token=${token}` : '';
      const response = await call('GET', `/calls?${query}&limit=${limit}${suffix}`);
      assert.equal(response.status, 200, JSON.stringify(response.body));
      ids.push(...response.body.data.map((c: { id: string }) => c.id));
      counts.push(response.body.count);
      token = response.body.next_page_token;
    } while (token);
    return { ids, counts };
  };

  before(async () => {
    t = await buildTestApp();
    tenant = await createTenant(t.app);
    client = caller(t, tenant.client);
    agentId = (await client('POST', '/agents', { name: 'Desk', kind: 'inbound_voice' })).body.agent.id;
    contactId = (await client('POST', '/crm/contacts', { phone: '+14155550100', full_name: 'Ada' })).body
      .contact.id;
  });
  after(() => t.close());

  test('start_date and end_date count exactly the calls of those UTC days, across page boundaries, newest first', async () => {
    const scope = { orgId: tenant.orgId, clientId: tenant.clientId };
    const tied = '2026-03-02T12:00:00.000Z';
    const inside = await seed(scope, [
      { at: '2026-03-02T00:00:00.000Z' },
      ...Array.from({ length: 40 }, (_, i) => ({ at: new Date(Date.UTC(2026, 2, 2, 1, i)).toISOString() })),
      ...Array.from({ length: 5 }, () => ({ at: tied })),
      ...Array.from({ length: 20 }, (_, i) => ({ at: new Date(Date.UTC(2026, 2, 3, 10, i)).toISOString() })),
      { at: '2026-03-03T23:59:59.999Z' },
    ]);
    await seed(scope, [
      { at: '2026-03-01T23:59:59.999Z' },
      { at: '2026-03-04T00:00:00.000Z' },
      { at: '2026-02-15T12:00:00.000Z' },
    ]);
    await seed({ orgId: tenant.orgId, clientId: tenant.houseClientId }, [{ at: '2026-03-02T08:00:00.000Z' }]);

    const { ids, counts } = await allPages(client, 'start_date=2026-03-02&end_date=2026-03-03', 7);
    assert.equal(ids.length, inside.length);
    assert.equal(new Set(ids).size, ids.length, 'no call twice across pages');
    assert.deepEqual(new Set(ids), new Set(inside));
    assert.ok(counts.length > 5, 'several pages');
    assert.ok(
      counts.every((count) => count === inside.length),
      `every page counts all ${inside.length}: ${counts}`,
    );
    const listed = (await client('GET', '/calls?start_date=2026-03-02&end_date=2026-03-03&limit=200')).body
      .data;
    const times = listed.map((c: { created_at: string }) => c.created_at);
    assert.deepEqual(times, [...times].sort().reverse(), 'newest first');

    const oneDay = await client('GET', '/calls?start_date=2026-03-03&end_date=2026-03-03&limit=1');
    assert.equal(oneDay.body.count, 21);
    const since = await client('GET', '/calls?start_date=2026-03-04&limit=1');
    assert.equal(since.body.count, 1, 'start_date alone: from that day on');
    const until = await client('GET', '/calls?end_date=2026-03-01&limit=1');
    assert.equal(until.body.count, 2, 'end_date alone: up to the end of that day');
    assert.equal((await client('GET', '/calls?limit=1')).body.count, inside.length + 3);
  });

  test("with an org time zone, days are that zone's days, daylight saving included", async () => {
    const org = await createTenant(t.app);
    await adminCall(t.app, 'PATCH', `/orgs/${org.orgId}`, { timezone: 'America/New_York' });
    const scope = { orgId: org.orgId, clientId: org.clientId };
    // New York: UTC-5 until 2026-03-08 02:00, then UTC-4; March 8 is 23 hours long.
    const [lateMarch7, earlyMarch8, lateMarch8, earlyMarch9] = await seed(scope, [
      { at: '2026-03-08T04:59:59.999Z' },
      { at: '2026-03-08T05:00:00.000Z' },
      { at: '2026-03-09T03:59:59.999Z' },
      { at: '2026-03-09T04:00:00.000Z' },
    ]);
    const day = async (date: string) =>
      (await caller(t, org.client)('GET', `/calls?start_date=${date}&end_date=${date}`)).body.data.map(
        (c: { id: string }) => c.id,
      );
    assert.deepEqual(await day('2026-03-07'), [lateMarch7]);
    assert.deepEqual(await day('2026-03-08'), [lateMarch8, earlyMarch8]);
    assert.deepEqual(await day('2026-03-09'), [earlyMarch9]);
    await adminCall(t.app, 'PATCH', `/orgs/${org.orgId}`, { timezone: null });
    assert.deepEqual(await day('2026-03-08'), [earlyMarch8, lateMarch7], 'UTC again');
  });

  test('count equals a count of the calls themselves for any days, zone and filters, as calls move on', async () => {
    const org = await createTenant(t.app);
    await adminCall(t.app, 'PATCH', `/orgs/${org.orgId}`, { timezone: 'Asia/Kolkata' });
    const orgClient = caller(t, org.client);
    const agents = [
      (await orgClient('POST', '/agents', { name: 'One', kind: 'inbound_voice' })).body.agent.id,
      (await orgClient('POST', '/agents', { name: 'Two', kind: 'outbound_voice' })).body.agent.id,
    ];
    const statuses = ['queued', 'ringing', 'in_progress', 'completed', 'no_answer'];
    let seed32 = 7;
    const random = () => {
      seed32 = (seed32 * 1_103_515_245 + 12_345) % 2_147_483_648;
      return seed32 / 2_147_483_648;
    };
    const pick = <T>(items: T[]) => items[Math.floor(random() * items.length)];
    const ids = await seed(
      { orgId: org.orgId, clientId: org.clientId },
      Array.from({ length: 400 }, () => ({
        at: new Date(Date.UTC(2026, 6, 1) + Math.floor(random() * 10 * 86_400_000)).toISOString(),
        direction: pick(['inbound', 'outbound'] as const),
        status: pick(statuses),
        agentId: pick([...agents, null]),
      })),
    );
    // Calls move on after they are counted: the day counts follow.
    for (const id of ids.slice(0, 120)) {
      await t.platform.db.updateTable('calls').set({ status: 'completed' }).where('id', '=', id).execute();
    }

    for (let round = 0; round < 40; round++) {
      const start = 1 + Math.floor(random() * 10);
      const end = start + Math.floor(random() * 5);
      const day = (d: number) => `2026-07-${String(d).padStart(2, '0')}`;
      const params = new URLSearchParams();
      if (random() < 0.85) params.set('start_date', day(start));
      if (random() < 0.85) params.set('end_date', day(end));
      if (random() < 0.3) params.set('agent_id', pick(agents));
      if (random() < 0.3) params.set('direction', pick(['inbound', 'outbound']));
      if (random() < 0.3) params.set('status', pick(statuses));
      const { body } = await orgClient('GET', `/calls?${params}&limit=1`);

      let exact = t.platform.db
        .selectFrom('calls')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('org_id', '=', org.orgId)
        .where('client_id', '=', org.clientId);
      // Kolkata is UTC+5:30 all year: its days start at 18:30 UTC the day before.
      const kolkataMidnight = (d: number) => new Date(Date.UTC(2026, 6, d) - 5.5 * 3_600_000);
      if (params.has('start_date')) exact = exact.where('created_at', '>=', kolkataMidnight(start));
      if (params.has('end_date')) exact = exact.where('created_at', '<', kolkataMidnight(end + 1));
      if (params.has('agent_id')) exact = exact.where('agent_id', '=', params.get('agent_id'));
      if (params.has('direction'))
        exact = exact.where('direction', '=', params.get('direction') as 'inbound');
      if (params.has('status')) exact = exact.where('status', '=', params.get('status') as 'completed');
      const { n } = await exact.executeTakeFirstOrThrow();
      assert.equal(body.count, Number(n), `count of /calls?${params}`);
    }
  });

  test('an end_date before the start_date, or a date that is not yyyy-MM-dd, is 400 naming it', async () => {
    const backwards = await client('GET', '/calls?start_date=2026-03-03&end_date=2026-03-02');
    assert.equal(backwards.status, 400);
    assert.equal(backwards.body.error, 'validation_error');
    assert.equal(backwards.body.details.fields[0].field, 'end_date');
    for (const [query, field] of [
      ['start_date=2026-3-2', 'start_date'],
      ['start_date=2026-02-30', 'start_date'],
      ['end_date=03/02/2026', 'end_date'],
      ['status=hung_up', 'status'],
      ['direction=sideways', 'direction'],
      ['agent_id=nope', 'agent_id'],
    ]) {
      const response = await client('GET', `/calls?${query}`);
      assert.equal(response.status, 400, query);
      assert.equal(response.body.details.fields[0].field, field, query);
    }
    assert.equal((await client('GET', '/calls?start_date=2026-03-02&end_date=2026-03-02')).status, 200);
  });

  test('agent_id, direction, status and contact_id filter the page and the count alike', async () => {
    const org = await createTenant(t.app);
    const orgClient = caller(t, org.client);
    const agent = (await orgClient('POST', '/agents', { name: 'Out', kind: 'outbound_voice' })).body.agent.id;
    const contact = (await orgClient('POST', '/crm/contacts', { phone: '+14155550111', full_name: 'Bo' }))
      .body.contact.id;
    const scope = { orgId: org.orgId, clientId: org.clientId };
    const at = '2026-04-01T10:00:00.000Z';
    await seed(scope, [
      { at, direction: 'outbound', status: 'completed', agentId: agent, contactId: contact },
      { at, direction: 'outbound', status: 'no_answer', agentId: agent },
      { at, direction: 'inbound', status: 'completed', contactId: contact },
      { at, direction: 'inbound', status: 'voicemail' },
    ]);
    const count = async (query: string) => {
      const { body } = await orgClient('GET', `/calls?${query}`);
      assert.equal(body.data.length, body.count, query);
      return body.count;
    };
    assert.equal(await count(`agent_id=${agent}`), 2);
    assert.equal(await count('direction=inbound'), 2);
    assert.equal(await count('status=completed'), 2);
    assert.equal(await count(`contact_id=${contact}`), 2);
    assert.equal(
      await count(`contact_id=${contact}&direction=outbound&status=completed&agent_id=${agent}`),
      1,
    );
    assert.equal(await count(`agent_id=${agentId}`), 0, "another org's agent matches nothing");
    assert.equal(await count('start_date=2026-04-02'), 0);

    const first = await orgClient('GET', '/calls?direction=inbound&limit=1');
    const other = await orgClient(
      'GET',
      `/calls?direction=outbound&limit=1&page_token=${first.body.next_page_token}`,
    );
    assert.equal(other.status, 400, "a page token is bound to its list's filters");
  });

  test('GET /calls/{id} of another org or client is 404; POST /calls is always 403 outbound_dialing_unavailable', async () => {
    const scope = { orgId: tenant.orgId, clientId: tenant.clientId };
    const [id] = await seed(scope, [{ at: '2026-05-01T10:00:00.000Z', agentId, contactId }]);
    const own = await client('GET', `/calls/${id}`);
    assert.equal(own.status, 200);
    assert.deepEqual(own.body.call.transcript, []);
    const other = await createTenant(t.app);
    for (const headers of [other.agency, other.client, tenant.agency]) {
      assert.equal((await caller(t, headers)('GET', `/calls/${id}`)).status, 404);
    }
    assert.equal((await client('GET', '/calls/not-a-uuid')).status, 400);

    for (const body of [{ to: '+14155550123', agent_id: agentId }, {}, undefined]) {
      const refused = await client('POST', '/calls', body);
      assert.equal(refused.status, 403);
      assert.equal(refused.body.error, 'outbound_dialing_unavailable');
      assert.match(refused.body.message, /not available/);
      assert.equal(refused.body.details.status_note, refused.body.message);
    }
    assert.equal((await caller(t, tenant.agency)('POST', '/calls', {})).status, 403);
  });
});
