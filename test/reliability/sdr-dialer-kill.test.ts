import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { caller } from '../crm/crm-client.ts';
import { buildTestApp, createTenant, type TestApp, type TestTenant, testEnv } from '../helpers.ts';
import { assertDialedOnceEach, enableSdr, newContact, scheduledCampaign, startNow } from '../sdr/support.ts';
import { type Fleet, inTransactionHolding, killMidWork, startWorkers } from './takeover.ts';

const FROM = '+14155550901';
const CAMPAIGNS = Number(process.env.CHAOS_CAMPAIGNS ?? 30);
/** The most a campaign may dial at once: each campaign's prospects are all dialed in one transaction. */
const PER_CAMPAIGN = 10;
const ENV = {
  SDR_TICK_MS: '100',
  VOICE_SIMULATOR_CALL_MS: '200',
  CALL_PLACEMENT_LEASE_MS: '2000',
};

/**
 * Two worker processes run the SDR dialer over many active campaigns; the one caught inside a
 * campaign's dialing transaction (it holds the campaign row and has written calls) is killed with
 * SIGKILL. Its transaction rolls back, the survivor dials that campaign once the dead worker's lease
 * on it is over (15 s), and every prospect is dialed once for its one attempt: one call per
 * `sdr:<prospect>:1` cause key, one provider placement per call.
 */
describe('kill -9 of a worker in the middle of an SDR dialer tick', () => {
  let t: TestApp;
  let tenant: TestTenant;
  let fleet: Fleet | null = null;

  before(async () => {
    t = await buildTestApp(ENV);
    tenant = await createTenant(t.app);
    await enableSdr(t, tenant, FROM);
  });
  after(async () => {
    await fleet?.stop();
    await t.close();
  });

  test('the survivor dials what the dead tick rolled back: no prospect is dialed twice or left out', {
    timeout: 240_000,
  }, async () => {
    const agency = caller(t, tenant.agency);
    const campaignIds: string[] = [];
    for (let c = 0; c < CAMPAIGNS; c++) {
      const contacts: string[] = [];
      for (let p = 0; p < PER_CAMPAIGN; p++)
        contacts.push(
          await newContact(t, tenant, `+1213557${String(c * PER_CAMPAIGN + p).padStart(4, '0')}`),
        );
      campaignIds.push(await scheduledCampaign(agency, FROM, `Kill ${c}`, contacts));
    }
    const pool = t.database.pool;

    fleet = await startWorkers(2, testEnv(t.database.url, ENV));
    await startNow(pool, campaignIds);
    const dialed = async () => {
      const { rows } = await pool.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM calls WHERE sdr_campaign_id = ANY($1::uuid[])',
        [campaignIds],
      );
      return rows[0].n;
    };
    // Mid-tick: campaigns were dialed and committed, and the victim is inside the next one's transaction.
    await killMidWork(
      fleet,
      async (worker) =>
        (await dialed()) > 0 &&
        (await inTransactionHolding(pool, worker, {
          sdr_campaigns: 'RowShareLock',
          calls: 'RowExclusiveLock',
        })),
    );
    const atKill = await dialed();

    const tookMs = await fleet.tookOver(async () => {
      const { rows } = await pool.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM sdr_campaigns WHERE id = ANY($1::uuid[]) AND status = 'completed'`,
        [campaignIds],
      );
      return rows[0].n === CAMPAIGNS;
    }, 180_000);

    await assertDialedOnceEach(pool, campaignIds, CAMPAIGNS * PER_CAMPAIGN);

    const { rows: events } = await pool.query<{ type: string; n: number }>(
      `SELECT type, count(*)::int AS n FROM events
       WHERE org_id = $1 AND type IN ('sdr.campaign.started', 'sdr.campaign.completed') GROUP BY type`,
      [tenant.orgId],
    );
    assert.deepEqual(
      Object.fromEntries(events.map((row) => [row.type, row.n])),
      { 'sdr.campaign.started': CAMPAIGNS, 'sdr.campaign.completed': CAMPAIGNS },
      'each campaign started and completed once',
    );
    console.log(`# SDR takeover: ${atKill} calls at the kill, every campaign completed ${tookMs} ms after`);
  });
});
