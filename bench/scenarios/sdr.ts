import pino from 'pino';
import { dialerTick, dialPicked, pickDueProspects } from '../../src/modules/sdr/dialer.ts';
import { findCampaignById } from '../../src/modules/sdr/store.ts';
import { openDatabase } from '../../src/platform/db/pool.ts';
import { inTransaction } from '../../src/platform/db/transaction.ts';
import type { BenchContext, Measurement, Section } from '../lib.ts';
import { latencyTarget } from '../lib.ts';

const PROSPECTS = 10_000;
const IN_FLIGHT = 10;
const TICKS = 200;
const FROM = '+14155550990';

class RolledBack extends Error {}

/**
 * Issue 16: SDR campaigns. A campaign of 10,000 pending prospects with the simulator. The dialer's work
 * for one campaign on one tick is timed in this process against the service's database: with 10 calls
 * in flight (at its concurrency: nothing to dial), and with none (it picks the next 10 due prospects,
 * checks their windows and consent, and starts their calls). Each timed tick rolls back, so every tick
 * sees the same 10,000 pending prospects; the service's own dialer sees the 10 calls in flight and
 * dials nothing meanwhile.
 */
export default async function sdr(ctx: BenchContext): Promise<Section> {
  const { orgId, headers } = await ctx.tenant();
  await ctx.admin('PATCH', `/orgs/${orgId}`, { features: { sdr_outbound: true } });
  await ctx.admin('POST', `/orgs/${orgId}/numbers`, { number: FROM });
  const api = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${ctx.apiUrl}/v1${path}`, {
      method,
      headers: { ...headers, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
    return response.status === 204 ? undefined : response.json();
  };

  const { campaign } = await api('POST', '/sdr/campaigns', {
    name: 'Bench campaign',
    from_number: FROM,
    max_concurrent_calls: IN_FLIGHT,
    calling_window_start: '00:00',
    calling_window_end: '23:59',
    calling_days: [1, 2, 3, 4, 5, 6, 7],
    respect_timezone: false,
  });
  const { rows: clients } = await ctx.pool.query('SELECT house_client_id FROM orgs WHERE id = $1', [orgId]);
  const clientId = clients[0].house_client_id;
  // Contacts of the house client with a primary phone each (the contacts module's mirror column).
  const { rows: contacts } = await ctx.pool.query(
    `INSERT INTO contacts (id, org_id, client_id, full_name, tags, primary_phone, created_at, updated_at)
     SELECT gen_random_uuid(), $1, $2, 'Prospect ' || g, '{}', '+1212' || lpad((5000000 + g)::text, 7, '0'), now(), now()
     FROM generate_series(1, ${PROSPECTS}) AS g RETURNING id`,
    [orgId, clientId],
  );
  const addStarted = performance.now();
  await api('POST', `/sdr/campaigns/${campaign.id}/prospects`, { contact_ids: contacts.map((c) => c.id) });
  const addMs = performance.now() - addStarted;
  await api('PATCH', `/sdr/campaigns/${campaign.id}`, { status: 'scheduled' });
  await api('PATCH', `/sdr/campaigns/${campaign.id}`, { status: 'active' });
  // Ten calls of the campaign in flight, already placed (the placement loop leaves them alone).
  await ctx.pool.query(
    `INSERT INTO calls (id, org_id, client_id, direction, from_number, to_number, agent_id, status, placement_state,
                        sdr_campaign_id, cause_key, created_at, updated_at)
     SELECT gen_random_uuid(), $1, $2, 'outbound', $3, '+13125550000', $4, 'in_progress', 'placed', $5,
            'bench:' || g, now(), now()
     FROM generate_series(1, ${IN_FLIGHT}) AS g`,
    [orgId, clientId, FROM, campaign.agent_id, campaign.id],
  );
  await ctx.pool.query('UPDATE sdr_campaigns SET started_at = now() WHERE id = $1', [campaign.id]);
  for (const table of ['sdr_prospects', 'calls', 'contacts']) await ctx.pool.query(`ANALYZE ${table}`);

  const database = openDatabase(ctx.databaseUrl, { max: 2 });
  const log = pino({ level: 'silent' });
  const time = async (
    name: string,
    mode: 'busy' | 'pick' | 'dial',
  ): Promise<Measurement & { dialed: number }> => {
    const row = (await findCampaignById(database.db, campaign.id))!;
    const durations: number[] = [];
    let dialed = 0;
    for (let i = 0; i < TICKS; i++) {
      const started = performance.now();
      if (mode === 'busy') {
        // Nothing to dial: the campaign at its concurrency is not due, so the tick's claim finds nothing.
        await dialerTick({ db: database.db, log });
        if (i === 0) {
          const calls = await database.db
            .selectFrom('calls')
            .select((eb) => eb.fn.countAll<string>().as('n'))
            .where('sdr_campaign_id', '=', campaign.id)
            .where('cause_key', 'like', 'sdr:%')
            .executeTakeFirstOrThrow();
          dialed = Number(calls.n);
        }
      } else {
        await inTransaction(database.db, async (trx) => {
          if (mode === 'dial') await trx.deleteFrom('calls').where('cause_key', 'like', 'bench:%').execute();
          const now = new Date();
          const picked = await pickDueProspects(trx, row, now, IN_FLIGHT);
          if (mode === 'pick') {
            dialed = picked.ready.length;
            throw new RolledBack();
          }
          const left = await dialPicked(trx, log, campaign.id, picked, now);
          if (i === 0) dialed = IN_FLIGHT - (left ?? IN_FLIGHT);
          throw new RolledBack();
        }).catch((error) => {
          if (!(error instanceof RolledBack)) throw error;
        });
      }
      durations.push(performance.now() - started);
    }
    durations.sort((a, b) => a - b);
    const at = (q: number) =>
      Math.round(durations[Math.min(durations.length - 1, Math.floor(q * durations.length))] * 100) / 100;
    return {
      name,
      requestsPerSecond: Math.round(1000 / (durations.reduce((a, b) => a + b, 0) / durations.length)),
      p50Ms: at(0.5),
      p99Ms: at(0.99),
      errors: 0,
      non2xx: 0,
      dialed,
    };
  };
  try {
    const busy = await time(`dialer tick, ${IN_FLIGHT} calls in flight (ticks/s)`, 'busy');
    const picking = await time(`picking the next ${IN_FLIGHT} due prospects (picks/s)`, 'pick');
    const dialing = await time(`dialer tick, picks and dials the next ${IN_FLIGHT} (ticks/s)`, 'dial');
    if (busy.dialed !== 0) throw new Error(`a tick at full concurrency dialed ${busy.dialed}`);
    if (picking.dialed !== IN_FLIGHT) throw new Error(`picked ${picking.dialed} of ${IN_FLIGHT}`);
    if (dialing.dialed !== IN_FLIGHT)
      throw new Error(`a tick with ${IN_FLIGHT} free slots dialed ${dialing.dialed}`);
    const { dialed: _a, ...busyRow } = busy;
    const { dialed: _b, ...pickingRow } = picking;
    const { dialed: _c, ...dialingRow } = dialing;
    return {
      title: `SDR campaigns (${PROSPECTS.toLocaleString('en')} pending prospects, concurrency ${IN_FLIGHT})`,
      measurements: [busyRow, pickingRow, dialingRow],
      targets: [
        latencyTarget(`dialer tick p50 with ${IN_FLIGHT} calls in flight`, busy.p50Ms, 50),
        latencyTarget(
          `dialer tick p50 picking the next ${IN_FLIGHT} of ${PROSPECTS} pending`,
          picking.p50Ms,
          50,
        ),
      ],
      notes: [
        `Timed in the bench process, ${TICKS} ticks each; the p50/p99 columns are milliseconds per tick. The busy`,
        'tick is one whole dialer tick: its claim finds the campaign at its concurrency not due; picking and',
        'dialing run in one transaction, rolled back. Picking reads the soonest due prospects from a partial',
        'index (`status = pending`, by `next_attempt_at`) without a lock and checks each window with `Intl`;',
        'dialing then locks the campaign and those still due, reads the contacts, asks `phoneReach` per prospect',
        'and starts each call (a queued call row, with its own checks, that the placement loop dials): about',
        'seven statements per call.',
        `Adding the ${PROSPECTS.toLocaleString('en')} prospects in one POST took ${Math.round(addMs)} ms.`,
      ],
    };
  } finally {
    await database.close();
  }
}
