import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { caller } from '../crm/crm-client.ts';
import { buildTestApp, createTenant, sleep, type TestApp, type TestTenant } from '../helpers.ts';

const ALIAS_TTL_MS = 2000;

describe('agents', () => {
  let t: TestApp;
  let tenant: TestTenant;
  let other: TestTenant;
  let agency: ReturnType<typeof caller>;
  let clientA: ReturnType<typeof caller>;

  before(async () => {
    t = await buildTestApp({ AGENT_SLUG_ALIAS_TTL: `${ALIAS_TTL_MS}ms` });
    tenant = await createTenant(t.app);
    other = await createTenant(t.app);
    agency = caller(t, tenant.agency);
    clientA = caller(t, tenant.client);
  });
  after(() => t.close());

  const create = (call: ReturnType<typeof caller>, body: object) => call('POST', '/agents', body);

  test('POST /agents creates an agent with every field, and GET answers it by id and by slug', async () => {
    const created = await create(clientA, {
      name: 'Front Desk',
      slug: 'front-desk-full',
      kind: 'inbound_voice',
      purpose: 'reception',
      labels: ['dental', 'main', 'dental'],
      location_label: 'Downtown office',
      greeting: 'Thanks for calling Acme Dental.',
      voice_id: '11labs-Adrian',
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const { agent } = created.body;
    assert.deepEqual(Object.keys(agent).sort(), [
      'client_id',
      'created_at',
      'greeting',
      'id',
      'kind',
      'labels',
      'location_label',
      'name',
      'previous_slugs',
      'purpose',
      'slug',
      'state',
      'updated_at',
      'voice_id',
    ]);
    assert.equal(agent.client_id, tenant.clientId);
    assert.equal(agent.state, 'active');
    assert.deepEqual(agent.labels, ['dental', 'main']);
    assert.deepEqual(agent.previous_slugs, []);

    const byId = await clientA('GET', `/agents/${agent.id}`);
    assert.equal(byId.status, 200);
    assert.deepEqual(byId.body.agent, agent);
    const bySlug = await clientA('GET', '/agents/front-desk-full');
    assert.deepEqual(bySlug.body.agent, agent);
  });

  test('a missing slug is derived from the name, and made unique in the org', async () => {
    const first = await create(agency, { name: 'Ça Va Réception!', kind: 'sms' });
    assert.equal(first.body.agent.slug, 'ca-va-reception');
    const second = await create(clientA, { name: 'ça va  réception', kind: 'sms' });
    assert.equal(second.body.agent.slug, 'ca-va-reception-2');
    const short = await create(agency, { name: 'AI', kind: 'sms' });
    assert.equal(short.body.agent.slug, 'ai-agent');
    const symbols = await create(agency, { name: '***', kind: 'sms' });
    assert.match(symbols.body.agent.slug, /^agent(-\d+)?$/);
  });

  test('every limit is a 400 validation_error naming the field, and creates nothing', async () => {
    const cases: Array<[object, string]> = [
      [{ name: '', kind: 'sms' }, 'name'],
      [{ name: 'x'.repeat(201), kind: 'sms' }, 'name'],
      [{ name: 'A', kind: 'robot' }, 'kind'],
      [{ name: 'A' }, 'kind'],
      [{ name: 'A', kind: 'sms', slug: 'ab' }, 'slug'],
      [{ name: 'A', kind: 'sms', slug: 'Upper-Case' }, 'slug'],
      [{ name: 'A', kind: 'sms', slug: '-leading' }, 'slug'],
      [{ name: 'A', kind: 'sms', slug: 'x'.repeat(65) }, 'slug'],
      [{ name: 'A', kind: 'sms', slug: '0190f3a2-7b1c-7cc0-9a53-5d2b8e0c4f11' }, 'slug'],
      [{ name: 'A', kind: 'sms', purpose: 'p'.repeat(65) }, 'purpose'],
      [{ name: 'A', kind: 'sms', labels: Array.from({ length: 17 }, (_, i) => `l${i}`) }, 'labels'],
      [{ name: 'A', kind: 'sms', labels: ['l'.repeat(33)] }, 'labels.0'],
      [{ name: 'A', kind: 'sms', location_label: 'l'.repeat(81) }, 'location_label'],
      [{ name: 'A', kind: 'sms', greeting: 'g'.repeat(4001) }, 'greeting'],
      [{ name: 'A', kind: 'sms', state: 'deleted' }, 'state'],
    ];
    const before = (await agency('GET', '/agents?limit=200')).body.data.length;
    for (const [body, field] of cases) {
      const response = await create(agency, body);
      assert.equal(response.status, 400, `${JSON.stringify(body)}: ${response.status}`);
      assert.equal(response.body.error, 'validation_error');
      assert.ok(
        response.body.details.fields.some((f: { field: string }) => f.field === field),
        `${field} named in ${JSON.stringify(response.body.details.fields)}`,
      );
    }
    const exact = await create(agency, {
      name: 'n'.repeat(200),
      kind: 'sms',
      slug: `s${'x'.repeat(63)}`,
      purpose: 'p'.repeat(64),
      labels: Array.from({ length: 16 }, (_, i) => `${i}`.padEnd(32, 'l')),
      location_label: 'l'.repeat(80),
      greeting: 'g'.repeat(4000),
    });
    assert.equal(exact.status, 201, 'every limit itself is accepted');
    assert.equal((await agency('GET', '/agents?limit=200')).body.data.length, before + 1);
  });

  test('kind is immutable: PATCH with another kind is 400 naming kind; the same kind changes nothing', async () => {
    const { agent } = (await create(clientA, { name: 'Kind Fixed', kind: 'outbound_voice' })).body;
    const changed = await clientA('PATCH', `/agents/${agent.id}`, { kind: 'inbound_voice', name: 'Renamed' });
    assert.equal(changed.status, 400);
    assert.equal(changed.body.error, 'validation_error');
    assert.deepEqual(
      changed.body.details.fields.map((f: { field: string }) => f.field),
      ['kind'],
    );
    assert.equal((await clientA('GET', `/agents/${agent.id}`)).body.agent.name, 'Kind Fixed');
    const same = await clientA('PATCH', `/agents/${agent.id}`, { kind: 'outbound_voice' });
    assert.equal(same.status, 200);
    const invalid = await clientA('PATCH', `/agents/${agent.id}`, { labels: ['l'.repeat(33)] });
    assert.equal(invalid.status, 400);
  });

  test('rename front-desk to reception: both answer, nobody else takes front-desk, and after the alias period it is free', async () => {
    const { agent } = (await create(clientA, { name: 'Desk', slug: 'front-desk', kind: 'inbound_voice' }))
      .body;
    const renamed = await clientA('PATCH', '/agents/front-desk', { slug: 'reception' });
    assert.equal(renamed.status, 200, JSON.stringify(renamed.body));
    assert.equal(renamed.body.agent.slug, 'reception');
    assert.deepEqual(renamed.body.agent.previous_slugs, ['front-desk']);

    const byAlias = await clientA('GET', '/agents/front-desk');
    assert.equal(byAlias.status, 200);
    assert.equal(byAlias.body.agent.id, agent.id);
    assert.equal(byAlias.body.agent.slug, 'reception', 'the alias answers with the current slug');
    assert.equal((await clientA('GET', '/agents/reception')).body.agent.id, agent.id);

    const taken = await create(agency, { name: 'Thief', slug: 'front-desk', kind: 'sms' });
    assert.equal(taken.status, 409);
    assert.equal(taken.body.error, 'slug_conflict');
    const { agent: thief } = (await create(agency, { name: 'Thief', kind: 'sms' })).body;
    const renameOnto = await agency('PATCH', `/agents/${thief.id}`, { slug: 'front-desk' });
    assert.equal(renameOnto.status, 409);
    assert.equal(renameOnto.body.error, 'slug_conflict');
    const currentTaken = await agency('PATCH', `/agents/${thief.id}`, { slug: 'reception' });
    assert.equal(currentTaken.status, 409);

    await sleep(ALIAS_TTL_MS + 200);
    const expired = await clientA('GET', '/agents/front-desk');
    assert.equal(expired.status, 404);
    assert.equal(expired.body.error, 'not_found');
    assert.deepEqual((await clientA('GET', '/agents/reception')).body.agent.previous_slugs, []);
    const freed = await agency('PATCH', `/agents/${thief.id}`, { slug: 'front-desk' });
    assert.equal(freed.status, 200, 'the slug is free again');
    assert.equal((await agency('GET', '/agents/front-desk')).body.agent.id, thief.id);
  });

  test('two agents racing for one slug: exactly one gets it, the other is 409', async () => {
    const racers = await Promise.all(
      ['Racer A', 'Racer B', 'Racer C'].map(
        async (name) => (await create(clientA, { name, kind: 'sms' })).body.agent,
      ),
    );
    const renames = await Promise.all(
      racers.map((agent) => clientA('PATCH', `/agents/${agent.id}`, { slug: 'finish-line' })),
    );
    assert.deepEqual(renames.map((r) => r.status).sort(), [200, 409, 409]);
    const creates = await Promise.all(
      [1, 2].map(() => create(agency, { name: 'Late', slug: 'start-line', kind: 'sms' })),
    );
    assert.deepEqual(creates.map((r) => r.status).sort(), [201, 409]);
  });

  test('renaming back to one of its own aliases is allowed', async () => {
    await create(clientA, { name: 'Bouncer', slug: 'bounce-a', kind: 'sms' });
    await clientA('PATCH', '/agents/bounce-a', { slug: 'bounce-b' });
    const back = await clientA('PATCH', '/agents/bounce-b', { slug: 'bounce-a' });
    assert.equal(back.status, 200, JSON.stringify(back.body));
    assert.equal(back.body.agent.slug, 'bounce-a');
    assert.deepEqual(back.body.agent.previous_slugs, ['bounce-b']);
    assert.equal((await clientA('GET', '/agents/bounce-b')).body.agent.slug, 'bounce-a');
  });

  test('an archived agent is 410 agent_archived by id, slug and alias, and PATCH state=active restores it', async () => {
    const { agent } = (await create(clientA, { name: 'Old', slug: 'old-desk', kind: 'inbound_voice' })).body;
    await clientA('PATCH', `/agents/${agent.id}`, { slug: 'older-desk' });
    const archived = await clientA('PATCH', '/agents/old-desk', { state: 'archived' });
    assert.equal(archived.status, 200);
    assert.equal(archived.body.agent.state, 'archived');
    for (const path of [agent.id, 'older-desk', 'old-desk']) {
      const response = await clientA('GET', `/agents/${path}`);
      assert.equal(response.status, 410, path);
      assert.deepEqual(response.body, {
        error: 'agent_archived',
        message: response.body.message,
        details: { agent_id: agent.id, slug: 'older-desk' },
      });
    }
    const listed = await clientA('GET', '/agents?limit=200');
    assert.ok(!listed.body.data.some((a: { id: string }) => a.id === agent.id), 'hidden from lists');
    const archivedList = await clientA('GET', '/agents?state=archived');
    assert.deepEqual(
      archivedList.body.data.map((a: { id: string }) => a.id),
      [agent.id],
    );
    const taken = await create(agency, { name: 'Taker', slug: 'older-desk', kind: 'sms' });
    assert.equal(taken.status, 409, 'an archived agent keeps its slug');

    const restored = await clientA('PATCH', '/agents/old-desk', { state: 'active' });
    assert.equal(restored.status, 200);
    assert.equal((await clientA('GET', '/agents/old-desk')).status, 200);
    await clientA('PATCH', `/agents/${agent.id}`, { state: 'paused' });
    assert.equal((await clientA('GET', `/agents/${agent.id}`)).body.agent.state, 'paused');
  });

  test('lists filter by kind, purpose, label, state, q and client_id, newest first, page by page', async () => {
    const org = await createTenant(t.app);
    const house = caller(t, org.agency);
    const client = caller(t, org.client);
    const made = [];
    made.push(
      (
        await create(house, {
          name: 'Alpha Reception',
          kind: 'inbound_voice',
          purpose: 'reception',
          labels: ['east'],
        })
      ).body.agent,
    );
    made.push(
      (
        await create(client, {
          name: 'Beta Sales',
          kind: 'outbound_voice',
          purpose: 'sales',
          labels: ['west', 'east'],
        })
      ).body.agent,
    );
    made.push(
      (await create(client, { name: 'Gamma Texts', slug: 'gamma-sms', kind: 'sms', purpose: 'follow-up' }))
        .body.agent,
    );
    made.push(
      (await create(house, { name: 'Delta Listing', kind: 'google_my_business', state: 'paused' })).body
        .agent,
    );

    const ids = async (call: ReturnType<typeof caller>, query: string) => {
      const response = await call('GET', `/agents${query}`);
      assert.equal(response.status, 200, JSON.stringify(response.body));
      return response.body.data.map((a: { name: string }) => a.name);
    };
    assert.deepEqual(await ids(house, ''), ['Delta Listing', 'Gamma Texts', 'Beta Sales', 'Alpha Reception']);
    assert.deepEqual(await ids(house, `?client_id=${org.clientId}`), ['Gamma Texts', 'Beta Sales']);
    assert.deepEqual(await ids(house, `?client_id=${org.houseClientId}`), [
      'Delta Listing',
      'Alpha Reception',
    ]);
    assert.deepEqual(await ids(client, ''), ['Gamma Texts', 'Beta Sales'], 'a client key sees its own');
    assert.deepEqual(await ids(client, `?client_id=${org.houseClientId}`), []);
    assert.deepEqual(await ids(caller(t, org.agencyAsClient), ''), ['Gamma Texts', 'Beta Sales']);
    assert.deepEqual(await ids(house, '?kind=outbound_voice'), ['Beta Sales']);
    assert.deepEqual(await ids(house, '?purpose=reception'), ['Alpha Reception']);
    assert.deepEqual(await ids(house, '?label=east'), ['Beta Sales', 'Alpha Reception']);
    assert.deepEqual(await ids(house, '?state=paused'), ['Delta Listing']);
    assert.deepEqual(await ids(house, '?state=active'), ['Gamma Texts', 'Beta Sales', 'Alpha Reception']);
    assert.deepEqual(await ids(house, '?q=SALES'), ['Beta Sales'], 'q over the name, case-insensitive');
    assert.deepEqual(await ids(house, '?q=gamma-sms'), ['Gamma Texts'], 'q over the slug');
    assert.deepEqual(await ids(house, '?q=follow'), ['Gamma Texts'], 'q over the purpose');
    assert.deepEqual(await ids(house, '?q=%25'), [], 'q is a literal substring');
    assert.equal((await house('GET', '/agents?kind=robot')).status, 400);

    const first = (await house('GET', '/agents?limit=3')).body;
    assert.equal(first.data.length, 3);
    const second = (await house('GET', `/agents?limit=3&page_token=${first.next_page_token}`)).body;
    assert.deepEqual(
      second.data.map((a: { id: string }) => a.id),
      [made[0].id],
    );
    assert.equal(second.next_page_token, null);
  });

  test("another org's or another client's agent is 404 by id, slug and alias, like a missing one", async () => {
    const { agent } = (await create(clientA, { name: 'Private', slug: 'private-desk', kind: 'sms' })).body;
    await clientA('PATCH', '/agents/private-desk', { slug: 'private-room' });
    const outsiders = {
      'another org': caller(t, other.agency),
      'another org as client': caller(t, other.client),
      'the house client as a client': caller(t, {
        ...tenant.agency,
        'x-service-client-id': tenant.houseClientId,
      }),
    };
    for (const [who, call] of Object.entries(outsiders)) {
      for (const path of [agent.id, 'private-room', 'private-desk']) {
        const read = await call('GET', `/agents/${path}`);
        assert.equal(read.status, 404, `${who} GET ${path}`);
        const write = await call('PATCH', `/agents/${path}`, { name: 'Hijacked' });
        assert.equal(write.status, 404, `${who} PATCH ${path}`);
      }
    }
    assert.equal((await clientA('GET', `/agents/${agent.id}`)).body.agent.name, 'Private');
    assert.equal(
      (await agency('GET', '/agents/private-room')).status,
      200,
      "the agency key sees its org's agents",
    );
    assert.equal((await clientA('GET', '/agents/no-such-agent')).status, 404);
    assert.equal((await clientA('GET', '/agents/00000000-0000-7000-8000-000000000000')).status, 404);
    assert.equal((await clientA('GET', '/agents/Not A Slug')).status, 404);
    const elsewhere = await create(caller(t, other.agency), {
      name: 'Elsewhere',
      slug: 'private-room',
      kind: 'sms',
    });
    assert.equal(elsewhere.status, 201, 'slugs are unique per org, not across orgs');
  });

  test('POST /agents honours Idempotency-Key', async () => {
    const headers = { 'idempotency-key': 'agent-create-1' };
    const first = await clientA('POST', '/agents', { name: 'Once', kind: 'sms' }, headers);
    const again = await clientA('POST', '/agents', { name: 'Once', kind: 'sms' }, headers);
    assert.equal(first.status, 201);
    assert.equal(again.status, 201);
    assert.equal(again.headers['idempotent-replayed'], 'true');
    assert.equal(again.body.agent.id, first.body.agent.id);
  });
});
