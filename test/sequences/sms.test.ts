import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Call, caller, eventsOf } from '../crm/crm-client.ts';
import { adminCall, buildTestApp, createTenant, sleep, type TestApp, type TestTenant } from '../helpers.ts';
import { simulateInbound, smsSetup } from '../messaging/support.ts';
import { createWebhook, type Receiver, startReceiver } from '../webhooks/receiver.ts';
import {
  enroll,
  eventually,
  newContact,
  newSequence,
  readEnrollment,
  simulatedEmails,
  stepSends,
} from './support.ts';

const FROM = '+14155550177';
const MINUTE_MS = 700;

describe('SMS steps and replies: through the SMS module', () => {
  let t: TestApp;
  let tenant: TestTenant;
  let call: Call;
  let receiver: Receiver;

  before(async () => {
    t = await buildTestApp({
      SEQUENCE_TICK_MS: '100',
      SEQUENCE_MINUTE_MS: String(MINUTE_MS),
      SEQUENCE_LEASE_MS: '2000',
      SMS_SIMULATOR_DELAY_MS: '20',
      SMS_SEND_LEASE_MS: '1000',
      OUTBOUND_ALLOW_PRIVATE: 'true',
    });
    tenant = await createTenant(t.app);
    call = await smsSetup(t, tenant, FROM, 1000);
    receiver = await startReceiver();
    await createWebhook(t, tenant.client, {
      url: `${receiver.url}/hook`,
      events: [
        'sequence.enrollment.paused',
        'sequence.contact_unenrolled',
        'sequence.enrollment.completed',
        'sequence.completed',
      ],
    });
    // Two workers on one database throughout.
    await t.startWorker();
    await t.startWorker();
  });
  after(async () => {
    await t.close();
    await receiver.close();
  });

  const received = (type: string, enrollmentId: string) =>
    receiver.requests.filter((r) => r.body?.type === type && r.body.data.enrollment.id === enrollmentId);
  const messagesTo = (phone: string) =>
    t.platform.db
      .selectFrom('sms_messages')
      .selectAll()
      .where('to_number', '=', phone)
      .where('direction', '=', 'outbound')
      .orderBy('created_at')
      .execute();

  test('SMS at 0, email at 1 minute, SMS at 2 minutes: three messages in order, merge fields filled, completed with both events', async () => {
    const sequence = await newSequence(call, [
      { kind: 'sms', wait_minutes: 0, body: 'Hi {{first_name}}, {{company_name|we}} here.' },
      { kind: 'email', wait_minutes: 1, subject: 'For {{full_name}}', body: 'Details for {{title|you}}.' },
      { kind: 'sms', wait_minutes: 2, body: 'Last note, {{first_name|there}} ({{email}})' },
    ]);
    const contact = await newContact(call, {
      first_name: 'Grace',
      last_name: 'Hopper',
      company_name: 'Navy',
    });
    const enrollment = await enroll(call, sequence.id, contact.id, { play: 'ladder' });
    await eventually(
      async () => (await readEnrollment(call, sequence.id, enrollment.id)).status === 'completed',
      20_000,
    );
    const sms = await messagesTo(contact.phone);
    assert.deepEqual(
      sms.map((m) => m.body),
      ['Hi Grace, Navy here.', `Last note, Grace (${contact.email})`],
    );
    assert.deepEqual(
      sms.map((m) => [m.from_number, m.cause_key]),
      [
        [FROM, `sequence_step:${enrollment.id}:0`],
        [FROM, `sequence_step:${enrollment.id}:2`],
      ],
    );
    const emails = await simulatedEmails(t, contact.email);
    assert.deepEqual(
      emails.map((e) => [e.subject, e.text.split('\n\n--\n')[0]]),
      [['For Grace Hopper', 'Details for you.']],
    );
    const sends = await stepSends(t, enrollment.id);
    assert.deepEqual(
      sends.map((s) => [s.step_index, s.kind]),
      [
        [0, 'sms'],
        [1, 'email'],
        [2, 'sms'],
      ],
    );
    assert.ok(sends[1].sent_at.getTime() - sends[0].sent_at.getTime() >= MINUTE_MS);
    assert.ok(sends[2].sent_at.getTime() - sends[1].sent_at.getTime() >= 2 * MINUTE_MS);
    // The carrier got both SMS (the SMS module's send loop), each billed once.
    await eventually(async () =>
      (await messagesTo(contact.phone)).every((m) => m.provider_message_id !== null),
    );
    for (const type of ['sequence.enrollment.completed', 'sequence.completed']) {
      const [event] = await eventually(async () => {
        const got = received(type, enrollment.id);
        return got.length > 0 && got;
      });
      assert.deepEqual(event.body.metadata, { play: 'ladder' });
      assert.equal(event.body.data.enrollment.status, 'completed');
    }
    const timeline = (await call('GET', `/crm/activities?contact_id=${contact.id}`)).body.data;
    assert.deepEqual(timeline.map((a: any) => a.activity_type).sort(), ['email', 'sms', 'sms']);
  });

  test('a reply after step 1 stops the ladder: no step 2, paused reply_received, both events delivered', async () => {
    const sequence = await newSequence(call, [
      { kind: 'sms', wait_minutes: 0, body: 'Hi {{first_name}}' },
      { kind: 'sms', wait_minutes: 1, body: 'Following up' },
      { kind: 'sms', wait_minutes: 1, body: 'Last try' },
    ]);
    const contact = await newContact(call, { first_name: 'Ada' });
    const enrollment = await enroll(call, sequence.id, contact.id, { play: 'reply' });
    await eventually(async () => (await readEnrollment(call, sequence.id, enrollment.id)).current_step === 1);
    const inbound = await simulateInbound(t, { from: contact.phone, to: FROM, body: 'Who is this?' });
    assert.equal(inbound.statusCode, 202);
    const paused = await readEnrollment(call, sequence.id, enrollment.id);
    assert.equal(paused.status, 'paused');
    assert.equal(paused.paused_reason, 'reply_received');
    await sleep(MINUTE_MS * 2);
    assert.deepEqual(
      (await messagesTo(contact.phone)).map((m) => m.body),
      ['Hi Ada'],
      'no step after the reply',
    );
    assert.equal((await readEnrollment(call, sequence.id, enrollment.id)).current_step, 1);
    for (const type of ['sequence.enrollment.paused', 'sequence.contact_unenrolled']) {
      const [event] = await eventually(async () => {
        const got = received(type, enrollment.id);
        return got.length > 0 && got;
      });
      assert.equal(event.body.data.enrollment.paused_reason, 'reply_received');
      assert.deepEqual(event.body.metadata, { play: 'reply' });
      if (type === 'sequence.contact_unenrolled') assert.equal(event.body.data.reason, 'reply_received');
    }
  });

  test('a reply pauses only the enrollments that texted that phone from the number it replied to', async () => {
    const contact = await newContact(call, { first_name: 'Rae' });
    const texted = await newSequence(call, [
      { kind: 'sms', wait_minutes: 0, body: 'One' },
      { kind: 'sms', wait_minutes: 60, body: 'Two' },
    ]);
    const emailOnly = await newSequence(call, [
      { kind: 'email', wait_minutes: 0, subject: 'Hello', body: 'One' },
      { kind: 'email', wait_minutes: 60, subject: 'Again', body: 'Two' },
    ]);
    const notYet = await newSequence(call, [{ kind: 'sms', wait_minutes: 60, body: 'Later' }]);
    const e1 = await enroll(call, texted.id, contact.id, { play: 'texted' });
    const e2 = await enroll(call, emailOnly.id, contact.id);
    const e3 = await enroll(call, notYet.id, contact.id);
    // The house client texts the same phone from its own number.
    const houseNumber = '+14155550166';
    await adminCall(t.app, 'POST', `/orgs/${tenant.orgId}/numbers`, { number: houseNumber });
    const house = caller(t, tenant.agency);
    const houseContact = (await house('POST', '/crm/contacts', { phone: contact.phone })).body.contact;
    const houseSequence = await newSequence(house, [
      { kind: 'sms', wait_minutes: 0, body: 'House one' },
      { kind: 'sms', wait_minutes: 60, body: 'House two' },
    ]);
    const e4 = await enroll(house, houseSequence.id, houseContact.id);
    await eventually(async () => (await readEnrollment(call, texted.id, e1.id)).current_step === 1);
    await eventually(async () => (await readEnrollment(call, emailOnly.id, e2.id)).current_step === 1);
    await eventually(async () => (await readEnrollment(house, houseSequence.id, e4.id)).current_step === 1);

    assert.equal(
      (await simulateInbound(t, { from: contact.phone, to: FROM, body: 'Stop the texts' })).statusCode,
      202,
    );
    const paused = await readEnrollment(call, texted.id, e1.id);
    assert.equal(paused.status, 'paused');
    assert.equal(paused.paused_reason, 'reply_received');
    assert.equal(
      (await readEnrollment(call, emailOnly.id, e2.id)).status,
      'active',
      'the email ladder runs on',
    );
    assert.equal((await readEnrollment(call, notYet.id, e3.id)).status, 'active', 'no SMS sent yet');
    assert.equal(
      (await readEnrollment(house, houseSequence.id, e4.id)).status,
      'active',
      'texted from another number',
    );
    assert.deepEqual(
      (await eventsOf(call, 'sequence.enrollment.paused'))
        .filter((event) => event.data.enrollment.contact_id === contact.id)
        .map((event) => [event.data.enrollment.id, event.metadata]),
      [[e1.id, { play: 'texted' }]],
    );

    // A reply to the house number pauses the house client's enrollment that texted from it.
    assert.equal(
      (await simulateInbound(t, { from: contact.phone, to: houseNumber, body: 'You too' })).statusCode,
      202,
    );
    const housePaused = await readEnrollment(house, houseSequence.id, e4.id);
    assert.equal(housePaused.status, 'paused');
    assert.equal(housePaused.paused_reason, 'reply_received');
    assert.equal((await readEnrollment(call, emailOnly.id, e2.id)).status, 'active');
  });

  test('a reply from a number no contact has, or to another client, pauses nothing', async () => {
    const sequence = await newSequence(call, [
      { kind: 'sms', wait_minutes: 0, body: 'One' },
      { kind: 'sms', wait_minutes: 60, body: 'Two' },
    ]);
    const contact = await newContact(call);
    const enrollment = await enroll(call, sequence.id, contact.id);
    await eventually(async () => (await readEnrollment(call, sequence.id, enrollment.id)).current_step === 1);
    assert.equal((await simulateInbound(t, { from: '+14155559876', to: FROM, body: 'hi' })).statusCode, 202);
    // The same phone is a contact of another tenant too: its reply there touches only that tenant.
    const other = await createTenant(t.app);
    const otherCall = await smsSetup(t, other, '+14155550178', 10);
    await otherCall('POST', '/crm/contacts', { phone: contact.phone });
    assert.equal(
      (await simulateInbound(t, { from: contact.phone, to: '+14155550178', body: 'hi' })).statusCode,
      202,
    );
    assert.equal((await readEnrollment(call, sequence.id, enrollment.id)).status, 'active');
  });

  test('an SMS step that cannot be sent pauses with its reason: opted_out, missing_phone, fuel_exhausted', async () => {
    const sequence = await newSequence(call, [{ kind: 'sms', wait_minutes: 0, body: 'Hello' }]);

    const optedOut = await newContact(call);
    const phones = (await call('GET', `/crm/contacts/${optedOut.id}/phones`)).body.data;
    await call('PATCH', `/crm/contacts/${optedOut.id}/phones/${phones[0].id}`, { consent_status: 'opt_out' });
    const noPhone = (await call('POST', '/crm/contacts', { email: 'nophone@example.test' })).body.contact;

    const a = await enroll(call, sequence.id, optedOut.id);
    const b = await enroll(call, sequence.id, noPhone.id);
    for (const [enrollment, reason] of [
      [a, 'opted_out'],
      [b, 'missing_phone'],
    ]) {
      const row = await eventually(async () => {
        const got = await readEnrollment(call, sequence.id, enrollment.id);
        return got.status === 'paused' && got;
      });
      assert.equal(row.paused_reason, reason);
      assert.equal(row.current_step, 0);
    }
    assert.equal((await messagesTo(optedOut.phone)).length, 0);

    // FUEL: an org with none left.
    const broke = await createTenant(t.app);
    const brokeCall = await smsSetup(t, broke, '+14155550179', 0);
    const brokeSequence = await newSequence(brokeCall, [{ kind: 'sms', wait_minutes: 0, body: 'Hello' }]);
    const contact = await newContact(brokeCall);
    const enrollment = await enroll(brokeCall, brokeSequence.id, contact.id);
    const row = await eventually(async () => {
      const got = await readEnrollment(brokeCall, brokeSequence.id, enrollment.id);
      return got.status === 'paused' && got;
    });
    assert.equal(row.paused_reason, 'fuel_exhausted');
    assert.equal((await messagesTo(contact.phone)).length, 0);
    const events = await eventsOf(brokeCall, 'sequence.enrollment.paused');
    assert.equal(events.length, 1);
    // With FUEL again, a resume sends the step.
    await adminCall(t.app, 'POST', `/orgs/${broke.orgId}/fuel`, { amount: 5 });
    await brokeCall('PATCH', `/sequences/${brokeSequence.id}/enrollments/${enrollment.id}`, {
      status: 'active',
    });
    await eventually(
      async () => (await readEnrollment(brokeCall, brokeSequence.id, enrollment.id)).status === 'completed',
    );
    assert.equal((await messagesTo(contact.phone)).length, 1);
  });

  test('two workers, many SMS enrollments: one message and one debit per step', async () => {
    const sequence = await newSequence(call, [
      { kind: 'sms', wait_minutes: 0, body: 'One' },
      { kind: 'sms', wait_minutes: 0, body: 'Two' },
    ]);
    const contacts = await Promise.all(Array.from({ length: 40 }, () => newContact(call)));
    const ids: string[] = [];
    for (const contact of contacts) ids.push((await enroll(call, sequence.id, contact.id)).id);
    await eventually(async () => {
      const { data } = (await call('GET', `/sequences/${sequence.id}/enrollments?status=completed&limit=200`))
        .body;
      return data.length === ids.length;
    }, 30_000);
    const messages = await t.platform.db
      .selectFrom('sms_messages')
      .select(['id', 'cause_key'])
      .where(
        'to_number',
        'in',
        contacts.map((c) => c.phone),
      )
      .execute();
    assert.equal(messages.length, ids.length * 2);
    assert.equal(new Set(messages.map((m) => m.cause_key)).size, ids.length * 2);
    const debits = await t.platform.db
      .selectFrom('fuel_ledger')
      .select('id')
      .where('org_id', '=', tenant.orgId)
      .where(
        'reference_id',
        'in',
        messages.map((m) => m.id),
      )
      .execute();
    assert.equal(debits.length, ids.length * 2, 'one debit per message');
  });
});
