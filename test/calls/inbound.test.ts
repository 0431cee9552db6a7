import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { caller } from '../crm/crm-client.ts';
import {
  ADMIN_TOKEN,
  adminCall,
  buildTestApp,
  createTenant,
  eventually,
  sleep,
  type TestApp,
  type TestTenant,
} from '../helpers.ts';
import { createWebhook, type Receiver, startReceiver } from '../webhooks/receiver.ts';

const CALL_MS = 900;
const CLIENT_NUMBER = '+14155550170';
const CALLER = '+14155550188';

describe('inbound calls through the voice simulator', () => {
  let t: TestApp;
  let tenant: TestTenant;
  let clientB: Record<string, string>;
  let rxA: Receiver;
  let rxB: Receiver;
  let agentId: string;
  let contactId: string;
  const client = () => caller(t, tenant.client);

  const simulate = (payload: object) =>
    t.app.inject({
      method: 'POST',
      url: '/admin/v1/simulator/calls',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      payload: { direction: 'inbound', ...payload },
    });
  const callEvents = (rx: Receiver) =>
    rx.requests.map((r) => r.body).filter((e) => e.type.startsWith('call.'));

  before(async () => {
    t = await buildTestApp({ VOICE_SIMULATOR_CALL_MS: String(CALL_MS), OUTBOUND_ALLOW_PRIVATE: 'true' });
    tenant = await createTenant(t.app);
    const { client: second } = await adminCall(t.app, 'POST', `/orgs/${tenant.orgId}/clients`, {
      name: 'Client B',
    });
    const keyB = await adminCall(t.app, 'POST', `/orgs/${tenant.orgId}/keys`, {
      name: 'client b',
      kind: 'client',
      client_id: second.id,
      rate_limit_per_minute: 100_000,
    });
    clientB = { authorization: `Bearer ${keyB.key}` };

    agentId = (await client()('POST', '/agents', { name: 'Front Desk', kind: 'inbound_voice' })).body.agent
      .id;
    await adminCall(t.app, 'POST', `/orgs/${tenant.orgId}/numbers`, {
      number: CLIENT_NUMBER,
      client_id: tenant.clientId,
      agent_id: agentId,
    });
    contactId = (await client()('POST', '/crm/contacts', { phone: CALLER, full_name: 'Ada Caller' })).body
      .contact.id;

    rxA = await startReceiver();
    rxB = await startReceiver();
    await createWebhook(t, tenant.client, { url: rxA.url, events: ['*'] });
    await createWebhook(t, clientB, { url: rxB.url, events: ['*'] });
    await t.startWorker();
  });
  after(async () => {
    await t.close();
    await rxA.close();
    await rxB.close();
  });

  test("an inbound call to a client's number is one call of that client, with its transcript, and call.received, call.answered, call.completed in order", async () => {
    const transcript = [
      { speaker: 'agent', content: 'Thanks for calling Acme Dental.', start_time_seconds: 0 },
      { speaker: 'contact', content: 'I would like to book a cleaning.', start_time_seconds: 3.5 },
      { speaker: 'agent', content: 'Thursday at 3 works. See you then!', start_time_seconds: 9.25 },
    ];
    const accepted = await simulate({
      from: CALLER,
      to: CLIENT_NUMBER,
      outcome: 'booked',
      duration_seconds: 42,
      transcript,
      summary: 'Booked a cleaning for Thursday.',
    });
    assert.equal(accepted.statusCode, 202, accepted.body);
    const callId = accepted.json().call_id;

    const events = await eventually(async () => {
      const seen = callEvents(rxA);
      return seen.length >= 3 && seen;
    }, 20_000);
    assert.deepEqual(
      events.map((e) => e.type),
      ['call.received', 'call.answered', 'call.completed'],
    );
    assert.ok(events.every((e) => (e.data.call_id ?? e.data.id) === callId));
    assert.equal(events[0].data.status, 'ringing', 'received before pickup');
    assert.equal(events[0].data.answered_at, null);
    assert.match(events[1].data.answered_at, /Z$/);
    assert.deepEqual(events[2].data, {
      call_id: callId,
      direction: 'inbound',
      duration_seconds: 42,
      recording_url: null,
      transcript,
      summary: 'Booked a cleaning for Thursday.',
      outcome: 'booked',
      cost_cents: 0,
      contact_id: contactId,
    });

    const { body, status } = await client()('GET', `/calls/${callId}`);
    assert.equal(status, 200);
    assert.deepEqual(body.call.transcript, transcript, 'turns stored in order');
    assert.equal(body.call.direction, 'inbound');
    assert.equal(body.call.from, CALLER);
    assert.equal(body.call.to, CLIENT_NUMBER);
    assert.equal(body.call.contact_phone, CALLER);
    assert.equal(body.call.contact_id, contactId);
    assert.equal(body.call.contact_name, 'Ada Caller');
    assert.equal(body.call.agent_id, agentId, "the number's agent");
    assert.equal(body.call.status, 'completed');
    assert.equal(body.call.outcome, 'booked');
    assert.equal(body.call.duration_seconds, 42);
    assert.equal(body.call.disposition, 'agent_hangup');
    assert.ok(body.call.started_at && body.call.answered_at && body.call.ended_at);
    const list = (await client()('GET', '/calls')).body;
    assert.equal(list.count, 1);
    assert.deepEqual(
      list.data.map((c: { id: string }) => c.id),
      [callId],
    );
    assert.equal(list.data[0].transcript, undefined, 'the list leaves transcripts out');

    const timeline = (await client()('GET', `/crm/activities?contact_id=${contactId}`)).body.data;
    const logged = timeline.filter((a: { activity_type: string }) => a.activity_type === 'call');
    assert.equal(logged.length, 1);
    assert.equal(logged[0].direction, 'inbound');
    assert.equal(logged[0].duration_seconds, 42);
    assert.equal(logged[0].outcome, 'booked');
    assert.equal(logged[0].body, 'Booked a cleaning for Thursday.');

    // Client B, another client of the same org, sees none of it.
    const b = caller(t, clientB);
    assert.equal((await b('GET', `/calls/${callId}`)).status, 404);
    assert.deepEqual((await b('GET', '/calls')).body.data, []);
    assert.equal((await b('GET', '/calls')).body.count, 0);
    assert.equal(
      (await caller(t, tenant.agency)('GET', `/calls/${callId}`)).status,
      404,
      'nor the house client',
    );
    await sleep(500);
    assert.deepEqual(callEvents(rxB), [], "client B's webhook gets no call event");
    assert.equal(callEvents(rxA).length, 3, 'each event exactly once');
  });

  test('an unscripted inbound call is answered, lasts 30 simulated seconds and gets a generated transcript', async () => {
    const accepted = await simulate({ from: '+14155550189', to: CLIENT_NUMBER, outcome: 'answered' });
    const callId = accepted.json().call_id;
    const call = await eventually(async () => {
      const { body } = await client()('GET', `/calls/${callId}`);
      return body.call.status === 'completed' && body.call;
    }, 20_000);
    assert.equal(call.duration_seconds, 30);
    assert.equal(call.contact_id, null, 'no contact has that number');
    assert.equal(call.transcript.length, 3);
    assert.equal(call.transcript[0].speaker, 'agent');
  });

  test('a caller who never gets through is one failed call with call.received then call.failed', async () => {
    const accepted = await simulate({ from: '+14155550190', to: CLIENT_NUMBER, outcome: 'busy' });
    const callId = accepted.json().call_id;
    const events = await eventually(async () => {
      const seen = callEvents(rxA).filter((e) => e.data.call_id === callId);
      return seen.some((e) => e.type === 'call.failed') && seen;
    }, 20_000);
    assert.deepEqual(
      events.map((e) => e.type),
      ['call.received', 'call.failed'],
    );
    assert.equal(events[1].data.reason, 'busy');
    assert.equal(events[1].data.call_id, callId);
    const { body } = await client()('GET', `/calls/${callId}`);
    assert.equal(body.call.status, 'busy');
    assert.equal(body.call.disposition, 'dial_busy');
    assert.deepEqual(body.call.transcript, []);
  });

  test('an inbound call to a number no org holds is 404 number_not_found and leaves nothing behind', async () => {
    const before = (await client()('GET', '/calls')).body.count;
    const refused = await simulate({ from: CALLER, to: '+14155550199', outcome: 'answered' });
    assert.equal(refused.statusCode, 404);
    assert.equal(refused.json().error, 'number_not_found');
    const invalid = await simulate({ from: CALLER, to: '415 555', outcome: 'answered' });
    assert.equal(invalid.statusCode, 400);
    await sleep(CALL_MS + 300);
    assert.equal((await client()('GET', '/calls')).body.count, before);
    const rows = await t.platform.db
      .selectFrom('calls')
      .select('id')
      .where('to_number', '=', '+14155550199')
      .execute();
    assert.equal(rows.length, 0);
  });

  test('the house client gets the calls of its own numbers, with no agent when the number has none', async () => {
    await adminCall(t.app, 'POST', `/orgs/${tenant.orgId}/numbers`, { number: '+14155550171' });
    const accepted = await simulate({ from: CALLER, to: '+14155550171', outcome: 'no_answer' });
    const callId = accepted.json().call_id;
    const house = caller(t, tenant.agency);
    const { body } = await house('GET', `/calls/${callId}`);
    assert.equal(body.call.agent_id, null);
    assert.equal(body.call.contact_id, null, "the contact is the client's, not the house client's");
    assert.equal((await client()('GET', `/calls/${callId}`)).status, 404);
  });
});
