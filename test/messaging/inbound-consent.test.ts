import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { InboundSms } from '../../src/modules/messaging/service.ts';
import { type Call, caller, eventsOf } from '../crm/crm-client.ts';
import { adminCall, buildTestApp, createTenant, type TestApp, type TestTenant } from '../helpers.ts';
import {
  balanceOf,
  countingProvider,
  drainSends,
  senderContext,
  simulateInbound,
  smsSetup,
} from './support.ts';

const OURS = '+14155550300';
const B_NUMBER = '+14155550301';

describe('consent at send time, inbound messages, keywords and conversations', () => {
  let t: TestApp;
  let tenant: TestTenant;
  let client: Call;
  let n = 0;
  const phone = () => `+1415556${String(1000 + n++)}`;
  const hooked: InboundSms[] = [];

  before(async () => {
    t = await buildTestApp({ SMS_SIMULATOR_DELAY_MS: '10' });
    tenant = await createTenant(t.app);
    client = await smsSetup(t, tenant, OURS, 100);
    t.platform.hooks.inboundMessage.on(async (trx, message) => {
      hooked.push(message);
      // The hook runs in the storing transaction: it sees the message, and its failure undoes it.
      const row = await trx
        .selectFrom('sms_messages')
        .select('id')
        .where('id', '=', message.id)
        .executeTakeFirst();
      assert.ok(row);
      if (message.body === 'explode') throw new Error('handler failed');
    });
  });
  after(() => t.close());

  const contactWith = async (number: string, fields: Record<string, unknown> = {}, call = client) => {
    const contact = (await call('POST', '/crm/contacts', { phone: number, first_name: 'Ada' })).body.contact;
    const [row] = (await call('GET', `/crm/contacts/${contact.id}/phones`)).body.data;
    if (Object.keys(fields).length > 0) {
      const patched = await call('PATCH', `/crm/contacts/${contact.id}/phones/${row.id}`, fields);
      assert.equal(patched.status, 200, JSON.stringify(patched.body));
    }
    return { contactId: contact.id as string, phoneId: row.id as string };
  };
  const send = async (to: string, body = 'Hi there') => {
    const reply = await client('POST', '/sms/messages', { to, body });
    assert.equal(reply.status, 202, JSON.stringify(reply.body));
    return reply.body.message;
  };
  const messageOf = async (message: { id: string; conversation_id: string }) =>
    (await client('GET', `/sms/conversations/${message.conversation_id}/messages`)).body.data.find(
      (m: any) => m.id === message.id,
    );

  test('an opted-out number: no provider call, failed/opted_out, sms.delivery_failed, FUEL back', async () => {
    const number = phone();
    await contactWith(number, { consent_status: 'opt_out' });
    const before = await balanceOf(t, tenant);
    const message = await send(number);
    assert.equal(await balanceOf(t, tenant), before - 1, 'debited at accept');
    const provider = countingProvider(t);
    await drainSends(senderContext(t, provider));
    assert.equal(provider.sends.length, 0);
    const failed = await messageOf(message);
    assert.equal(failed.status, 'failed');
    assert.equal(failed.error_code, 'opted_out');
    assert.equal(await balanceOf(t, tenant), before);
    const ledger = (await client('GET', '/fuel/ledger')).body.data.filter(
      (e: any) => e.reference_id === message.id,
    );
    assert.deepEqual(ledger.map((e: any) => [e.reason, e.amount]).sort(), [
      ['refund', 1],
      ['sms', -1],
    ]);
    const events = (await eventsOf(client, 'sms.delivery_failed')).filter(
      (e) => e.data.message_id === message.id,
    );
    assert.equal(events.length, 1);
    assert.equal(events[0].data.error_code, 'opted_out');
    // Running the loop again changes nothing.
    await drainSends(senderContext(t, provider));
    assert.equal(await balanceOf(t, tenant), before);
  });

  test('do_not_call, and a global DNC of the org, fail as do_not_contact; consent is read at send time', async () => {
    const dnc = phone();
    await contactWith(dnc, { consent_status: 'do_not_call' });
    const global = phone();
    await contactWith(global, { dnc_scope: 'global' }, caller(t, tenant.agency));
    const later = phone();
    const { contactId, phoneId } = await contactWith(later);
    const messages = [await send(dnc), await send(global), await send(later)];
    // Opted out after the accept, before the send: the send is stopped.
    await client('PATCH', `/crm/contacts/${contactId}/phones/${phoneId}`, { consent_status: 'opt_out' });
    const provider = countingProvider(t);
    await drainSends(senderContext(t, provider));
    assert.equal(provider.sends.length, 0);
    const codes = await Promise.all(messages.map(async (m) => (await messageOf(m)).error_code));
    assert.deepEqual(codes, ['do_not_contact', 'do_not_contact', 'opted_out']);
  });

  test('STOP opts the contact out (contact.updated), later sends fail; START opts back in', async () => {
    const number = phone();
    const { contactId } = await contactWith(number, { consent_status: 'opt_in' });
    const stop = await simulateInbound(t, { from: number, to: OURS, body: '  stop ' });
    assert.equal(stop.statusCode, 202, stop.body);
    let [row] = (await client('GET', `/crm/contacts/${contactId}/phones`)).body.data;
    assert.equal(row.consent_status, 'opt_out');
    assert.equal(row.consent_source, 'sms_keyword');
    assert.ok(row.consented_at);
    const updates = (await eventsOf(client, 'contact.updated')).filter((e) => e.data.id === contactId);
    assert.ok(updates.length >= 1);

    const blocked = await send(number);
    const provider = countingProvider(t);
    await drainSends(senderContext(t, provider));
    assert.equal((await messageOf(blocked)).error_code, 'opted_out');
    assert.equal(provider.sends.length, 0);

    for (const word of ['Start']) await simulateInbound(t, { from: number, to: OURS, body: word });
    [row] = (await client('GET', `/crm/contacts/${contactId}/phones`)).body.data;
    assert.equal(row.consent_status, 'opt_in');
    const allowed = await send(number);
    await drainSends(senderContext(t, provider));
    assert.equal((await messageOf(allowed)).status, 'sent');
    assert.equal(provider.sends.length, 1);

    for (const word of ['STOPALL', 'unsubscribe', 'Cancel', 'END', 'quit']) {
      await simulateInbound(t, { from: number, to: OURS, body: 'yes' });
      await simulateInbound(t, { from: number, to: OURS, body: word });
      [row] = (await client('GET', `/crm/contacts/${contactId}/phones`)).body.data;
      assert.equal(row.consent_status, 'opt_out', word);
    }
    // Not a keyword: a sentence that contains one.
    await simulateInbound(t, { from: number, to: OURS, body: 'unstop' });
    await simulateInbound(t, { from: number, to: OURS, body: 'please stop texting' });
    [row] = (await client('GET', `/crm/contacts/${contactId}/phones`)).body.data;
    assert.equal(row.consent_status, 'opt_in');
  });

  test('inbound: conversation counts, contact, sms.received, the hook, activities both ways, read and close', async () => {
    const number = phone();
    const { contactId } = await contactWith(number);
    const outbound = await send(number, 'Your appointment is tomorrow');
    const reply = await simulateInbound(t, { from: number, to: OURS, body: 'Thanks, see you' });
    assert.equal(reply.statusCode, 202);
    const messageId = reply.json().message_id;
    await simulateInbound(t, { from: number, to: OURS, body: 'Bring anything?' });

    const conversation = (await client('GET', `/sms/conversations/${outbound.conversation_id}`)).body
      .conversation;
    assert.equal(conversation.phone_number, number);
    assert.equal(conversation.contact_id, contactId);
    assert.equal(conversation.total_messages, 3);
    assert.equal(conversation.unread_count, 2);
    assert.equal(conversation.status, 'open');
    assert.equal(conversation.provider, 'simulator');

    const messages = (await client('GET', `/sms/conversations/${conversation.id}/messages?limit=2`)).body;
    assert.deepEqual(
      messages.data.map((m: any) => [m.direction, m.body]),
      [
        ['inbound', 'Bring anything?'],
        ['inbound', 'Thanks, see you'],
      ],
    );
    const rest = (
      await client(
        'GET',
        `/sms/conversations/${conversation.id}/messages?page_token=${messages.next_page_token}`,
      )
    ).body.data;
    assert.deepEqual(
      rest.map((m: any) => m.id),
      [outbound.id],
    );

    const received = (await eventsOf(client, 'sms.received')).find((e) => e.data.message_id === messageId);
    assert.equal(received.data.conversation_id, conversation.id);
    assert.equal(received.data.contact_id, contactId);
    assert.equal(received.data.status, 'received');
    const hook = hooked.find((m) => m.id === messageId)!;
    assert.equal(hook.conversationId, conversation.id);
    assert.equal(hook.contactId, contactId);
    assert.equal(hook.clientId, tenant.clientId);

    const activities = (await client('GET', `/crm/activities?contact_id=${contactId}&activity_type=sms`)).body
      .data;
    assert.deepEqual(activities.map((a: any) => a.direction).sort(), ['inbound', 'inbound', 'outbound']);

    const unread = (await client('GET', '/sms/conversations?unread=true')).body.data;
    assert.ok(unread.some((c: any) => c.id === conversation.id));
    const read = await client('PATCH', `/sms/conversations/${conversation.id}`, {
      read: true,
      status: 'closed',
    });
    assert.equal(read.status, 200);
    assert.equal(read.body.conversation.unread_count, 0);
    assert.equal(read.body.conversation.status, 'closed');
    const after = (await client('GET', '/sms/conversations?unread=true')).body.data;
    assert.ok(!after.some((c: any) => c.id === conversation.id));
    const byContact = (await client('GET', `/sms/conversations?contact_id=${contactId}`)).body.data;
    assert.deepEqual(
      byContact.map((c: any) => c.id),
      [conversation.id],
    );
    const byPhone = (await client('GET', `/sms/conversations?phone_number=${encodeURIComponent(number)}`))
      .body.data;
    assert.deepEqual(
      byPhone.map((c: any) => c.id),
      [conversation.id],
    );
    // A new inbound message reopens it.
    await simulateInbound(t, { from: number, to: OURS, body: 'One more thing' });
    const reopened = (await client('GET', `/sms/conversations/${conversation.id}`)).body.conversation;
    assert.equal(reopened.status, 'open');
    assert.equal(reopened.unread_count, 1);
  });

  test('the most recent conversation comes first, and pages follow', async () => {
    const numbers = [phone(), phone(), phone()];
    for (const number of numbers) await simulateInbound(t, { from: number, to: OURS, body: 'hello' });
    const page = (await client('GET', '/sms/conversations?limit=2')).body;
    assert.deepEqual(
      page.data.map((c: any) => c.phone_number),
      [numbers[2], numbers[1]],
    );
    const next = (await client('GET', `/sms/conversations?limit=2&page_token=${page.next_page_token}`)).body;
    assert.equal(next.data[0].phone_number, numbers[0]);
  });

  test('an inbound message whose hook fails is not stored; an unknown number is 404', async () => {
    const number = phone();
    const failing = await simulateInbound(t, { from: number, to: OURS, body: 'explode' });
    assert.equal(failing.statusCode, 500);
    const conversations = (
      await client('GET', `/sms/conversations?phone_number=${encodeURIComponent(number)}`)
    ).body.data;
    assert.equal(conversations.length, 0);
    const unknown = await simulateInbound(t, { from: number, to: '+14155550399', body: 'hi' });
    assert.equal(unknown.statusCode, 404);
    assert.equal(unknown.json().error, 'number_not_found');
  });

  test("client A never sees client B's conversations, messages or numbers; B's inbound lands in B", async () => {
    const { client: b } = await adminCall(t.app, 'POST', `/orgs/${tenant.orgId}/clients`, {
      name: 'Client B',
    });
    const key = await adminCall(t.app, 'POST', `/orgs/${tenant.orgId}/keys`, {
      name: 'b',
      kind: 'client',
      client_id: b.id,
      rate_limit_per_minute: 100_000,
    });
    await adminCall(t.app, 'POST', `/orgs/${tenant.orgId}/numbers`, { number: B_NUMBER, client_id: b.id });
    const asB = caller(t, { authorization: `Bearer ${key.key}` });
    const number = phone();
    const inbound = await simulateInbound(t, { from: number, to: B_NUMBER, body: 'for B' });
    assert.equal(inbound.statusCode, 202);
    const [conversation] = (await asB('GET', '/sms/conversations')).body.data;
    assert.equal(conversation.phone_number, number);
    const sent = await asB('POST', '/sms/messages', { to: number, body: 'B answers' });
    assert.equal(sent.status, 202);
    assert.equal(sent.body.message.from, B_NUMBER);
    assert.equal(sent.body.message.conversation_id, conversation.id);

    const aList = (await client('GET', '/sms/conversations?limit=200')).body.data;
    assert.ok(!aList.some((c: any) => c.id === conversation.id));
    assert.equal((await client('GET', `/sms/conversations/${conversation.id}`)).status, 404);
    assert.equal((await client('GET', `/sms/conversations/${conversation.id}/messages`)).status, 404);
    assert.equal(
      (await client('PATCH', `/sms/conversations/${conversation.id}`, { read: true })).status,
      404,
    );
    const aNumbers = (await client('GET', '/numbers')).body.data.map((x: any) => x.number);
    assert.deepEqual(aNumbers, [OURS]);
    // A cannot send from B's number.
    const foreign = await client('POST', '/sms/messages', { to: number, body: 'x', from: B_NUMBER });
    assert.equal(foreign.status, 400);
    // Another org sees none of it.
    const other = await createTenant(t.app);
    const otherList = (await caller(t, other.client)('GET', '/sms/conversations')).body.data;
    assert.equal(otherList.length, 0);
    assert.equal((await caller(t, other.agency)('GET', `/sms/conversations/${conversation.id}`)).status, 404);
  });
});
