import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pino from 'pino';
import { dialerTick } from '../../src/modules/sdr/dialer.ts';
import { type Call, caller } from '../crm/crm-client.ts';
import {
  adminCall,
  buildTestApp,
  createTenant,
  eventually,
  sleep,
  type TestApp,
  type TestTenant,
} from '../helpers.ts';
import { enableSdr, newContact, zoneAtLocalHour } from './support.ts';

const FROM = '+14155550930';

/**
 * Issue 21: the org's `sdr_outbound` flag is a switch, not only a gate on creation. Turned off, it
 * refuses `PATCH {status: "active"}` and the dialer places no new call for the org (calls in flight end
 * normally); reads, pauses and archiving still work. Turned on again, active campaigns resume.
 */
describe('SDR: the sdr_outbound flag is a switch', () => {
  let t: TestApp;
  let tenant: TestTenant;
  let agency: Call;
  let n = 0;
  const log = pino({ level: 'silent' });
  const setFlag = (on: boolean) =>
    adminCall(t.app, 'PATCH', `/orgs/${tenant.orgId}`, { features: { sdr_outbound: on } });
  const callsOf = async (campaignId: string) =>
    (
      await t.database.pool.query<{ id: string; ended_at: Date | null }>(
        'SELECT id, ended_at FROM calls WHERE sdr_campaign_id = $1 ORDER BY created_at',
        [campaignId],
      )
    ).rows;
  /** A campaign of `prospects` prospects at local noon, one call at a time, moved to `status`. */
  async function campaignOf(prospects: number, status: 'scheduled' | 'active') {
    const created = await agency('POST', '/sdr/campaigns', {
      name: `Switch ${n++}`,
      from_number: FROM,
      max_attempts: 1,
      calling_window_start: '10:00',
      calling_window_end: '14:00',
      calling_days: [1, 2, 3, 4, 5, 6, 7],
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const id = created.body.campaign.id as string;
    const contacts: string[] = [];
    for (let i = 0; i < prospects; i++) contacts.push(await newContact(t, tenant, `+1212558${1000 + n++}`));
    const added = await agency('POST', `/sdr/campaigns/${id}/prospects`, {
      prospects: contacts.map((contact_id) => ({ contact_id, timezone: zoneAtLocalHour(12) })),
    });
    assert.equal(added.status, 201, JSON.stringify(added.body));
    for (const move of status === 'active' ? ['scheduled', 'active'] : ['scheduled'])
      assert.equal((await agency('PATCH', `/sdr/campaigns/${id}`, { status: move })).status, 200);
    return id;
  }

  before(async () => {
    t = await buildTestApp({ VOICE_SIMULATOR_CALL_MS: '300', SDR_TICK_MS: '100' });
    tenant = await createTenant(t.app);
    agency = caller(t, tenant.agency);
    await enableSdr(t, tenant, FROM);
  });
  after(() => t.close());

  let dialing: string;
  let scheduled: string;
  let pausable: string;

  test('off: the dialer places no new call for the org, and the call in flight ends normally', async () => {
    dialing = await campaignOf(3, 'active');
    scheduled = await campaignOf(1, 'scheduled');
    pausable = await campaignOf(1, 'active');
    // No worker yet: the first tick's calls stay in flight.
    await dialerTick({ db: t.platform.db, log });
    assert.equal((await callsOf(dialing)).length, 1);
    assert.equal((await callsOf(pausable)).length, 1);

    await setFlag(false);
    await t.startWorker();
    await eventually(async () => (await callsOf(dialing))[0].ended_at !== null, 20_000, 50);
    // Several ticks (every 100 ms) with the switch off.
    await sleep(1000);
    assert.equal((await callsOf(dialing)).length, 1, 'no new call while the switch is off');
    const [first] = (await agency('GET', `/sdr/campaigns/${dialing}/prospects`)).body.data.filter(
      (p: { attempts: number }) => p.attempts === 1,
    );
    assert.notEqual(first.status, 'queued', 'the call in flight ended normally');
  });

  test('off: PATCH {status: "active"} is 403 feature_disabled and changes nothing', async () => {
    const refused = await agency('PATCH', `/sdr/campaigns/${scheduled}`, { status: 'active' });
    assert.equal(refused.status, 403, JSON.stringify(refused.body));
    assert.equal(refused.body.error, 'feature_disabled');
    assert.equal((await agency('GET', `/sdr/campaigns/${scheduled}`)).body.campaign.status, 'scheduled');
  });

  test('off: reads, pauses and archiving still work', async () => {
    assert.equal((await agency('GET', '/sdr/campaigns')).status, 200);
    assert.equal((await agency('GET', `/sdr/campaigns/${dialing}`)).body.campaign.status, 'active');
    assert.equal((await agency('GET', '/sdr/settings')).status, 200);
    const paused = await agency('PATCH', `/sdr/campaigns/${pausable}`, { status: 'paused' });
    assert.equal(paused.status, 200, JSON.stringify(paused.body));
    const again = await agency('PATCH', `/sdr/campaigns/${pausable}`, { status: 'active' });
    assert.equal(again.status, 403);
    assert.equal(again.body.error, 'feature_disabled');
    assert.equal((await agency('DELETE', `/sdr/campaigns/${pausable}`)).status, 204);
    assert.equal((await agency('GET', `/sdr/campaigns/${pausable}`)).body.campaign.status, 'archived');
  });

  test('on again: active campaigns resume on the next tick, and PATCH active works', async () => {
    await setFlag(true);
    await eventually(
      async () => (await agency('GET', `/sdr/campaigns/${dialing}`)).body.campaign.status === 'completed',
      30_000,
      100,
    );
    assert.equal((await callsOf(dialing)).length, 3, 'dialing resumed where it stopped');
    assert.equal((await agency('PATCH', `/sdr/campaigns/${scheduled}`, { status: 'active' })).status, 200);
  });
});
