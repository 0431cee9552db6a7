import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pino from 'pino';
import { dialerTick } from '../../src/modules/sdr/dialer.ts';
import { type Call, caller } from '../crm/crm-client.ts';
import { adminCall, buildTestApp, createTenant, type TestApp, type TestTenant } from '../helpers.ts';
import { newContact, zoneAtLocalHour } from './support.ts';

const ALL_DAYS = [1, 2, 3, 4, 5, 6, 7];
const NO_NUMBER =
  'This campaign has no number to dial from: set from_number on the campaign or in PUT /v1/sdr/settings.';

/**
 * Issue 21: a campaign with only a name is a draft; its number, voice and business name come from the
 * campaign, else from the SDR settings when dialing starts; with no number anywhere it never dials and
 * says why. And campaign pages are whole: archived campaigns are filtered before the LIMIT.
 */
describe('SDR campaigns: drafts, the number read when dialing starts, whole pages', () => {
  let t: TestApp;
  let tenant: TestTenant;
  let agency: Call;
  let n = 0;
  const number = () => `+1415555${String(2100 + n++)}`;
  const log = pino({ level: 'silent' });
  const tick = () => dialerTick({ db: t.platform.db, log });
  const callsOf = (campaignId: string) =>
    t.database.pool
      .query<{ from_number: string; voice_id: string | null; prompt: string }>(
        `SELECT from_number, placement->'agent'->>'voiceId' AS voice_id, placement->'agent'->>'systemPrompt' AS prompt
         FROM calls WHERE sdr_campaign_id = $1 ORDER BY created_at`,
        [campaignId],
      )
      .then((result) => result.rows);
  const campaign = async (id: string) => (await agency('GET', `/sdr/campaigns/${id}`)).body.campaign;
  /** One prospect at local noon, inside the campaign's window (10:00-14:00 every day). */
  const addProspect = async (id: string) => {
    const contact = await newContact(t, tenant, `+1212557${String(1000 + n++)}`);
    const added = await agency('POST', `/sdr/campaigns/${id}/prospects`, {
      prospects: [{ contact_id: contact, timezone: zoneAtLocalHour(12) }],
    });
    assert.equal(added.status, 201, JSON.stringify(added.body));
  };
  const windowed = { calling_window_start: '10:00', calling_window_end: '14:00', calling_days: ALL_DAYS };
  const registerNumber = async () => {
    const e164 = number();
    await adminCall(t.app, 'POST', `/orgs/${tenant.orgId}/numbers`, { number: e164 });
    return e164;
  };

  before(async () => {
    t = await buildTestApp({ VOICE_SIMULATOR_CALL_MS: '600' });
    tenant = await createTenant(t.app);
    agency = caller(t, tenant.agency);
    // SDR on and a number the org holds, but no SDR settings at all.
    await adminCall(t.app, 'PATCH', `/orgs/${tenant.orgId}`, { features: { sdr_outbound: true } });
    await registerNumber();
  });
  after(() => t.close());

  test('a name alone is a 201 draft with every documented default, whatever the settings hold', async () => {
    const expectDefaults = (campaign: Record<string, unknown>, status: string) => {
      assert.deepEqual(
        {
          status: campaign.status,
          paused_reason: campaign.paused_reason,
          from_number: campaign.from_number,
          voice_id: campaign.voice_id,
          voice_name: campaign.voice_name,
          business_name: campaign.business_name,
          max_concurrent_calls: campaign.max_concurrent_calls,
          calling_window_start: campaign.calling_window_start,
          calling_window_end: campaign.calling_window_end,
          calling_days: campaign.calling_days,
          respect_timezone: campaign.respect_timezone,
          max_attempts: campaign.max_attempts,
          retry_interval_hours: campaign.retry_interval_hours,
          ring_timeout_seconds: campaign.ring_timeout_seconds,
          max_duration_seconds: campaign.max_duration_seconds,
          voicemail_enabled: campaign.voicemail_enabled,
          total_prospects: campaign.total_prospects,
        },
        {
          status,
          paused_reason: null,
          from_number: null,
          voice_id: null,
          voice_name: null,
          business_name: null,
          max_concurrent_calls: 1,
          calling_window_start: '09:00',
          calling_window_end: '20:00',
          calling_days: [1, 2, 3, 4, 5],
          respect_timezone: true,
          max_attempts: 3,
          retry_interval_hours: 24,
          ring_timeout_seconds: 60,
          max_duration_seconds: 300,
          voicemail_enabled: true,
          total_prospects: 0,
        },
      );
    };
    const draft = await agency('POST', '/sdr/campaigns', { name: 'Q1' });
    assert.equal(draft.status, 201, JSON.stringify(draft.body));
    expectDefaults(draft.body.campaign, 'draft');
    assert.equal(draft.body.campaign.effective_from_number, null, 'no number anywhere yet');
    expectDefaults((await agency('GET', `/sdr/campaigns/${draft.body.campaign.id}`)).body.campaign, 'draft');

    const at = new Date(Date.now() + 86_400_000).toISOString();
    const scheduled = await agency('POST', '/sdr/campaigns', { name: 'Q2', scheduled_start_at: at });
    assert.equal(scheduled.status, 201, JSON.stringify(scheduled.body));
    expectDefaults(scheduled.body.campaign, 'scheduled');
    assert.equal(scheduled.body.campaign.scheduled_start_at, at);

    // Settings with only a voice: the same defaults, the voice still left to the settings.
    assert.equal((await agency('PUT', '/sdr/settings', { voice_id: 'settings-voice' })).status, 200);
    const withVoice = await agency('POST', '/sdr/campaigns', { name: 'Q3' });
    assert.equal(withVoice.status, 201);
    expectDefaults(withVoice.body.campaign, 'draft');
    assert.equal((await agency('PUT', '/sdr/settings', {})).status, 200);
  });

  test('PATCH status active with no number anywhere is 409 from_number_required; settings made later apply', async () => {
    const id = (await agency('POST', '/sdr/campaigns', { name: 'Later settings', ...windowed })).body.campaign
      .id;
    await addProspect(id);
    assert.equal((await agency('PATCH', `/sdr/campaigns/${id}`, { status: 'scheduled' })).status, 200);
    const refused = await agency('PATCH', `/sdr/campaigns/${id}`, { status: 'active' });
    assert.equal(refused.status, 409, JSON.stringify(refused.body));
    assert.deepEqual(refused.body, {
      error: 'from_number_required',
      message: NO_NUMBER,
      details: { campaign_id: id },
    });
    assert.equal((await campaign(id)).status, 'scheduled', 'the refused move changed nothing');

    const from = await registerNumber();
    const settings = await agency('PUT', '/sdr/settings', {
      from_number: from,
      voice_id: 'settings-voice',
      business_name: 'Acme Dental',
    });
    assert.equal(settings.status, 200);
    const current = await campaign(id);
    assert.deepEqual([current.from_number, current.effective_from_number], [null, from]);
    const moved = await agency('PATCH', `/sdr/campaigns/${id}`, { status: 'active' });
    assert.equal(moved.status, 200, JSON.stringify(moved.body));
    assert.equal(moved.body.campaign.effective_from_number, from);

    await tick();
    const [call] = await callsOf(id);
    assert.ok(call, 'the campaign dialed');
    assert.equal(call.from_number, from, "the settings' number, read when dialing started");
    assert.equal(call.voice_id, 'settings-voice');
    assert.match(call.prompt, /Acme Dental/);
    // The campaign's own values win over the settings'.
    const own = await registerNumber();
    const mine = await agency('POST', '/sdr/campaigns', {
      name: 'Own number',
      from_number: own,
      voice_id: 'campaign-voice',
      ...windowed,
    });
    assert.deepEqual([mine.body.campaign.from_number, mine.body.campaign.effective_from_number], [own, own]);
    await addProspect(mine.body.campaign.id);
    await agency('PATCH', `/sdr/campaigns/${mine.body.campaign.id}`, { status: 'scheduled' });
    await agency('PATCH', `/sdr/campaigns/${mine.body.campaign.id}`, { status: 'active' });
    await tick();
    const [ownCall] = await callsOf(mine.body.campaign.id);
    assert.deepEqual([ownCall.from_number, ownCall.voice_id], [own, 'campaign-voice']);

    // The settings' number removed, the campaign that dialed with it is paused on the next tick, saying why.
    assert.equal((await agency('PUT', '/sdr/settings', {})).status, 200);
    await tick();
    const stopped = await campaign(id);
    assert.deepEqual(
      [stopped.status, stopped.paused_reason, stopped.effective_from_number],
      ['paused', 'from_number_required', null],
    );
    assert.equal((await campaign(mine.body.campaign.id)).status, 'active', 'one with its own number goes on');
  });

  test('a scheduled campaign whose start comes with no number is paused with from_number_required, and resumes once one exists', async () => {
    const created = await agency('POST', '/sdr/campaigns', {
      name: 'Numberless start',
      scheduled_start_at: new Date(Date.now() + 3_600_000).toISOString(),
      ...windowed,
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const id = created.body.campaign.id;
    await addProspect(id);
    // A second back: the tick's clock has milliseconds, the database's microseconds.
    await t.database.pool.query(
      `UPDATE sdr_campaigns SET scheduled_start_at = now() - interval '1 second' WHERE id = $1`,
      [id],
    );
    await tick();
    const paused = await campaign(id);
    assert.deepEqual([paused.status, paused.paused_reason], ['paused', 'from_number_required']);
    const listed = (await agency('GET', '/sdr/campaigns?status=paused')).body.data.find(
      (c: { id: string }) => c.id === id,
    );
    assert.equal(listed.paused_reason, 'from_number_required');
    assert.deepEqual(await callsOf(id), [], 'it never dialed');
    await tick();
    assert.deepEqual(await callsOf(id), []);

    const still = await agency('PATCH', `/sdr/campaigns/${id}`, { status: 'active' });
    assert.equal(still.status, 409);
    assert.equal(still.body.error, 'from_number_required');

    const own = await registerNumber();
    const resumed = await agency('PATCH', `/sdr/campaigns/${id}`, { from_number: own, status: 'active' });
    assert.equal(resumed.status, 200, JSON.stringify(resumed.body));
    assert.deepEqual(
      [resumed.body.campaign.status, resumed.body.campaign.paused_reason, resumed.body.campaign.from_number],
      ['active', null, own],
    );
    await tick();
    assert.deepEqual(
      (await callsOf(id)).map((call) => call.from_number),
      [own],
    );

    // A person's pause has no reason.
    const byHand = await agency('PATCH', `/sdr/campaigns/${id}`, { status: 'paused' });
    assert.equal(byHand.body.campaign.paused_reason, null);
  });

  test('campaign pages are whole: archived campaigns are filtered before the limit, at every page size', async () => {
    const org = await createTenant(t.app);
    await adminCall(t.app, 'PATCH', `/orgs/${org.orgId}`, { features: { sdr_outbound: true } });
    const from = number();
    await adminCall(t.app, 'POST', `/orgs/${org.orgId}/numbers`, { number: from });
    const as = caller(t, org.agency);
    const ids: string[] = [];
    for (let i = 0; i < 7; i++)
      ids.push(
        (await as('POST', '/sdr/campaigns', { name: `Page ${i}`, from_number: from })).body.campaign.id,
      );
    // Newest first: 6 5 4 3 2 1 0; archived: 5 (the row after a first page of one), 3, 2 and 0 (the last).
    const archived = [ids[5], ids[3], ids[2], ids[0]];
    for (const id of archived) assert.equal((await as('DELETE', `/sdr/campaigns/${id}`)).status, 204);
    const visible = [ids[6], ids[4], ids[1]];

    const walk = async (query: string, limit: number) => {
      const pages: string[][] = [];
      let token: string | null = null;
      do {
        const url: string = `/sdr/campaigns?limit=${limit}${query}${token ? `&page_token=${token}` : ''}`;
        const page = await as('GET', url);
        assert.equal(page.status, 200, JSON.stringify(page.body));
        pages.push(page.body.data.map((c: { id: string }) => c.id));
        token = page.body.next_page_token;
      } while (token && pages.length < 20);
      return pages;
    };
    for (let limit = 1; limit <= 4; limit++) {
      const pages = await walk('', limit);
      assert.deepEqual(
        pages.flat(),
        visible,
        `limit ${limit}: every campaign that is not archived, in order`,
      );
      for (const page of pages.slice(0, -1)) assert.equal(page.length, limit, `limit ${limit}: a short page`);
      const asked = await walk('&status=archived', limit);
      assert.deepEqual(asked.flat(), archived, `limit ${limit}: status=archived lists the archived ones`);
    }
  });
});
