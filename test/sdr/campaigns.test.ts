import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { caller } from '../crm/crm-client.ts';
import { adminCall, buildTestApp, createTenant, type TestApp, type TestTenant } from '../helpers.ts';
import { enableSdr, newContact } from './support.ts';

const FROM = '+14155550800';

describe('SDR campaigns: access, limits, status moves and prospects', () => {
  let t: TestApp;
  let tenant: TestTenant;
  let other: TestTenant;
  let agency: ReturnType<typeof caller>;

  before(async () => {
    t = await buildTestApp();
    tenant = await createTenant(t.app);
    other = await createTenant(t.app);
    agency = caller(t, tenant.agency);
  });
  after(() => t.close());

  test('a client key is 403 agency_key_required on every SDR route, whatever it sends', async () => {
    const client = caller(t, tenant.client);
    for (const [method, url, body] of [
      ['GET', '/sdr/campaigns', undefined],
      ['POST', '/sdr/campaigns', { name: '' }],
      ['GET', '/sdr/settings', undefined],
      ['PUT', '/sdr/settings', { timezone: 'Nowhere' }],
      ['GET', '/sdr/campaigns/0190f3c4-0000-7000-8000-000000000000', undefined],
      ['POST', '/sdr/campaigns/0190f3c4-0000-7000-8000-000000000000/prospects', { contact_ids: [] }],
    ] as const) {
      const reply = await client(method, url, body);
      assert.equal(reply.status, 403, `${method} ${url}`);
      assert.equal(reply.body.error, 'agency_key_required');
      assert.equal(typeof reply.body.message, 'string');
    }
  });

  test('until the sdr_outbound flag is on, creating is 403 feature_disabled and reads still work', async () => {
    const created = await agency('POST', '/sdr/campaigns', { name: 'Too early' });
    assert.equal(created.status, 403);
    assert.equal(created.body.error, 'feature_disabled');
    const list = await agency('GET', '/sdr/campaigns');
    assert.equal(list.status, 200);
    assert.deepEqual(list.body.data, []);
    await enableSdr(t, tenant, FROM);
  });

  test('every limit is a 400 validation_error naming the field, and changes nothing', async () => {
    const bad: [string, Record<string, unknown>][] = [
      ['name', { name: '' }],
      ['name', { name: 'x'.repeat(201) }],
      ['description', { description: 'x'.repeat(4001) }],
      ['max_concurrent_calls', { max_concurrent_calls: 0 }],
      ['max_concurrent_calls', { max_concurrent_calls: 11 }],
      ['max_attempts', { max_attempts: 0 }],
      ['max_attempts', { max_attempts: 11 }],
      ['ring_timeout_seconds', { ring_timeout_seconds: 14 }],
      ['ring_timeout_seconds', { ring_timeout_seconds: 121 }],
      ['max_duration_seconds', { max_duration_seconds: 29 }],
      ['max_duration_seconds', { max_duration_seconds: 1801 }],
      ['calling_window_start', { calling_window_start: '9:00' }],
      ['calling_window_end', { calling_window_start: '18:00', calling_window_end: '09:00' }],
      ['calling_days', { calling_days: [] }],
      ['calling_days', { calling_days: [0] }],
      ['calling_days', { calling_days: [8] }],
      ['from_number', { from_number: '4155550800' }],
      ['from_number', { from_number: '+14155559999' }],
      ['cal_com_booking_url', { cal_com_booking_url: 'http://cal.com/acme' }],
      ['post_call_email', { post_call_email: 'not-an-email' }],
      ['prospect_ids', { prospect_ids: ['0190f3c4-0000-7000-8000-000000000000'] }],
    ];
    for (const [field, body] of bad) {
      const reply = await agency('POST', '/sdr/campaigns', { name: 'Valid', from_number: FROM, ...body });
      assert.equal(reply.status, 400, `${field}: ${JSON.stringify(reply.body)}`);
      assert.equal(reply.body.error, 'validation_error');
      assert.ok(
        reply.body.details.fields.some((f: { field: string }) => f.field.startsWith(field)),
        `${field}: ${JSON.stringify(reply.body.details)}`,
      );
    }
    assert.deepEqual((await agency('GET', '/sdr/campaigns')).body.data, []);
    const agents = (await agency('GET', '/agents?kind=outbound_voice')).body.data;
    assert.equal(agents.length, 0, 'no agent left behind by a refused campaign');
  });

  test('a campaign takes the defaults of SPEC.md, leaves number, voice and business name to the SDR settings, and gets its own outbound agent', async () => {
    const settings = await agency('PUT', '/sdr/settings', {
      from_number: FROM,
      voice_id: '11labs-Adrian',
      voice_name: 'Adrian',
      business_name: 'Acme Dental',
      timezone: 'America/Chicago',
    });
    assert.equal(settings.status, 200);
    assert.equal(settings.body.settings.from_number, FROM);
    const refused = await agency('PUT', '/sdr/settings', { from_number: '+14155559999' });
    assert.equal(refused.status, 400);
    assert.equal(refused.body.details.fields[0].field, 'from_number');

    const created = await agency('POST', '/sdr/campaigns', {
      name: 'Spring check-ups',
      opening_message: 'Hi!',
    });
    assert.equal(created.status, 201);
    const campaign = created.body.campaign;
    assert.equal(campaign.status, 'draft');
    assert.equal(campaign.paused_reason, null);
    // As stored: the settings' values are read when dialing starts.
    assert.equal(campaign.from_number, null);
    assert.equal(campaign.effective_from_number, FROM);
    assert.equal(campaign.voice_id, null);
    assert.equal(campaign.voice_name, null);
    assert.equal(campaign.business_name, null);
    assert.equal(campaign.timezone, 'America/Chicago');
    assert.equal(campaign.max_concurrent_calls, 1);
    assert.equal(campaign.calling_window_start, '09:00');
    assert.equal(campaign.calling_window_end, '20:00');
    assert.deepEqual(campaign.calling_days, [1, 2, 3, 4, 5]);
    assert.equal(campaign.respect_timezone, true);
    assert.equal(campaign.max_attempts, 3);
    assert.equal(campaign.retry_interval_hours, 24);
    assert.equal(campaign.ring_timeout_seconds, 60);
    assert.equal(campaign.max_duration_seconds, 300);
    assert.equal(campaign.voicemail_enabled, true);
    assert.equal(campaign.total_prospects, 0);

    const agent = (await agency('GET', `/agents/${campaign.agent_id}`)).body.agent;
    assert.equal(agent.kind, 'outbound_voice');
    assert.equal(agent.client_id, tenant.houseClientId);
    assert.equal(agent.greeting, 'Hi!');

    const scheduled = await agency('POST', '/sdr/campaigns', {
      name: 'Later',
      scheduled_start_at: new Date(Date.now() + 86_400_000).toISOString(),
    });
    assert.equal(scheduled.body.campaign.status, 'scheduled');
  });

  test('status moves follow draft → scheduled → active ⇄ paused → completed; any other is 409 naming both', async () => {
    const id = (await agency('POST', '/sdr/campaigns', { name: 'Moves' })).body.campaign.id;
    const move = (status: string) => agency('PATCH', `/sdr/campaigns/${id}`, { status });
    const illegal = async (status: string, from: string) => {
      const reply = await move(status);
      assert.equal(reply.status, 409, `${from} → ${status}`);
      assert.equal(reply.body.error, 'invalid_transition');
      assert.deepEqual(reply.body.details, { from, to: status });
    };
    await illegal('active', 'draft');
    await illegal('paused', 'draft');
    await illegal('completed', 'draft');
    assert.equal((await move('scheduled')).body.campaign.status, 'scheduled');
    await illegal('draft', 'scheduled');
    await illegal('paused', 'scheduled');
    assert.equal((await move('active')).body.campaign.status, 'active');
    await illegal('scheduled', 'active');
    assert.equal((await move('paused')).body.campaign.status, 'paused');
    await illegal('completed', 'paused');
    assert.equal((await move('active')).body.campaign.status, 'active');
    assert.equal((await move('completed')).body.campaign.status, 'completed');
    await illegal('active', 'completed');
    await illegal('cancelled', 'completed');
    assert.equal((await agency('DELETE', `/sdr/campaigns/${id}`)).status, 204);
    await illegal('active', 'archived');
    const archived = (await agency('GET', `/sdr/campaigns/${id}`)).body.campaign;
    assert.equal(archived.status, 'archived');
    assert.ok(!(await agency('GET', '/sdr/campaigns')).body.data.some((c: { id: string }) => c.id === id));
    assert.ok(
      (await agency('GET', '/sdr/campaigns?status=archived')).body.data.some(
        (c: { id: string }) => c.id === id,
      ),
    );

    const other = (await agency('POST', '/sdr/campaigns', { name: 'Cancelled' })).body.campaign.id;
    assert.equal((await agency('PATCH', `/sdr/campaigns/${other}`, { status: 'cancelled' })).status, 200);
    const reply = await agency('PATCH', `/sdr/campaigns/${other}`, { status: 'scheduled' });
    assert.equal(reply.status, 409);
  });

  test('PATCH changes the settings SPEC.md lists, within the same limits', async () => {
    const id = (await agency('POST', '/sdr/campaigns', { name: 'Patched' })).body.campaign.id;
    const reply = await agency('PATCH', `/sdr/campaigns/${id}`, {
      name: 'Renamed',
      calling_window_start: '10:00',
      calling_window_end: '16:30',
      calling_days: [5, 1, 1],
      max_concurrent_calls: 4,
      max_attempts: 2,
      retry_interval_hours: 2,
    });
    assert.equal(reply.status, 200);
    const campaign = reply.body.campaign;
    assert.equal(campaign.name, 'Renamed');
    assert.equal(campaign.calling_window_start, '10:00');
    assert.deepEqual(campaign.calling_days, [1, 5]);
    assert.equal(campaign.max_concurrent_calls, 4);
    const bad = await agency('PATCH', `/sdr/campaigns/${id}`, { calling_window_end: '09:59' });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.details.fields[0].field, 'calling_window_end');
    const tooMany = await agency('PATCH', `/sdr/campaigns/${id}`, { max_concurrent_calls: 11 });
    assert.equal(tooMany.status, 400);
    assert.equal((await agency('GET', `/sdr/campaigns/${id}`)).body.campaign.max_concurrent_calls, 4);
  });

  test("prospects are contacts of any client of the org, with the zone's source; others are 400", async () => {
    const id = (await agency('POST', '/sdr/campaigns', { name: 'Prospects' })).body.campaign.id;
    const ny = await newContact(t, tenant, '+12125550100');
    const la = await newContact(t, tenant, '+14155550101');
    const tokyo = await newContact(t, tenant, '+12125550102');
    const foreign = await newContact(t, other, '+12125550103');

    const refused = await agency('POST', `/sdr/campaigns/${id}/prospects`, { contact_ids: [ny, foreign] });
    assert.equal(refused.status, 400);
    assert.equal(refused.body.details.fields[0].field, 'contact_ids');
    assert.match(refused.body.details.fields[0].message, new RegExp(foreign));
    const badZone = await agency('POST', `/sdr/campaigns/${id}/prospects`, {
      prospects: [{ contact_id: ny, timezone: 'Mars/Olympus' }],
    });
    assert.equal(badZone.status, 400);
    assert.equal(badZone.body.details.fields[0].field, 'prospects[0].timezone');
    assert.equal((await agency('GET', `/sdr/campaigns/${id}/prospects`)).body.data.length, 0);

    const added = await agency('POST', `/sdr/campaigns/${id}/prospects`, {
      prospects: [{ contact_id: ny }, { contact_id: la }, { contact_id: tokyo, timezone: 'Asia/Tokyo' }],
    });
    assert.equal(added.status, 201);
    assert.deepEqual(added.body, { added: 3, ignored: 0 });
    const again = await agency('POST', `/sdr/campaigns/${id}/prospects`, { contact_ids: [ny, ny] });
    assert.deepEqual(again.body, { added: 0, ignored: 2 });

    const prospects = (await agency('GET', `/sdr/campaigns/${id}/prospects`)).body.data;
    const byContact = new Map(prospects.map((p: { contact_id: string }) => [p.contact_id, p]));
    assert.deepEqual(
      [ny, la, tokyo].map((c) => {
        const p = byContact.get(c) as {
          timezone: string;
          timezone_source: string;
          phone: string;
          status: string;
        };
        return [p.timezone, p.timezone_source, p.status];
      }),
      [
        ['America/New_York', 'phone', 'pending'],
        ['America/Los_Angeles', 'phone', 'pending'],
        ['Asia/Tokyo', 'explicit', 'pending'],
      ],
    );
    assert.equal((byContact.get(ny) as { phone: string }).phone, '+12125550100');
    assert.equal((byContact.get(ny) as { client_id: string }).client_id, tenant.clientId);

    const campaign = (await agency('GET', `/sdr/campaigns/${id}`)).body.campaign;
    assert.equal(campaign.total_prospects, 3);
    assert.equal(campaign.stats.by_status.pending, 3);
    assert.equal(campaign.stats.in_flight, 0);

    const removed = prospects[0].id;
    assert.equal((await agency('DELETE', `/sdr/campaigns/${id}/prospects/${removed}`)).status, 204);
    assert.equal((await agency('DELETE', `/sdr/campaigns/${id}/prospects/${removed}`)).status, 404);
    assert.equal((await agency('GET', `/sdr/campaigns/${id}`)).body.campaign.total_prospects, 2);
  });

  test("a contact's own timezone (validated IANA name) is its prospects' zone", async () => {
    const client = caller(t, tenant.client);
    const bad = await client('POST', '/crm/contacts', { phone: '+12125550190', timezone: 'Mars/Olympus' });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.details.fields[0].field, 'timezone');
    const created = await client('POST', '/crm/contacts', {
      phone: '+12125550190',
      timezone: 'America/Denver',
    });
    assert.equal(created.status, 201);
    assert.equal(created.body.contact.timezone, 'America/Denver');
    const contactId = created.body.contact.id;
    const badPatch = await client('PATCH', `/crm/contacts/${contactId}`, { timezone: 'Nowhere' });
    assert.equal(badPatch.status, 400);
    const patched = await client('PATCH', `/crm/contacts/${contactId}`, { timezone: 'America/Phoenix' });
    assert.equal(patched.body.contact.timezone, 'America/Phoenix');
    assert.equal(
      (await client('GET', `/crm/contacts/${contactId}`)).body.contact.timezone,
      'America/Phoenix',
    );

    const id = (await agency('POST', '/sdr/campaigns', { name: 'Contact zones' })).body.campaign.id;
    await agency('POST', `/sdr/campaigns/${id}/prospects`, { contact_ids: [contactId] });
    const [prospect] = (await agency('GET', `/sdr/campaigns/${id}/prospects`)).body.data;
    assert.deepEqual([prospect.timezone, prospect.timezone_source], ['America/Phoenix', 'contact']);
  });

  test("another org's campaign is 404, never 403", async () => {
    await enableSdr(t, other, '+14155550899');
    const theirs = (
      await caller(t, other.agency)('POST', '/sdr/campaigns', { name: 'Theirs', from_number: '+14155550899' })
    ).body.campaign.id;
    for (const [method, url] of [
      ['GET', `/sdr/campaigns/${theirs}`],
      ['PATCH', `/sdr/campaigns/${theirs}`],
      ['DELETE', `/sdr/campaigns/${theirs}`],
      ['GET', `/sdr/campaigns/${theirs}/prospects`],
    ] as const) {
      const reply = await agency(method, url, method === 'PATCH' ? { name: 'Mine now' } : undefined);
      assert.equal(reply.status, 404, `${method} ${url}`);
      assert.equal(reply.body.error, 'not_found');
    }
    const org = await adminCall(t.app, 'GET', `/orgs/${other.orgId}`);
    assert.equal(org.org.features.sdr_outbound, true);
  });

  test('an agency key acting as a client works on the same org-level campaigns', async () => {
    const asClient = caller(t, tenant.agencyAsClient);
    const mine = (await agency('GET', '/sdr/campaigns')).body.data.map((c: { id: string }) => c.id);
    const seen = (await asClient('GET', '/sdr/campaigns')).body.data.map((c: { id: string }) => c.id);
    assert.deepEqual(seen, mine);
  });
});
