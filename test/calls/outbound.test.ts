import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { v7 } from 'uuid';
import { campaignCallsInFlight } from '../../src/modules/calls/service.ts';
import type { ApiError } from '../../src/platform/http/errors.ts';
import { caller } from '../crm/crm-client.ts';
import {
  ADMIN_TOKEN,
  buildTestApp,
  createTenant,
  eventually,
  sleep,
  type TestApp,
  type TestTenant,
} from '../helpers.ts';
import { callEventsOf, dialRequest, outboundSetup, startCall } from './support.ts';

const CALL_MS = 900;
const LEASE_MS = 1500;
const FROM = '+14155550400';

describe('outbound calls: started once per cause, placed by a worker', () => {
  let t: TestApp;
  let tenant: TestTenant;
  let agentId: string;
  let n = 0;
  const to = () => `+1415555${5000 + n++}`;
  let running = 0;
  /** Workers keep running once started (the test app stops them): the first tests run with none. */
  const workers = async (count: number) => {
    for (; running < count; running++) await t.startWorker();
  };

  before(async () => {
    t = await buildTestApp({
      VOICE_SIMULATOR_CALL_MS: String(CALL_MS),
      CALL_PLACEMENT_LEASE_MS: String(LEASE_MS),
    });
    tenant = await createTenant(t.app);
    ({ agentId } = await outboundSetup(t, tenant, FROM));
  });
  after(() => t.close());

  const read = async (id: string) => (await caller(t, tenant.client)('GET', `/calls/${id}`)).body.call;
  const untilEnded = (id: string) =>
    eventually(async () => {
      const call = await read(id);
      return call.ended_at !== null && call;
    }, 30_000);
  const placements = (callId: string) =>
    t.platform.db.selectFrom('voice_placements').selectAll().where('call_id', '=', callId).execute();
  const script = (number: string, body: object) =>
    t.app.inject({
      method: 'PUT',
      url: `/admin/v1/simulator/voice/numbers/${number}`,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      payload: body,
    });

  test('the same cause starts one call, asked in turn or by two transactions at once', async () => {
    const request = dialRequest({ agentId, from: FROM, to: to(), causeKey: `sdr:${v7()}:1` });
    const first = await startCall(t, tenant, request);
    const again = await startCall(t, tenant, request);
    assert.equal(first.created, true);
    assert.equal(again.created, false);
    assert.equal(again.call.id, first.call.id);
    assert.equal(first.call.status, 'queued');

    const racing = dialRequest({ agentId, from: FROM, to: to(), causeKey: `sdr:${v7()}:1` });
    const both = await Promise.all([startCall(t, tenant, racing), startCall(t, tenant, racing)]);
    assert.equal(both[0].call.id, both[1].call.id);
    assert.deepEqual(both.map((r) => r.created).sort(), [false, true]);
    const rows = await t.platform.db
      .selectFrom('calls')
      .select('id')
      .where('cause_key', '=', racing.causeKey)
      .execute();
    assert.equal(rows.length, 1);
  });

  test('a worker killed between creating and placing: once its lease is over, the next worker places the call', async () => {
    const { call } = await startCall(t, tenant, dialRequest({ agentId, from: FROM, to: to() }));
    // The dead worker: it claimed the call and never placed it.
    const { LeasedTable } = await import('../../src/platform/jobs/leased.ts');
    const { callPlacements } = await import('../../src/modules/calls/placement.ts');
    const context = {
      db: t.platform.db,
      voice: t.platform.providers.voice,
      progressed: t.platform.hooks.callProgress,
      leaseMs: LEASE_MS,
      pollMs: 0,
      log: t.platform.log,
    };
    const claimed = (await new LeasedTable(callPlacements(context)).claim(t.platform.db, 100)).map(
      (lease) => lease.row,
    );
    assert.ok(claimed.some((row) => row.id === call.id));
    await workers(1);
    await sleep(LEASE_MS / 2);
    assert.equal((await read(call.id)).status, 'queued', 'not taken over while the lease holds');
    const done = await untilEnded(call.id);
    assert.equal(done.status, 'completed');
    const [row] = await t.platform.db
      .selectFrom('calls')
      .select(['placement_state', 'placement_attempts'])
      .where('id', '=', call.id)
      .execute();
    assert.deepEqual(row, { placement_state: 'placed', placement_attempts: 2 });
    assert.equal((await placements(call.id)).length, 1);
  });

  test('a worker places the call; with two workers it is dialed once and each event raised once', async () => {
    const number = to();
    const { call } = await startCall(
      t,
      tenant,
      dialRequest({ agentId, from: FROM, to: number, sdrCampaignId: v7(), prospectId: v7() }),
    );
    await workers(2);
    const done = await untilEnded(call.id);
    assert.equal(done.status, 'completed');
    assert.equal(done.direction, 'outbound');
    assert.equal(done.from, FROM);
    assert.equal(done.to, number);
    assert.equal(done.agent_id, agentId);
    assert.equal(done.transcript[0].content, 'Hi, this is Ava from Acme Dental.', "the agent's greeting");
    assert.equal((await placements(call.id)).length, 1);
    await sleep(500);
    assert.deepEqual(
      (await callEventsOf(t, call.id)).map((e) => e.type),
      ['call.answered', 'call.completed'],
    );
  });

  test('a voicemail drop raises call.voicemail_left before call.completed; a busy line raises call.failed', async () => {
    const voicemailNumber = to();
    const busyNumber = to();
    assert.equal((await script(voicemailNumber, { outcome: 'voicemail' })).statusCode, 201);
    assert.equal((await script(busyNumber, { outcome: 'busy' })).statusCode, 201);
    const { call: dropped } = await startCall(
      t,
      tenant,
      dialRequest({ agentId, from: FROM, to: voicemailNumber }),
    );
    const { call: busy } = await startCall(t, tenant, dialRequest({ agentId, from: FROM, to: busyNumber }));
    await workers(1);
    const voicemail = await untilEnded(dropped.id);
    assert.equal(voicemail.status, 'voicemail');
    assert.equal(voicemail.outcome, 'voicemail');
    assert.equal(voicemail.transcript[0].content, 'Sorry we missed you, call us back.');
    assert.deepEqual(
      (await callEventsOf(t, dropped.id)).map((e) => e.type),
      ['call.voicemail_left', 'call.completed'],
    );
    const failed = await untilEnded(busy.id);
    assert.equal(failed.status, 'busy');
    const events = await callEventsOf(t, busy.id);
    assert.deepEqual(
      events.map((e) => e.type),
      ['call.failed'],
    );
    assert.equal(events[0].data.reason, 'busy');
  });

  test('a number the contact asked not to be called is never dialed: the call fails as do_not_call', async () => {
    const number = to();
    const client = caller(t, tenant.client);
    const contact = (await client('POST', '/crm/contacts', { phone: number, full_name: 'Do Not Call' })).body
      .contact;
    const phones = (await client('GET', `/crm/contacts/${contact.id}/phones`)).body.data;
    await client('PATCH', `/crm/contacts/${contact.id}/phones/${phones[0].id}`, {
      consent_status: 'do_not_call',
    });
    const { call } = await startCall(t, tenant, dialRequest({ agentId, from: FROM, to: number }));
    assert.equal(call.contact_id, contact.id);
    assert.equal(call.contact_name, 'Do Not Call');
    await workers(1);
    const done = await untilEnded(call.id);
    assert.equal(done.status, 'failed');
    assert.equal(done.disposition, 'do_not_call');
    assert.equal((await placements(call.id)).length, 0, 'never dialed');
    assert.deepEqual(
      (await callEventsOf(t, call.id)).map((e) => e.type),
      ['call.failed'],
    );
  });

  test("a campaign's calls in flight are counted until they end", async () => {
    const campaign = v7();
    const scope = { orgId: tenant.orgId, clientId: tenant.clientId };
    for (let i = 0; i < 3; i++) {
      await startCall(t, tenant, dialRequest({ agentId, from: FROM, to: to(), sdrCampaignId: campaign }));
    }
    assert.equal(await campaignCallsInFlight(t.platform.db, scope, campaign), 3);
    await workers(1);
    await eventually(async () => (await campaignCallsInFlight(t.platform.db, scope, campaign)) === 0, 30_000);
    const listed = (await caller(t, tenant.client)('GET', '/calls?direction=outbound&limit=200')).body.data;
    assert.equal(listed.filter((c: { sdr_campaign_id: string }) => c.sdr_campaign_id === campaign).length, 3);
  });

  test('a call needs an active outbound agent of the client, one of the org numbers, and E.164 numbers', async () => {
    const client = caller(t, tenant.client);
    const inbound = (await client('POST', '/agents', { name: 'In', kind: 'inbound_voice' })).body.agent.id;
    const archived = (
      await client('POST', '/agents', { name: 'Gone', kind: 'outbound_voice', state: 'archived' })
    ).body.agent.id;
    const other = await createTenant(t.app);
    const foreign = (await caller(t, other.client)('POST', '/agents', { name: 'F', kind: 'outbound_voice' }))
      .body.agent.id;
    const refusal = async (overrides: object) => {
      const error = (await startCall(
        t,
        tenant,
        dialRequest({ agentId, from: FROM, to: to(), ...overrides }),
      ).then(
        () => assert.fail('expected a refusal'),
        (e: ApiError) => e,
      )) as ApiError;
      assert.equal(error.statusCode, 400);
      return (error.details as { fields: Array<{ field: string }> }).fields[0].field;
    };
    assert.equal(await refusal({ agentId: inbound }), 'agent_id');
    assert.equal(await refusal({ agentId: archived }), 'agent_id');
    assert.equal(await refusal({ agentId: foreign }), 'agent_id');
    assert.equal(await refusal({ from: '+14155550499' }), 'from');
    assert.equal(await refusal({ to: '4155550123' }), 'to');
    assert.equal(await refusal({ maxDurationSeconds: 0 }), 'max_duration_seconds');
  });
});
