import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pino from 'pino';
import { dialerTick } from '../../src/modules/sdr/dialer.ts';
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
import { createWebhook, type Receiver, startReceiver } from '../webhooks/receiver.ts';
import { enableSdr, newContact, scriptNumber, zoneAtLocalHour } from './support.ts';

const FROM = '+14155550900';
const HOUR_MS = 1000;
const ALL_DAYS = [1, 2, 3, 4, 5, 6, 7];

describe('the SDR dialer: windows, concurrency, attempts, consent at dial time, events once', () => {
  let t: TestApp;
  let tenant: TestTenant;
  let agency: ReturnType<typeof caller>;
  let receiver: Receiver;
  let n = 0;
  const phone = () => `+1212556${String(1000 + n++)}`;
  const log = pino({ level: 'silent' });

  before(async () => {
    t = await buildTestApp({
      VOICE_SIMULATOR_CALL_MS: '600',
      SDR_TICK_MS: '150',
      SDR_HOUR_MS: String(HOUR_MS),
      CALL_PLACEMENT_LEASE_MS: '3000',
      OUTBOUND_ALLOW_PRIVATE: 'true',
    });
    tenant = await createTenant(t.app);
    agency = caller(t, tenant.agency);
    await enableSdr(t, tenant, FROM);
    receiver = await startReceiver();
    await createWebhook(t, tenant.agency, { url: receiver.url, events: ['*'] });
  });
  after(async () => {
    await t.close();
    await receiver.close();
  });

  /** A campaign whose window is 10:00-14:00 every day, with prospects of explicit zones (noon: inside). */
  async function campaignWith(
    settings: Record<string, unknown>,
    prospects: { phone: string; timezone?: string; contactId?: string }[],
  ) {
    const created = await agency('POST', '/sdr/campaigns', {
      name: `Campaign ${n}`,
      from_number: FROM,
      calling_window_start: '10:00',
      calling_window_end: '14:00',
      calling_days: ALL_DAYS,
      voicemail_message: 'Sorry we missed you.',
      ...settings,
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const id = created.body.campaign.id as string;
    const contacts: string[] = [];
    for (const prospect of prospects)
      contacts.push(prospect.contactId ?? (await newContact(t, tenant, prospect.phone)));
    const added = await agency('POST', `/sdr/campaigns/${id}/prospects`, {
      prospects: prospects.map((p, i) => ({
        contact_id: contacts[i],
        timezone: p.timezone ?? zoneAtLocalHour(12),
      })),
    });
    assert.equal(added.status, 201, JSON.stringify(added.body));
    return { id, contacts };
  }
  const activate = async (id: string) => {
    assert.equal((await agency('PATCH', `/sdr/campaigns/${id}`, { status: 'scheduled' })).status, 200);
    assert.equal((await agency('PATCH', `/sdr/campaigns/${id}`, { status: 'active' })).status, 200);
  };
  const campaign = async (id: string) => (await agency('GET', `/sdr/campaigns/${id}`)).body.campaign;
  const prospects = async (id: string) =>
    (await agency('GET', `/sdr/campaigns/${id}/prospects?limit=200`)).body.data as any[];
  const callsOf = (campaignId: string) =>
    t.platform.db
      .selectFrom('calls')
      .selectAll()
      .where('sdr_campaign_id', '=', campaignId)
      .orderBy('created_at')
      .execute();
  const untilCompleted = (id: string) =>
    eventually(async () => (await campaign(id)).status === 'completed', 60_000, 100);

  test('two dialers ticking at once dial each attempt once; a scheduled campaign starts on the next tick', async () => {
    const { id } = await campaignWith(
      { max_concurrent_calls: 10, scheduled_start_at: new Date(Date.now() + 200).toISOString() },
      Array.from({ length: 5 }, () => ({ phone: phone() })),
    );
    assert.equal((await campaign(id)).status, 'scheduled');
    await sleep(250);
    // No worker runs yet: the calls stay queued, in flight.
    await Promise.all([dialerTick({ db: t.platform.db, log }), dialerTick({ db: t.platform.db, log })]);
    await dialerTick({ db: t.platform.db, log });
    assert.equal((await campaign(id)).status, 'active');
    const calls = await callsOf(id);
    assert.equal(calls.length, 5);
    const all = await prospects(id);
    assert.deepEqual(calls.map((c) => c.cause_key).sort(), all.map((p) => `sdr:${p.id}:1`).sort());
    for (const p of all) {
      assert.equal(p.status, 'queued');
      assert.equal(p.attempts, 1);
      assert.equal(p.call_ids.length, 1);
    }
    const listed = (await agency('GET', '/calls?limit=200')).body.data.filter(
      (c: { sdr_campaign_id: string }) => c.sdr_campaign_id === id,
    );
    assert.equal(listed.length, 5, 'GET /v1/calls shows the calls with their sdr_campaign_id');
    assert.equal((await campaign(id)).stats.in_flight, 5);
    const removing = await agency('DELETE', `/sdr/campaigns/${id}/prospects/${all[0].id}`);
    assert.equal(removing.status, 409);
    assert.equal(removing.body.error, 'prospect_in_call');
    assert.equal(removing.body.details.call_id, all[0].call_ids[0]);
  });

  test('with max_concurrent_calls 2 and six prospects, at most two calls overlap; outcomes and events arrive once', async () => {
    const numbers = Array.from({ length: 6 }, () => phone());
    await scriptNumber(t, numbers[4], { outcome: 'booked', summary: 'Booked for Thursday.' });
    await scriptNumber(t, numbers[5], { outcome: 'voicemail' });
    const { id, contacts } = await campaignWith(
      {
        max_concurrent_calls: 2,
        post_call_email: 'owner@acme.test',
        cal_com_booking_url: 'https://cal.com/acme',
      },
      numbers.map((number) => ({ phone: number })),
    );
    await t.startWorker();
    await t.startWorker();
    await activate(id);
    await untilCompleted(id);

    const calls = await callsOf(id);
    assert.equal(calls.length, 6);
    // Calls in flight at once, counted at each call's start: a long call overlapping two short ones
    // that follow each other is two at a time, not three.
    for (const call of calls) {
      const inFlight = calls.filter(
        (other) => other.created_at <= call.created_at && call.created_at < other.ended_at!,
      );
      assert.ok(inFlight.length <= 2, `${inFlight.length} calls in flight at once`);
    }
    const byContact = new Map((await prospects(id)).map((p) => [p.contact_id, p]));
    assert.deepEqual(
      contacts.map((c) => byContact.get(c).status),
      ['connected', 'connected', 'connected', 'connected', 'booked', 'voicemail'],
    );
    const booked = (await agency('GET', `/sdr/campaigns/${id}/prospects?status=booked`)).body.data;
    assert.deepEqual(
      booked.map((p: { contact_id: string }) => p.contact_id),
      [contacts[4]],
    );
    const stats = (await campaign(id)).stats;
    assert.deepEqual([stats.connected, stats.voicemails, stats.booked, stats.attempts], [5, 1, 1, 6]);

    const callIds = new Set(calls.map((c) => c.id));
    const delivered = await eventually(async () => {
      const ours = receiver.requests.filter(
        (r) =>
          String(r.body?.type).startsWith('sdr.') &&
          (r.body.data.campaign_id === id || callIds.has(r.body.data.call_id)),
      );
      return ours.length >= 15 && ours;
    }, 20_000);
    await sleep(500);
    const ours = receiver.requests.filter(
      (r) =>
        delivered.includes(r) || (String(r.body?.type).startsWith('sdr.') && r.body.data.campaign_id === id),
    );
    const ids = ours.map((r) => r.headers['x-service-event-id']);
    assert.equal(new Set(ids).size, ids.length, 'no event delivered twice');
    const count = (type: string) => ours.filter((r) => r.body.type === type).length;
    assert.deepEqual(
      {
        started: count('sdr.campaign.started'),
        completed: count('sdr.campaign.completed'),
        connected: count('sdr.call.connected'),
        voicemail: count('sdr.call.voicemail'),
        booked: count('sdr.call.booked'),
        outbound: count('sdr.outbound.completed'),
      },
      { started: 1, completed: 1, connected: 5, voicemail: 1, booked: 1, outbound: 6 },
    );
    const bookedEvent = ours.find((r) => r.body.type === 'sdr.call.booked')!.body.data;
    assert.equal(bookedEvent.contact_id, contacts[4]);
    assert.equal(bookedEvent.prospect_id, byContact.get(contacts[4]).id);
    assert.equal(bookedEvent.booking_url, 'https://cal.com/acme');
    const outbound = ours.find(
      (r) => r.body.type === 'sdr.outbound.completed' && r.body.data.contact_id === contacts[4],
    )!.body.data;
    assert.equal(outbound.outcome, 'booked');
    assert.equal(outbound.summary, 'Booked for Thursday.');
    assert.ok(Array.isArray(outbound.transcript));

    // A summary email for each connected call, once each.
    const emails = await eventually(async () => {
      const response = await t.app.inject({
        method: 'GET',
        url: '/admin/v1/simulator/emails?to=owner@acme.test',
        headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      });
      const data = response.json().data as any[];
      return data.length >= 5 && data;
    }, 20_000);
    await sleep(500);
    assert.equal(emails.length, 5);
  });

  test('a prospect whose local time is outside the window waits while one inside it is dialed, until the window includes it', async () => {
    const inside = phone();
    const outside = phone();
    const { id, contacts } = await campaignWith({ max_concurrent_calls: 2 }, [
      { phone: inside, timezone: zoneAtLocalHour(12) },
      { phone: outside, timezone: zoneAtLocalHour(0) },
    ]);
    await activate(id);
    const byContact = async () => new Map((await prospects(id)).map((p) => [p.contact_id, p]));
    await eventually(async () => (await byContact()).get(contacts[0]).status === 'connected', 20_000);
    await sleep(500);
    const waiting = (await byContact()).get(contacts[1]);
    assert.equal(waiting.status, 'pending');
    assert.equal(waiting.attempts, 0);
    // Its window opens at 10:00 local, about ten hours from now.
    const wait = new Date(waiting.next_attempt_at).getTime() - Date.now();
    assert.ok(wait > 8 * 3_600_000 && wait < 11 * 3_600_000, `opens in ${wait} ms`);
    const calls = await callsOf(id);
    assert.deepEqual(
      calls.map((c) => c.to_number),
      [inside],
    );
    // A window that now includes it: the waiting prospect is checked again at once, and dialed.
    const widened = await agency('PATCH', `/sdr/campaigns/${id}`, {
      calling_window_start: '00:00',
      calling_window_end: '23:59',
    });
    assert.equal(widened.status, 200);
    await eventually(async () => (await byContact()).get(contacts[1]).status === 'connected', 20_000);
    assert.deepEqual(
      (await callsOf(id)).map((c) => c.to_number),
      [inside, outside],
    );
  });

  test('no answer twice with max_attempts 2 ends exhausted after exactly two calls, a retry interval apart', async () => {
    const number = phone();
    await scriptNumber(t, number, { outcome: 'no_answer' });
    const { id } = await campaignWith({ max_attempts: 2, retry_interval_hours: 1 }, [{ phone: number }]);
    await activate(id);
    await untilCompleted(id);
    const [prospect] = await prospects(id);
    assert.equal(prospect.status, 'exhausted');
    assert.equal(prospect.attempts, 2);
    assert.equal(prospect.last_outcome, 'no_answer');
    const calls = await callsOf(id);
    assert.equal(calls.length, 2);
    assert.deepEqual(
      calls.map((c) => [c.status, c.cause_key]),
      [
        ['no_answer', `sdr:${prospect.id}:1`],
        ['no_answer', `sdr:${prospect.id}:2`],
      ],
    );
    assert.deepEqual(
      prospect.call_ids,
      calls.map((c) => c.id),
    );
    const spacing = calls[1].created_at.getTime() - calls[0].ended_at!.getTime();
    assert.ok(spacing >= HOUR_MS, `retried ${spacing} ms after the first call ended`);
    assert.ok(spacing < HOUR_MS + 2500, `retried ${spacing} ms after the first call ended`);
  });

  test('a contact marked do_not_call after being added is skipped at dial time, and one without a phone too', async () => {
    const blocked = phone();
    const fine = phone();
    const contactId = await newContact(t, tenant, blocked);
    const noPhone = (
      await caller(t, tenant.client)('POST', '/crm/contacts', {
        full_name: 'No Phone',
        email: `np${n}@x.test`,
      })
    ).body.contact.id;
    const { id, contacts } = await campaignWith({ max_concurrent_calls: 2 }, [
      { phone: blocked, contactId },
      { phone: fine },
      { phone: '', contactId: noPhone },
    ]);
    const client = caller(t, tenant.client);
    const [row] = (await client('GET', `/crm/contacts/${contactId}/phones`)).body.data;
    assert.equal(
      (
        await client('PATCH', `/crm/contacts/${contactId}/phones/${row.id}`, {
          consent_status: 'do_not_call',
        })
      ).status,
      200,
    );
    await activate(id);
    await untilCompleted(id);
    const byContact = new Map((await prospects(id)).map((p) => [p.contact_id, p]));
    assert.deepEqual(
      [
        byContact.get(contactId).status,
        byContact.get(contactId).skip_reason,
        byContact.get(contactId).attempts,
      ],
      ['skipped', 'do_not_call', 0],
    );
    assert.deepEqual(
      [byContact.get(noPhone).status, byContact.get(noPhone).skip_reason],
      ['skipped', 'no_phone'],
    );
    assert.equal(byContact.get(contacts[1]).status, 'connected');
    assert.deepEqual(
      (await callsOf(id)).map((c) => c.to_number),
      [fine],
    );
  });

  test('paused: no new dials, the call in flight finishes; resumed: dialing goes on', async () => {
    const { id } = await campaignWith(
      { max_concurrent_calls: 1 },
      Array.from({ length: 3 }, () => ({ phone: phone() })),
    );
    await activate(id);
    await eventually(async () => (await callsOf(id)).length === 1, 20_000, 20);
    assert.equal((await agency('PATCH', `/sdr/campaigns/${id}`, { status: 'paused' })).status, 200);
    const pausedAt = Date.now();
    await sleep(2500);
    const calls = await callsOf(id);
    assert.equal(calls.length, 1, 'no dial while paused');
    assert.ok(calls[0].ended_at, 'the call in flight finished');
    assert.ok(calls[0].created_at.getTime() < pausedAt);
    assert.equal((await agency('PATCH', `/sdr/campaigns/${id}`, { status: 'active' })).status, 200);
    await untilCompleted(id);
    assert.equal((await callsOf(id)).length, 3);
  });
});
