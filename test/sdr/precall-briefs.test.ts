import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pino from 'pino';
import { dialerTick } from '../../src/modules/sdr/dialer.ts';
import { caller } from '../crm/crm-client.ts';
import {
  adminCall,
  buildTestApp,
  createTenant,
  eventually,
  sleep,
  type TestApp,
  type TestTenant,
} from '../helpers.ts';
import { enableSdr, newContact, scriptNumber, zoneAtLocalHour } from './support.ts';

const FROM = '+14155550930';
const ALL_DAYS = [1, 2, 3, 4, 5, 6, 7];

/**
 * SDR campaigns with `precall_brief: true`: the dialer asks for a brief of each prospect before its
 * first dial (once per prospect), waits for it, and places the call with the brief as its context (the
 * voice simulator records it with the placement). A brief that fails does not stop the dial.
 */
describe('SDR pre-call briefs', () => {
  let t: TestApp;
  let tenant: TestTenant;
  let agency: ReturnType<typeof caller>;
  let client: ReturnType<typeof caller>;
  let n = 0;
  const phone = () => `+1212557${String(1000 + n++)}`;

  before(async () => {
    t = await buildTestApp({
      VOICE_SIMULATOR_CALL_MS: '300',
      SDR_TICK_MS: '150',
      SDR_HOUR_MS: '1000',
      AI_JOB_POLL: '50ms',
      SDR_PRECALL_BRIEF_WAIT: '10s',
    });
    tenant = await createTenant(t.app);
    agency = caller(t, tenant.agency);
    client = caller(t, tenant.client);
    await enableSdr(t, tenant, FROM);
    await adminCall(t.app, 'POST', `/orgs/${tenant.orgId}/fuel`, { amount: 20 });
    await t.startWorker();
  });
  after(async () => {
    await t?.close();
  });

  async function runCampaign(settings: Record<string, unknown>, phones: string[]) {
    const contacts: string[] = [];
    for (const number of phones) contacts.push(await newContact(t, tenant, number));
    const created = await agency('POST', '/sdr/campaigns', {
      name: `Briefed ${n}`,
      from_number: FROM,
      calling_window_start: '00:00',
      calling_window_end: '23:59',
      calling_days: ALL_DAYS,
      precall_brief: true,
      ...settings,
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.equal(created.body.campaign.precall_brief, true);
    const id = created.body.campaign.id as string;
    const added = await agency('POST', `/sdr/campaigns/${id}/prospects`, {
      prospects: contacts.map((contact_id) => ({ contact_id, timezone: zoneAtLocalHour(12) })),
    });
    assert.equal(added.status, 201, JSON.stringify(added.body));
    assert.equal((await agency('PATCH', `/sdr/campaigns/${id}`, { status: 'scheduled' })).status, 200);
    assert.equal((await agency('PATCH', `/sdr/campaigns/${id}`, { status: 'active' })).status, 200);
    await eventually(
      async () => (await agency('GET', `/sdr/campaigns/${id}`)).body.campaign.status === 'completed',
      60_000,
      100,
    );
    return { id, contacts };
  }

  const placements = async (campaignId: string) =>
    (
      await t.database.pool.query<{ contact_id: string; context: string | null }>(
        `SELECT s.contact_id, p.context FROM calls c
         JOIN voice_placements p ON p.call_id = c.id
         JOIN sdr_prospects s ON s.org_id = c.org_id AND s.id = c.prospect_id
         WHERE c.sdr_campaign_id = $1 ORDER BY c.created_at`,
        [campaignId],
      )
    ).rows;
  const briefsOf = async (contactId: string) =>
    (await client('GET', `/ai/jobs?subject_id=${contactId}&kind=precall_brief`)).body.data as any[];
  const fuel = async (): Promise<number> => (await agency('GET', '/fuel')).body.fuel.balance;

  test('each prospect’s first call carries its brief; a retry asks for none', async () => {
    const [answered, retried] = [phone(), phone()];
    await scriptNumber(t, retried, { outcome: 'no_answer' });
    const before = await fuel();
    const { id, contacts } = await runCampaign({ max_attempts: 2, retry_interval_hours: 1 }, [
      answered,
      retried,
    ]);

    const calls = await placements(id);
    assert.equal(calls.length, 3, 'one call, and two for the prospect who did not answer');
    for (const contact of contacts) {
      const briefs = await briefsOf(contact);
      assert.equal(briefs.length, 1, 'one brief per prospect, ever');
      const [brief] = briefs;
      assert.equal(brief.status, 'completed');
      assert.deepEqual(Object.keys(brief.metadata).sort(), ['prospect_id', 'sdr_campaign_id']);
      assert.equal(brief.metadata.sdr_campaign_id, id);
      const ofContact = calls.filter((call) => call.contact_id === contact);
      assert.ok(brief.result.talking_points.length > 0);
      assert.equal(
        ofContact[0].context,
        `${brief.result.brief}\n\nTalking points:\n${brief.result.talking_points.map((p: string) => `- ${p}`).join('\n')}`,
        'the first call got the brief and its talking points as its context',
      );
      assert.match(ofContact[0].context as string, /Prospect \+1212557/);
      for (const later of ofContact.slice(1)) assert.equal(later.context, null);
    }
    assert.equal(await fuel(), before - 2, 'one FUEL per brief');
  });

  test('a brief that fails does not stop the dial: the call goes without one, the brief is refunded', async () => {
    const before = await fuel();
    await adminCall(t.app, 'POST', '/simulator/llm/failures', { count: 1 });
    const { id, contacts } = await runCampaign({}, [phone()]);
    const [call] = await placements(id);
    assert.equal(call.context, null);
    const [brief] = await briefsOf(contacts[0]);
    assert.equal(brief.status, 'failed');
    assert.equal(brief.error_code, 'ai_unavailable');
    const { body } = await client('GET', `/events?type=ai.job.failed&limit=200`);
    const failed = body.data.find((event: any) => event.data.id === brief.id);
    assert.ok(failed, 'ai.job.failed was emitted');
    assert.equal(failed.metadata.sdr_campaign_id, id);
    assert.equal(await fuel(), before, 'refunded');
  });
});

/**
 * The dialer driven tick by tick, with no worker writing briefs: a brief not written within the wait
 * bound, or one the org cannot pay for, lets the call go without one.
 */
describe('SDR pre-call briefs the dialer goes without', () => {
  const WAIT_MS = 300;
  let t: TestApp;
  let n = 0;
  const log = pino({ level: 'silent' });
  const tick = () => dialerTick({ db: t.platform.db, log, briefs: { fuelCost: 1, waitMs: WAIT_MS } });

  before(async () => {
    t = await buildTestApp();
  });
  after(async () => {
    await t?.close();
  });

  async function activeCampaign(tenant: TestTenant, fuel: number) {
    const from = `+1415555095${n}`;
    await enableSdr(t, tenant, from);
    if (fuel) await adminCall(t.app, 'POST', `/orgs/${tenant.orgId}/fuel`, { amount: fuel });
    const agency = caller(t, tenant.agency);
    const contact = await newContact(t, tenant, `+1212558${String(1000 + n++)}`);
    const created = await agency('POST', '/sdr/campaigns', {
      name: `Unbriefed ${n}`,
      from_number: from,
      calling_window_start: '00:00',
      calling_window_end: '23:59',
      calling_days: ALL_DAYS,
      precall_brief: true,
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const id = created.body.campaign.id as string;
    const added = await agency('POST', `/sdr/campaigns/${id}/prospects`, {
      prospects: [{ contact_id: contact, timezone: zoneAtLocalHour(12) }],
    });
    assert.equal(added.status, 201, JSON.stringify(added.body));
    assert.equal((await agency('PATCH', `/sdr/campaigns/${id}`, { status: 'scheduled' })).status, 200);
    assert.equal((await agency('PATCH', `/sdr/campaigns/${id}`, { status: 'active' })).status, 200);
    return { id, contact, agency, client: caller(t, tenant.client) };
  }
  const calls = async (campaignId: string) =>
    (
      await t.database.pool.query<{ context: string | null }>(
        `SELECT placement->>'context' AS context FROM calls WHERE sdr_campaign_id = $1`,
        [campaignId],
      )
    ).rows;

  test('a brief not written within the wait bound: the call goes without it, the brief keeps its FUEL', async () => {
    const tenant = await createTenant(t.app);
    const { id, contact, agency, client } = await activeCampaign(tenant, 5);
    await tick();
    assert.deepEqual(await calls(id), [], 'the first tick asks for the brief and waits');
    const { body: jobs } = await client('GET', `/ai/jobs?subject_id=${contact}`);
    assert.equal(jobs.data.length, 1);
    assert.equal(jobs.data[0].status, 'pending');
    await tick();
    assert.deepEqual(await calls(id), [], 'still within the bound');
    await sleep(WAIT_MS);
    await tick();
    assert.deepEqual(await calls(id), [{ context: null }], 'placed without a brief');
    assert.equal((await agency('GET', '/fuel')).body.fuel.balance, 4);
  });

  test('no FUEL for the brief: the call goes at once without one, nothing debited, no job', async () => {
    const tenant = await createTenant(t.app);
    const { id, contact, agency, client } = await activeCampaign(tenant, 0);
    await tick();
    assert.deepEqual(await calls(id), [{ context: null }]);
    assert.deepEqual((await client('GET', `/ai/jobs?subject_id=${contact}`)).body.data, []);
    assert.equal((await agency('GET', '/fuel')).body.fuel.balance, 0);
    const { body: ledger } = await agency('GET', '/fuel/ledger?limit=200');
    assert.deepEqual(ledger.data, []);
  });
});
