import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { TwilioSmsProvider } from '../../src/providers/sms/twilio.ts';
import { type Call, eventsOf } from '../crm/crm-client.ts';
import { buildTestApp, createTenant, type TestApp, type TestTenant } from '../helpers.ts';
import {
  ACCOUNT_SID,
  AUTH_TOKEN,
  startTwilioStandIn,
  type TwilioStandIn,
  twilioWebhook,
} from '../providers/twilio-stand-in.ts';
import { balanceOf, drainSends, senderContext, simulateInbound, smsSetup } from './support.ts';

const BASE = 'https://api.agency.example';
const OURS = '+14155550500';

describe('Twilio: signed webhooks in, status callbacks never backwards', () => {
  let t: TestApp;
  let tenant: TestTenant;
  let client: Call;
  let standIn: TwilioStandIn;
  let sid = 0;
  const messageSid = () => `SM${String(sid++).padStart(32, '0')}`;

  before(async () => {
    standIn = await startTwilioStandIn();
    t = await buildTestApp({
      SMS_PROVIDER: 'twilio',
      TWILIO_ACCOUNT_SID: ACCOUNT_SID,
      TWILIO_AUTH_TOKEN: AUTH_TOKEN,
      PUBLIC_BASE_URL: BASE,
    });
    tenant = await createTenant(t.app);
    client = await smsSetup(t, tenant, OURS, 20);
  });
  after(async () => {
    await t.close();
    await standIn.close();
  });

  const post = (
    path: string,
    params: Record<string, string>,
    token = AUTH_TOKEN,
    signedUrl = `${BASE}${path}`,
  ) => t.app.inject({ method: 'POST', url: path, ...twilioWebhook(signedUrl, params, token) });
  const stored = () => t.platform.db.selectFrom('sms_messages').select('id').execute();

  test('an unsigned or forged inbound webhook is 403 and changes nothing; a signed one is stored once', async () => {
    const params = { MessageSid: messageSid(), From: '+14155557000', To: OURS, Body: 'STOP', NumMedia: '0' };
    const before = (await stored()).length;
    const unsigned = await t.app.inject({
      method: 'POST',
      url: '/hooks/twilio/sms',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams(params).toString(),
    });
    assert.equal(unsigned.statusCode, 403);
    assert.equal((await post('/hooks/twilio/sms', params, 'f'.repeat(32))).statusCode, 403);
    // Signed for another URL.
    assert.equal(
      (await post('/hooks/twilio/sms', params, AUTH_TOKEN, 'https://evil.example/hooks/twilio/sms'))
        .statusCode,
      403,
    );
    // A tampered body under a valid signature.
    const tampered = twilioWebhook(`${BASE}/hooks/twilio/sms`, params);
    const forged = await t.app.inject({
      method: 'POST',
      url: '/hooks/twilio/sms',
      headers: tampered.headers,
      payload: new URLSearchParams({ ...params, Body: 'START' }).toString(),
    });
    assert.equal(forged.statusCode, 403);
    assert.equal((await stored()).length, before);
    assert.equal((await client('GET', '/sms/conversations')).body.data.length, 0);

    const ok = await post('/hooks/twilio/sms', params);
    assert.equal(ok.statusCode, 200, ok.body);
    assert.match(ok.headers['content-type'] as string, /xml/);
    const again = await post('/hooks/twilio/sms', params);
    assert.equal(again.statusCode, 200);
    assert.equal((await stored()).length, before + 1);
    const [conversation] = (await client('GET', '/sms/conversations')).body.data;
    assert.equal(conversation.provider, 'twilio');
    assert.equal(conversation.total_messages, 1);
  });

  test('the simulator hook is 404 while SMS_PROVIDER=twilio', async () => {
    const reply = await simulateInbound(t, { from: '+14155557001', to: OURS, body: 'hi' });
    assert.equal(reply.statusCode, 404);
  });

  test('a message is sent through Twilio once; status callbacks apply once and never move it backwards', async () => {
    const accepted = await client('POST', '/sms/messages', { to: '+14155557002', body: 'Hello from Twilio' });
    assert.equal(accepted.status, 202);
    const id = accepted.body.message.id;
    const provider = new TwilioSmsProvider(
      { accountSid: ACCOUNT_SID, authToken: AUTH_TOKEN, messagingServiceSid: null },
      { httpClient: standIn.httpClient() },
    );
    const context = senderContext(t, provider);
    assert.equal(context.statusCallbackUrl, `${BASE}/hooks/twilio/status`);
    await drainSends(context);
    await drainSends(context);
    const sends = standIn.messages.filter((m) => m.form.Body?.[0] === 'Hello from Twilio');
    assert.equal(sends.length, 1);
    const callback = sends[0].form.StatusCallback[0];
    assert.equal(new URL(callback).searchParams.get('message_id'), id);
    const read = async () =>
      (await client('GET', `/sms/conversations/${accepted.body.message.conversation_id}/messages`)).body
        .data[0];
    const sent = await read();
    assert.ok(['sending', 'sent'].includes(sent.status), sent.status);

    const path = new URL(callback).pathname + new URL(callback).search;
    const status = (s: string, extra: Record<string, string> = {}) => ({
      MessageSid: sends[0].sid,
      MessageStatus: s,
      AccountSid: ACCOUNT_SID,
      ...extra,
    });
    // Forged: refused, nothing changes.
    assert.equal((await post(path, status('delivered'), 'f'.repeat(32))).statusCode, 403);
    assert.equal((await read()).status, sent.status);

    assert.equal((await post(path, status('sent'))).statusCode, 204);
    assert.equal((await post(path, status('delivered'))).statusCode, 204);
    assert.equal((await post(path, status('delivered'))).statusCode, 204);
    assert.equal((await post(path, status('sent'))).statusCode, 204);
    assert.equal(
      (await post(path, status('undelivered', { ErrorCode: '30003' }))).statusCode,
      204,
      'a late failure after delivery is ignored',
    );
    const final = await read();
    assert.equal(final.status, 'delivered');
    assert.equal(final.error_code, null);
    const sentEvents = (await eventsOf(client, 'sms.sent')).filter((e) => e.data.message_id === id);
    assert.equal(sentEvents.length, 1);
    const failedEvents = (await eventsOf(client, 'sms.delivery_failed')).filter(
      (e) => e.data.message_id === id,
    );
    assert.equal(failedEvents.length, 0);
  });

  test('a carrier failure reported by status callback: undelivered, one sms.delivery_failed, FUEL kept', async () => {
    const accepted = await client('POST', '/sms/messages', { to: '+14155557003', body: 'Will bounce' });
    const id = accepted.body.message.id;
    const provider = new TwilioSmsProvider(
      { accountSid: ACCOUNT_SID, authToken: AUTH_TOKEN, messagingServiceSid: null },
      { httpClient: standIn.httpClient() },
    );
    await drainSends(senderContext(t, provider));
    const balance = await balanceOf(t, tenant);
    const path = `/hooks/twilio/status?message_id=${id}`;
    const params = { MessageSid: 'SMunknown', MessageStatus: 'undelivered', ErrorCode: '30006' };
    assert.equal((await post(path, params)).statusCode, 204);
    assert.equal((await post(path, params)).statusCode, 204);
    const [message] = (
      await client('GET', `/sms/conversations/${accepted.body.message.conversation_id}/messages`)
    ).body.data;
    assert.equal(message.status, 'undelivered');
    assert.ok(message.error_code);
    const events = (await eventsOf(client, 'sms.delivery_failed')).filter((e) => e.data.message_id === id);
    assert.equal(events.length, 1);
    assert.equal(await balanceOf(t, tenant), balance);
  });

  test('a send that may have reached Twilio is never repeated: its callback settles it, or it fails after the grace', async () => {
    const provider = new TwilioSmsProvider(
      { accountSid: ACCOUNT_SID, authToken: AUTH_TOKEN, messagingServiceSid: null },
      { httpClient: standIn.httpClient() },
    );
    const read = async (m: any) =>
      (await client('GET', `/sms/conversations/${m.conversation_id}/messages`)).body.data.find(
        (x: any) => x.id === m.id,
      );
    const requestsBefore = standIn.requestCount();
    const first = (await client('POST', '/sms/messages', { to: '+14155557004', body: 'Maybe sent' })).body
      .message;
    standIn.replyNext({
      status: 500,
      body: JSON.stringify({ code: 20500, message: 'Internal error', status: 500 }),
    });
    await drainSends(senderContext(t, provider));
    await drainSends(senderContext(t, provider));
    assert.equal(standIn.requestCount(), requestsBefore + 1, 'one request, not repeated');
    assert.equal((await read(first)).status, 'sending');
    const settle = await post(`/hooks/twilio/status?message_id=${first.id}`, {
      MessageSid: 'SMsettled0000000000000000000000001',
      MessageStatus: 'delivered',
    });
    assert.equal(settle.statusCode, 204);
    assert.equal((await read(first)).status, 'delivered');

    const second = (await client('POST', '/sms/messages', { to: '+14155557005', body: 'Never heard of' }))
      .body.message;
    standIn.replyNext({
      status: 503,
      body: JSON.stringify({ code: 20503, message: 'Unavailable', status: 503 }),
    });
    await drainSends(senderContext(t, provider));
    const balance = await balanceOf(t, tenant);
    // The grace runs out.
    await t.platform.db
      .updateTable('sms_messages')
      .set({ send_lease_until: new Date(Date.now() - 1000) })
      .where('id', '=', second.id)
      .execute();
    await drainSends(senderContext(t, provider));
    await drainSends(senderContext(t, provider));
    const failed = await read(second);
    assert.equal(failed.status, 'failed');
    assert.equal(failed.error_code, 'provider_error');
    assert.equal(await balanceOf(t, tenant), balance, 'FUEL kept: the carrier may have billed it');
    const events = (await eventsOf(client, 'sms.delivery_failed')).filter(
      (e) => e.data.message_id === second.id,
    );
    assert.equal(events.length, 1);
    assert.equal(standIn.requestCount(), requestsBefore + 2);
  });
});
