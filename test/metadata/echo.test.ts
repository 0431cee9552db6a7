import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Call, caller, eventsOf } from '../crm/crm-client.ts';
import {
  adminCall,
  buildTestApp,
  createTenant,
  eventually,
  type TestApp,
  type TestTenant,
} from '../helpers.ts';
import {
  enableSdr,
  newContact as newProspectContact,
  scriptNumber,
  zoneAtLocalHour,
} from '../sdr/support.ts';
import { enroll, newContact, newSequence } from '../sequences/support.ts';
import { createWebhook, type ReceivedRequest, type Receiver, startReceiver } from '../webhooks/receiver.ts';

const SMS_FROM = '+14155550420';
const SDR_FROM = '+14155550421';

/**
 * SPEC.md section 6: an event's `metadata` echoes the metadata supplied when the action that caused it
 * was started. Each family is read as a receiver gets it (a real webhook endpoint subscribed to `*` by
 * the agency, which receives every client's events), and from `GET /v1/events`.
 */
describe('metadata: every event an action causes echoes the metadata it was started with', () => {
  let t: TestApp;
  let tenant: TestTenant;
  let client: Call;
  let agency: Call;
  let receiver: Receiver;

  before(async () => {
    t = await buildTestApp({
      SMS_SIMULATOR_DELAY_MS: '10',
      SEQUENCE_TICK_MS: '100',
      SEQUENCE_MINUTE_MS: '600',
      KB_INGEST_POLL_MS: '50',
      KB_INGEST_RETRY_SCHEDULE: '100ms,100ms',
      VOICE_SIMULATOR_CALL_MS: '300',
      SDR_TICK_MS: '150',
      SDR_HOUR_MS: '1000',
      OUTBOUND_ALLOW_PRIVATE: 'true',
    });
    tenant = await createTenant(t.app);
    client = caller(t, tenant.client);
    agency = caller(t, tenant.agency);
    await adminCall(t.app, 'POST', `/orgs/${tenant.orgId}/numbers`, {
      number: SMS_FROM,
      client_id: tenant.clientId,
    });
    await adminCall(t.app, 'POST', `/orgs/${tenant.orgId}/fuel`, { amount: 100 });
    // Serves the KB's URL documents: anything under /missing is a 404.
    receiver = await startReceiver((request) => ({
      status: request.path.startsWith('/missing') ? 404 : 200,
    }));
    await createWebhook(t, tenant.agency, { url: `${receiver.url}/hook`, events: ['*'] });
    await t.startWorker();
  });
  after(async () => {
    await t.close();
    await receiver.close();
  });

  /** The deliveries of events of `type` whose data matches, once at least `count` have arrived. */
  const delivered = (type: string, match: (data: any) => boolean, count = 1): Promise<ReceivedRequest[]> =>
    eventually(async () => {
      const got = receiver.requests.filter((r) => r.body?.type === type && match(r.body.data));
      return got.length >= count && got;
    }, 30_000);

  test('SMS: sms.sent and sms.delivery_failed echo the message metadata; a message without it gives {}', async () => {
    const metadata = { order: 'A-17', nested: { tags: ['vip'], n: 2 } };
    const sent = await client('POST', '/sms/messages', { to: '+14155557001', body: 'Your order', metadata });
    assert.equal(sent.status, 202, JSON.stringify(sent.body));
    assert.deepEqual(sent.body.message.metadata, metadata, 'returned as given');
    const plain = await client('POST', '/sms/messages', { to: '+14155557002', body: 'No metadata' });
    assert.deepEqual(plain.body.message.metadata, {});
    // An opted-out number: the message fails at send time.
    const optedOut = (await client('POST', '/crm/contacts', { phone: '+14155557003' })).body.contact;
    const [phoneRow] = (await client('GET', `/crm/contacts/${optedOut.id}/phones`)).body.data;
    await client('PATCH', `/crm/contacts/${optedOut.id}/phones/${phoneRow.id}`, {
      consent_status: 'opt_out',
    });
    const refused = await client('POST', '/sms/messages', {
      to: '+14155557003',
      body: 'Will not go',
      metadata: { order: 'A-18' },
    });

    const [sentEvent] = await delivered('sms.sent', (data) => data.message_id === sent.body.message.id);
    assert.deepEqual(sentEvent.body.metadata, metadata);
    const [plainEvent] = await delivered('sms.sent', (data) => data.message_id === plain.body.message.id);
    assert.deepEqual(plainEvent.body.metadata, {});
    const [failed] = await delivered(
      'sms.delivery_failed',
      (data) => data.message_id === refused.body.message.id,
    );
    assert.deepEqual(failed.body.metadata, { order: 'A-18' });
    const listed = (await eventsOf(client, 'sms.sent')).find(
      (e) => e.data.message_id === sent.body.message.id,
    );
    assert.deepEqual(listed.metadata, metadata, 'GET /v1/events shows the same');
    // The message's own read shows it too.
    const messages = (await client('GET', `/sms/conversations/${sent.body.message.conversation_id}/messages`))
      .body.data;
    assert.deepEqual(messages[0].metadata, metadata);
  });

  test("sequences: the sms.* events of a step's message echo the enrollment's metadata, as sequence.* do", async () => {
    const sequence = await newSequence(client, [{ kind: 'sms', wait_minutes: 0, body: 'Hi {{first_name}}' }]);
    const contact = await newContact(client, { first_name: 'Lin' });
    const enrollment = await enroll(client, sequence.id, contact.id, { play: 'spring', step_budget: 3 });
    const [completed] = await delivered(
      'sequence.enrollment.completed',
      (d) => d.enrollment.id === enrollment.id,
    );
    assert.deepEqual(completed.body.metadata, { play: 'spring', step_budget: 3 });
    const [created] = await delivered(
      'sequence.enrollment.created',
      (d) => d.enrollment.id === enrollment.id,
    );
    assert.deepEqual(created.body.metadata, { play: 'spring', step_budget: 3 });
    const [sms] = await delivered('sms.sent', (data) => data.to === contact.phone);
    assert.deepEqual(sms.body.metadata, { play: 'spring', step_budget: 3 });
  });

  test('knowledge bases: ai.kb_ingest.completed and ai.job.failed echo the document metadata', async () => {
    const kb = (await client('POST', '/kb', { name: 'Help' })).body.knowledge_base.id;
    const ok = await client('POST', `/kb/${kb}/documents`, {
      title: 'Returns',
      source_type: 'manual',
      content: 'Returns are free for 30 days.',
      metadata: { source: 'zendesk', article: 991 },
    });
    assert.equal(ok.status, 201, JSON.stringify(ok.body));
    assert.deepEqual(ok.body.document.metadata, { source: 'zendesk', article: 991 });
    const gone = await client('POST', `/kb/${kb}/documents`, {
      title: 'Gone',
      source_type: 'url',
      source_url: `${receiver.url}/missing/page`,
      metadata: { source: 'crawler' },
    });
    const [completed] = await delivered(
      'ai.kb_ingest.completed',
      (d) => d.document_id === ok.body.document.id,
    );
    assert.deepEqual(completed.body.metadata, { source: 'zendesk', article: 991 });
    const [failed] = await delivered('ai.job.failed', (d) => d.document_id === gone.body.document.id);
    assert.deepEqual(failed.body.metadata, { source: 'crawler' });
    const read = await client('GET', `/kb/${kb}/documents/${ok.body.document.id}`);
    assert.deepEqual(read.body.document.metadata, { source: 'zendesk', article: 991 });
  });

  test("SDR: sdr.*, call.* and sdr.outbound.completed echo the campaign's metadata merged with the prospect's", async () => {
    await enableSdr(t, tenant, SDR_FROM);
    const booked = '+12125560001';
    const plain = '+12125560002';
    await scriptNumber(t, booked, { outcome: 'booked', summary: 'Booked.' });
    const created = await agency('POST', '/sdr/campaigns', {
      name: 'Q1 outbound',
      from_number: SDR_FROM,
      calling_window_start: '00:00',
      calling_window_end: '23:59',
      calling_days: [1, 2, 3, 4, 5, 6, 7],
      metadata: { campaign: 'draft-name', tier: 'gold' },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const id = created.body.campaign.id;
    assert.deepEqual(created.body.campaign.metadata, { campaign: 'draft-name', tier: 'gold' });
    // PATCH replaces it.
    const patched = await agency('PATCH', `/sdr/campaigns/${id}`, {
      metadata: { campaign: 'q1', tier: 'gold' },
    });
    assert.deepEqual(patched.body.campaign.metadata, { campaign: 'q1', tier: 'gold' });
    const contacts = [
      await newProspectContact(t, tenant, booked),
      await newProspectContact(t, tenant, plain),
    ];
    const added = await agency('POST', `/sdr/campaigns/${id}/prospects`, {
      prospects: [
        { contact_id: contacts[0], timezone: zoneAtLocalHour(12), metadata: { tier: 'platinum', lead: 42 } },
        { contact_id: contacts[1], timezone: zoneAtLocalHour(12) },
      ],
    });
    assert.equal(added.status, 201, JSON.stringify(added.body));
    const listed = (await agency('GET', `/sdr/campaigns/${id}/prospects`)).body.data;
    assert.deepEqual(listed.find((p: any) => p.contact_id === contacts[0]).metadata, {
      tier: 'platinum',
      lead: 42,
    });
    assert.deepEqual(listed.find((p: any) => p.contact_id === contacts[1]).metadata, {});
    assert.equal((await agency('PATCH', `/sdr/campaigns/${id}`, { status: 'scheduled' })).status, 200);
    assert.equal((await agency('PATCH', `/sdr/campaigns/${id}`, { status: 'active' })).status, 200);

    const merged = { campaign: 'q1', tier: 'platinum', lead: 42 };
    const campaignOnly = { campaign: 'q1', tier: 'gold' };
    const [outbound] = await delivered('sdr.outbound.completed', (d) => d.contact_id === contacts[0]);
    assert.deepEqual(outbound.body.metadata, merged);
    const callId = outbound.body.data.call_id;
    for (const type of ['sdr.call.connected', 'sdr.call.booked']) {
      const [event] = await delivered(type, (d) => d.call_id === callId);
      assert.deepEqual(event.body.metadata, merged, type);
    }
    for (const type of ['call.answered', 'call.completed']) {
      const [event] = await delivered(type, (d) => d.call_id === callId);
      assert.deepEqual(event.body.metadata, merged, type);
    }
    const [other] = await delivered('sdr.outbound.completed', (d) => d.contact_id === contacts[1]);
    assert.deepEqual(other.body.metadata, campaignOnly, 'a prospect without metadata: the campaign’s');
    const [otherCompleted] = await delivered('call.completed', (d) => d.call_id === other.body.data.call_id);
    assert.deepEqual(otherCompleted.body.metadata, campaignOnly);
    for (const type of ['sdr.campaign.started', 'sdr.campaign.completed']) {
      const [event] = await delivered(type, (d) => d.campaign_id === id);
      assert.deepEqual(event.body.metadata, campaignOnly, type);
    }
  });

  test('events of actions that take no metadata carry {}', async () => {
    const contact = await client('POST', '/crm/contacts', { email: 'plain@example.test' });
    const [event] = await delivered('contact.created', (d) => d.id === contact.body.contact.id);
    assert.deepEqual(event.body.metadata, {});
  });
});
