import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sendMessage } from '../../src/modules/messaging/service.ts';
import { inTransaction } from '../../src/platform/db/transaction.ts';
import { type Call, eventsOf } from '../crm/crm-client.ts';
import {
  adminCall,
  buildTestApp,
  createTenant,
  eventually,
  sleep,
  type TestApp,
  type TestTenant,
} from '../helpers.ts';
import { balanceOf, countingProvider, drainReports, drainSends, senderContext, smsSetup } from './support.ts';

const FROM = '+14155550100';
const DELAY_MS = 50;
/** 3 GSM-7 segments: 153 * 2 + 1 characters. */
const THREE_SEGMENTS = 'x'.repeat(307);

describe('POST /v1/sms/messages: accepted, billed and sent once', () => {
  let t: TestApp;
  let tenant: TestTenant;
  let client: Call;
  let n = 0;
  const to = () => `+1415555${String(2000 + n++)}`;

  before(async () => {
    t = await buildTestApp({ SMS_SIMULATOR_DELAY_MS: String(DELAY_MS), SMS_SEND_LEASE_MS: '1000' });
    tenant = await createTenant(t.app);
    client = await smsSetup(t, tenant, FROM, 2);
  });
  after(() => t.close());

  test('too little FUEL is 402 fuel_exhausted with required and balance, and writes nothing', async () => {
    const recipient = to();
    const reply = await client('POST', '/sms/messages', { to: recipient, body: THREE_SEGMENTS });
    assert.equal(reply.status, 402);
    assert.equal(reply.body.error, 'fuel_exhausted');
    assert.deepEqual(reply.body.details, { required: 3, balance: 2 });
    assert.equal(await balanceOf(t, tenant), 2);
    const messages = await t.platform.db.selectFrom('sms_messages').select('id').execute();
    const conversations = await t.platform.db.selectFrom('sms_conversations').select('id').execute();
    assert.equal(messages.length, 0);
    assert.equal(conversations.length, 0);
    const ledger = (await client('GET', '/fuel/ledger')).body.data;
    assert.equal(
      ledger.filter((e: any) => e.reason === 'sms').length,
      0,
      'no ledger entry for a refused send',
    );
  });

  test('with enough FUEL: 202 queued, debited by the segment count once, replay and two send runs included', async () => {
    await adminCall(t.app, 'POST', `/orgs/${tenant.orgId}/fuel`, { amount: 10 });
    const recipient = to();
    const headers = { 'idempotency-key': 'send-once' };
    const first = await client('POST', '/sms/messages', { to: recipient, body: THREE_SEGMENTS }, headers);
    assert.equal(first.status, 202, JSON.stringify(first.body));
    const message = first.body.message;
    assert.equal(message.status, 'queued');
    assert.equal(message.segments, 3);
    assert.equal(message.fuel_cost, 3);
    assert.equal(message.encoding, 'GSM-7');
    assert.equal(message.direction, 'outbound');
    assert.equal(message.from, FROM);
    assert.equal(message.to, recipient);
    assert.equal(await balanceOf(t, tenant), 9);

    const replay = await client('POST', '/sms/messages', { to: recipient, body: THREE_SEGMENTS }, headers);
    assert.equal(replay.status, 202);
    assert.equal(replay.headers['idempotent-replayed'], 'true');
    assert.equal(replay.body.message.id, message.id);
    assert.equal(await balanceOf(t, tenant), 9);

    const provider = countingProvider(t);
    const context = senderContext(t, provider);
    await drainSends(context);
    await drainSends(context);
    assert.equal(provider.sends.filter((s) => s.messageId === message.id).length, 1);
    await sleep(DELAY_MS * 2);
    await drainReports(context);
    await drainReports(context);

    const [conversation] = (await client('GET', '/sms/conversations')).body.data;
    const messages = (await client('GET', `/sms/conversations/${conversation.id}/messages`)).body.data;
    assert.equal(messages[0].id, message.id);
    assert.equal(messages[0].status, 'delivered');
    assert.ok(messages[0].sent_at && messages[0].delivered_at);
    assert.equal(await balanceOf(t, tenant), 9);
    const debits = (await client('GET', '/fuel/ledger')).body.data.filter(
      (e: any) => e.reference_id === message.id,
    );
    assert.deepEqual(
      debits.map((e: any) => [e.reason, e.amount, e.reference_type]),
      [['sms', -3, 'sms_message']],
    );
    const sent = (await eventsOf(client, 'sms.sent')).filter((e) => e.data.message_id === message.id);
    assert.equal(sent.length, 1);
  });

  test('two send loops at once make one provider call per message', async () => {
    await adminCall(t.app, 'POST', `/orgs/${tenant.orgId}/fuel`, { amount: 40 });
    const ids: string[] = [];
    for (let i = 0; i < 30; i++) {
      const reply = await client('POST', '/sms/messages', { to: to(), body: `Hello ${i}` });
      assert.equal(reply.status, 202);
      ids.push(reply.body.message.id);
    }
    const provider = countingProvider(t);
    const a = senderContext(t, provider, { batch: 4 });
    const b = senderContext(t, provider, { batch: 4 });
    await Promise.all([drainSends(a), drainSends(b), drainSends(a)]);
    for (const id of ids) assert.equal(provider.sends.filter((s) => s.messageId === id).length, 1, id);
    const rows = await t.platform.db
      .selectFrom('sms_messages')
      .select(['status', 'send_state'])
      .where('id', 'in', ids)
      .execute();
    assert.ok(rows.every((r) => r.status === 'sent' && r.send_state === 'done'));
  });

  test('a claim whose lease ran out is sent by the next worker, still once', async () => {
    await adminCall(t.app, 'POST', `/orgs/${tenant.orgId}/fuel`, { amount: 1 });
    const reply = await client('POST', '/sms/messages', { to: to(), body: 'lease' });
    const id = reply.body.message.id;
    // A worker claims it and dies before sending.
    const { LeasedTable } = await import('../../src/platform/jobs/leased.ts');
    const { smsSends } = await import('../../src/modules/messaging/sender.ts');
    const sends = new LeasedTable(smsSends(senderContext(t, countingProvider(t), { leaseMs: 300 })));
    const claimed = (await sends.claim(t.platform.db, 50)).map((lease) => lease.row);
    assert.ok(claimed.some((row) => row.id === id));
    const provider = countingProvider(t);
    await drainSends(senderContext(t, provider));
    assert.equal(provider.sends.length, 0, 'not while the lease holds');
    await sleep(350);
    await drainSends(senderContext(t, provider));
    assert.equal(provider.sends.filter((s) => s.messageId === id).length, 1);
  });

  test('sendMessage: the same cause returns the first message and debits nothing more', async () => {
    await adminCall(t.app, 'POST', `/orgs/${tenant.orgId}/fuel`, { amount: 5 });
    const before = await balanceOf(t, tenant);
    const scope = { orgId: tenant.orgId, clientId: tenant.clientId };
    const sms = { to: to(), body: 'Step 1', causeKey: 'sequence_step:abc:1' };
    const [one, two] = await Promise.all([
      inTransaction(t.platform.db, (trx) => sendMessage(trx, scope, sms, 'simulator')),
      inTransaction(t.platform.db, (trx) => sendMessage(trx, scope, sms, 'simulator')),
    ]);
    assert.equal(one.message.id, two.message.id);
    assert.deepEqual([one.created, two.created].sort(), [false, true]);
    const again = await inTransaction(t.platform.db, (trx) => sendMessage(trx, scope, sms, 'simulator'));
    assert.equal(again.created, false);
    assert.equal(await balanceOf(t, tenant), before - 1);
    const [conversation] = (
      await client('GET', `/sms/conversations?phone_number=${encodeURIComponent(sms.to)}`)
    ).body.data;
    assert.equal(conversation.total_messages, 1);
  });

  test('bad input is 400 and changes nothing', async () => {
    const before = await balanceOf(t, tenant);
    const cases = [
      { to: '12', body: 'hi' },
      { to: to(), body: '' },
      { to: to(), body: 'x'.repeat(1601) },
      { to: to(), body: 'hi', media_urls: ['http://example.com/a.png'] },
      { to: to(), body: 'hi', media_urls: Array.from({ length: 11 }, (_, i) => `https://e.com/${i}.png`) },
      { to: to(), body: 'hi', contact_id: '0190f5d0-0000-7000-8000-000000000000' },
      { to: to(), body: 'hi', from: '+14155550199' },
    ];
    for (const payload of cases) {
      const reply = await client('POST', '/sms/messages', payload);
      assert.equal(reply.status, 400, JSON.stringify(payload));
      assert.equal(reply.body.error, 'validation_error');
    }
    assert.equal(await balanceOf(t, tenant), before);
  });

  test('a UCS-2 body is counted in 70/67 segments', async () => {
    await adminCall(t.app, 'POST', `/orgs/${tenant.orgId}/fuel`, { amount: 5 });
    const reply = await client('POST', '/sms/messages', { to: to(), body: `${'a'.repeat(70)}é✓` });
    assert.equal(reply.status, 202);
    assert.equal(reply.body.message.encoding, 'UCS-2');
    assert.equal(reply.body.message.segments, 2);
  });

  test('the worker sends and the simulator delivers end to end; magic numbers fail', async () => {
    await adminCall(t.app, 'POST', `/orgs/${tenant.orgId}/fuel`, { amount: 10 });
    await t.startWorker();
    const ok = (await client('POST', '/sms/messages', { to: to(), body: 'end to end' })).body.message;
    const invalid = (await client('POST', '/sms/messages', { to: '+15005550001', body: 'nope' })).body
      .message;
    const rejected = (await client('POST', '/sms/messages', { to: '+15005550009', body: 'nope' })).body
      .message;
    const read = async (id: string, conversation: string) =>
      (await client('GET', `/sms/conversations/${conversation}/messages`)).body.data.find(
        (m: any) => m.id === id,
      );
    const delivered = await eventually(async () => {
      const m = await read(ok.id, ok.conversation_id);
      return m.status === 'delivered' && m;
    });
    assert.equal(delivered.error_code, null);
    const failed = await eventually(async () => {
      const m = await read(invalid.id, invalid.conversation_id);
      return m.status === 'failed' && m;
    });
    assert.equal(failed.error_code, 'invalid_number');
    const undelivered = await eventually(async () => {
      const m = await read(rejected.id, rejected.conversation_id);
      return m.status === 'undelivered' && m;
    });
    assert.equal(undelivered.error_code, 'carrier_rejected');
    const failures = await eventually(async () => {
      const events = (await eventsOf(client, 'sms.delivery_failed')).filter((e) =>
        [invalid.id, rejected.id].includes(e.data.message_id),
      );
      return events.length === 2 && events;
    });
    assert.deepEqual(failures.map((e) => e.data.error_code).sort(), ['carrier_rejected', 'invalid_number']);
    // The refused send is refunded (never handed to a carrier); the carrier-rejected one is not.
    const ledger = (await client('GET', '/fuel/ledger')).body.data;
    assert.ok(ledger.some((e: any) => e.reason === 'refund' && e.reference_id === invalid.id));
    assert.ok(!ledger.some((e: any) => e.reason === 'refund' && e.reference_id === rejected.id));
  });
});
