import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
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
import { API_KEY, retellSignature, retellStandIn } from '../voice/retell-stand-in.ts';
import { callEventsOf, dialRequest, outboundSetup, startCall } from './support.ts';

const CLIENT_NUMBER = '+14155550600';
const CALLER = '+14155550611';
const FROM = '+14155550601';
const START = 1714608475945;

// The call object as Retell documents it (https://docs.retellai.com/api-references/get-call).
function retellCall(overrides: Record<string, unknown>) {
  return {
    call_type: 'phone_call',
    agent_id: 'oBeDLoLOeuAbiuaMFXRtDOLriTJ5tSxD',
    agent_version: 1,
    call_status: 'ongoing',
    metadata: {},
    start_timestamp: START,
    ...overrides,
  };
}

function ended(call: Record<string, unknown>, overrides: Record<string, unknown> = {}) {
  return {
    ...call,
    call_status: 'ended',
    end_timestamp: START + 15_791,
    duration_ms: 15_791,
    disconnection_reason: 'user_hangup',
    transcript_object: [
      {
        role: 'agent',
        content: 'Thanks for calling Acme Dental.',
        words: [{ word: 'Thanks', start: 0.4, end: 0.7 }],
      },
      { role: 'user', content: 'Can I book a cleaning?', words: [{ word: 'Can', start: 3.2, end: 3.4 }] },
    ],
    recording_url: 'https://retellai.s3.us-west-2.amazonaws.com/call/recording.wav',
    call_cost: {
      product_costs: [],
      total_duration_seconds: 16,
      total_duration_unit_price: 0.1,
      combined_cost: 11.6,
    },
    ...overrides,
  };
}

describe('Retell webhooks at POST /hooks/retell', () => {
  let t: TestApp;
  let tenant: TestTenant;
  let standIn: Awaited<ReturnType<typeof retellStandIn>>;
  let agentId: string;

  before(async () => {
    standIn = await retellStandIn();
    t = await buildTestApp({
      VOICE_PROVIDER: 'retell',
      RETELL_API_KEY: API_KEY,
      RETELL_BASE_URL: standIn.url,
      RETELL_ANALYSIS_WAIT_MS: '300',
      CALL_PLACEMENT_LEASE_MS: '700',
      PUBLIC_BASE_URL: 'https://voice.agency.example',
    });
    tenant = await createTenant(t.app);
    ({ agentId } = await outboundSetup(t, tenant, FROM));
    await adminCall(t.app, 'POST', `/orgs/${tenant.orgId}/numbers`, {
      number: CLIENT_NUMBER,
      client_id: tenant.clientId,
      agent_id: agentId,
    });
    await t.startWorker();
  });
  after(async () => {
    await t.close();
    await standIn.close();
  });

  const deliver = (payload: unknown, signature?: string | null, raw?: string) => {
    const body = raw ?? JSON.stringify(payload);
    return t.app.inject({
      method: 'POST',
      url: '/hooks/retell',
      headers: {
        'content-type': 'application/json',
        ...(signature === null ? {} : { 'x-retell-signature': signature ?? retellSignature(body) }),
      },
      payload: body,
    });
  };
  const client = () => caller(t, tenant.client);
  const callOf = async (providerCallId: string) => {
    const row = await t.platform.db
      .selectFrom('calls')
      .select('id')
      .where('provider_call_id', '=', providerCallId)
      .executeTakeFirst();
    return row?.id;
  };

  test('unsigned and forged webhooks are 403, a signed body that is not JSON is 400, and none changes anything', async () => {
    const payload = {
      event: 'call_started',
      call: retellCall({
        call_id: 'call_forged',
        direction: 'inbound',
        from_number: CALLER,
        to_number: CLIENT_NUMBER,
      }),
    };
    const unsigned = await deliver(payload, null);
    assert.equal(unsigned.statusCode, 403);
    assert.equal(unsigned.json().error, 'forbidden');
    const forged = await deliver(payload, retellSignature(JSON.stringify(payload), 'key_someone_else'));
    assert.equal(forged.statusCode, 403);
    const tampered = await deliver(
      payload,
      retellSignature(JSON.stringify({ ...payload, event: 'call_ended' })),
    );
    assert.equal(tampered.statusCode, 403);
    const malformed = await deliver(null, undefined, 'event=call_started');
    assert.equal(malformed.statusCode, 400);
    assert.equal(malformed.json().error, 'invalid_request');
    assert.equal(await callOf('call_forged'), undefined);
  });

  test("an inbound call: the client's call, with the number's agent, events in order, the analysis completing it", async () => {
    const contact = (await client()('POST', '/crm/contacts', { phone: CALLER, full_name: 'Ada Caller' })).body
      .contact;
    const call = retellCall({
      call_id: 'call_inbound_1',
      direction: 'inbound',
      from_number: CALLER,
      to_number: CLIENT_NUMBER,
    });
    assert.equal((await deliver({ event: 'call_started', call })).statusCode, 204);
    const callId = await callOf('call_inbound_1');
    assert.ok(callId);
    const started = (await client()('GET', `/calls/${callId}`)).body.call;
    assert.equal(started.status, 'in_progress');
    assert.equal(started.agent_id, agentId);
    assert.equal(started.contact_id, contact.id);
    assert.equal(started.answered_at, new Date(START).toISOString());

    assert.equal((await deliver({ event: 'call_ended', call: ended(call) })).statusCode, 204);
    const analyzed = {
      event: 'call_analyzed',
      call: ended(call, { call_analysis: { call_summary: 'Wants a cleaning.', custom_analysis_data: {} } }),
    };
    assert.equal((await deliver(analyzed)).statusCode, 204);
    assert.equal(
      (await deliver(analyzed)).statusCode,
      204,
      'a repeated delivery is accepted and changes nothing',
    );
    await sleep(1000); // the completion fallback (RETELL_ANALYSIS_WAIT_MS) runs and loses to the analysis

    const done = (await client()('GET', `/calls/${callId}`)).body.call;
    assert.equal(done.status, 'completed');
    assert.equal(done.summary, 'Wants a cleaning.');
    assert.equal(done.duration_seconds, 16);
    assert.equal(done.cost_cents, 12);
    assert.equal(done.disposition, 'user_hangup');
    assert.deepEqual(done.transcript, [
      { speaker: 'agent', content: 'Thanks for calling Acme Dental.', start_time_seconds: 0.4 },
      { speaker: 'contact', content: 'Can I book a cleaning?', start_time_seconds: 3.2 },
    ]);
    const events = await callEventsOf(t, callId);
    assert.deepEqual(
      events.map((e) => e.type),
      ['call.received', 'call.answered', 'call.completed'],
    );
    assert.equal(events[2].data.summary, 'Wants a cleaning.');
  });

  test('an inbound call to a number no org holds is 404 number_not_found', async () => {
    const call = retellCall({
      call_id: 'call_stranger',
      direction: 'inbound',
      from_number: CALLER,
      to_number: '+14155550699',
    });
    const refused = await deliver({ event: 'call_started', call });
    assert.equal(refused.statusCode, 404);
    assert.equal(refused.json().error, 'number_not_found');
    assert.equal(await callOf('call_stranger'), undefined);
  });

  test('an outbound call is placed through Retell and its webhooks drop a voicemail and complete it', async () => {
    const to = '+14155550622';
    const { call } = await startCall(t, tenant, dialRequest({ agentId, from: FROM, to }));
    const placed = await eventually(async () =>
      standIn.requests.find((r) => r.body.metadata?.platform_call_id === call.id),
    );
    assert.equal(placed.body.from_number, FROM);
    assert.equal(placed.body.to_number, to);
    assert.equal(placed.body.agent_override.agent.ring_duration_ms, 45_000);
    assert.deepEqual(placed.body.agent_override.agent.voicemail_option, {
      action: { type: 'static_text', text: 'Sorry we missed you, call us back.' },
    });
    assert.equal(placed.body.agent_override.agent.webhook_url, 'https://voice.agency.example/hooks/retell');
    const ringing = await eventually(async () => {
      const row = (await client()('GET', `/calls/${call.id}`)).body.call;
      return row.status === 'ringing' && row;
    });
    assert.equal(ringing.answered_at, null);
    const providerCallId = (
      await t.platform.db
        .selectFrom('calls')
        .select('provider_call_id')
        .where('id', '=', call.id)
        .executeTakeFirst()
    )?.provider_call_id;
    assert.match(providerCallId ?? '', /^call_/);

    const retell = retellCall({
      call_id: providerCallId,
      direction: 'outbound',
      from_number: FROM,
      to_number: to,
      metadata: { platform_call_id: call.id, voicemail_drop: true },
    });
    assert.equal((await deliver({ event: 'call_started', call: retell })).statusCode, 204);
    const voicemail = ended(retell, {
      disconnection_reason: 'voicemail_reached',
      call_analysis: { call_summary: 'Left a voicemail.', in_voicemail: true },
    });
    assert.equal((await deliver({ event: 'call_ended', call: voicemail })).statusCode, 204);
    assert.equal((await deliver({ event: 'call_analyzed', call: voicemail })).statusCode, 204);

    const done = (await client()('GET', `/calls/${call.id}`)).body.call;
    assert.equal(done.status, 'voicemail');
    assert.equal(done.outcome, 'voicemail');
    assert.deepEqual(
      (await callEventsOf(t, call.id)).map((e) => e.type),
      ['call.answered', 'call.voicemail_left', 'call.completed'],
    );
  });

  test('a placement whose answer was lost is never dialed again: the call waits for its reports, then a watchdog', async () => {
    standIn.answer('dropped');
    const before = standIn.requests.length;
    try {
      const { call } = await startCall(t, tenant, dialRequest({ agentId, from: FROM, to: '+14155550633' }));
      const row = await eventually(async () => {
        const found = await t.platform.db
          .selectFrom('calls')
          .select(['placement_state', 'placement_attempts'])
          .where('id', '=', call.id)
          .executeTakeFirst();
        return found?.placement_state === 'unconfirmed' && found;
      }, 20_000);
      assert.equal(row.placement_attempts, 2, 'the second try learned the first may have dialed');
      assert.equal(standIn.requests.length, before + 1, 'dialed once');
      // The watchdog is the placement's "maybe done" lease: the loop's sweep ends the call after it.
      const { rows } = await sql<{ run_at: Date }>`SELECT placement_lease_until AS run_at FROM calls
        WHERE id = ${call.id} AND placement_state = 'unconfirmed' AND placement_lease_until > now()`.execute(
        t.platform.db,
      );
      assert.equal(rows.length, 1, 'a watchdog ends the call if no report ever comes');
      assert.equal((await client()('GET', `/calls/${call.id}`)).body.call.status, 'queued');
    } finally {
      standIn.answer('created');
    }
  });
});

describe('POST /hooks/retell under the simulator', () => {
  test('is 404', async () => {
    const t = await buildTestApp();
    try {
      const body = JSON.stringify({ event: 'call_started', call: {} });
      const response = await t.app.inject({
        method: 'POST',
        url: '/hooks/retell',
        headers: { 'content-type': 'application/json', 'x-retell-signature': retellSignature(body) },
        payload: body,
      });
      assert.equal(response.statusCode, 404);
      assert.equal(response.json().error, 'not_found');
    } finally {
      await t.close();
    }
  });
});
