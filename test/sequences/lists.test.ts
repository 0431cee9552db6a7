import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { followLists } from '../../src/modules/sequences/list-follow.ts';
import { type Call, caller } from '../crm/crm-client.ts';
import { buildTestApp, createTenant, sleep, type TestApp, type TestTenant } from '../helpers.ts';
import { createWebhook, type Receiver, signatureMatches, startReceiver } from '../webhooks/receiver.ts';
import { enroll, eventually, newContact, newSequence, simulatedEmails } from './support.ts';

const TICK_MS = 100;
/** How often a list relative to now is synced whole again (SEQUENCE_LIST_RESYNC), shortened. */
const RESYNC_MS = 300;
/** Steps wait long enough never to run during a test: only enrollments are looked at. */
const LATER = [{ kind: 'email' as const, wait_minutes: 1000, subject: 'Hi', body: 'Hello {{first_name}}' }];

describe('sequences that follow a list', () => {
  let t: TestApp;
  let tenant: TestTenant;
  let other: TestTenant;
  let call: Call;
  let receiver: Receiver;
  let secret: string;

  before(async () => {
    t = await buildTestApp({
      SEQUENCE_TICK_MS: String(TICK_MS),
      SEQUENCE_MINUTE_MS: '60000',
      SEQUENCE_LIST_RESYNC: `${RESYNC_MS}ms`,
      OUTBOUND_ALLOW_PRIVATE: 'true',
    });
    tenant = await createTenant(t.app);
    other = await createTenant(t.app);
    call = caller(t, tenant.client);
    receiver = await startReceiver();
    ({ secret } = await createWebhook(t, tenant.client, {
      url: `${receiver.url}/hook`,
      events: ['sequence.enrollment.created', 'sequence.contact_unenrolled'],
    }));
    // Two workers share the list pass from here on.
    await t.startWorker();
    await t.startWorker();
  });
  after(async () => {
    await t.close();
    await receiver.close();
  });

  const newList = async (fields: Record<string, unknown> = {}) => {
    // A list moves sequences only with emit_flow_triggers on (off by default).
    const { status, body } = await call('POST', '/crm/lists', {
      name: 'Leads',
      emit_flow_triggers: true,
      ...fields,
    });
    assert.equal(status, 201, JSON.stringify(body));
    return body.list;
  };
  const addMembers = async (listId: string, contactIds: string[]) => {
    const { status, body } = await call('POST', `/crm/lists/${listId}/members`, { contact_ids: contactIds });
    assert.equal(status, 200, JSON.stringify(body));
  };
  const enrollments = async (sequenceId: string, status?: string) => {
    const query = status ? `&status=${status}` : '';
    return (await call('GET', `/sequences/${sequenceId}/enrollments?limit=200${query}`)).body.data as any[];
  };
  const activeContacts = async (sequenceId: string) =>
    (await enrollments(sequenceId, 'active')).map((e) => e.contact_id).sort();
  const delivered = (type: string, enrollmentId: string) =>
    receiver.requests.filter((r) => r.body?.type === type && r.body.data.enrollment.id === enrollmentId);
  /** Waits until the active enrollments are exactly these contacts. */
  const activeAre = (sequenceId: string, contactIds: string[]) =>
    eventually(async () => {
      const active = await activeContacts(sequenceId);
      return JSON.stringify(active) === JSON.stringify([...contactIds].sort()) && active;
    });

  test('linking enrolls the static list; an added contact is enrolled once, a removed one unenrolled (list_change)', async () => {
    const list = await newList();
    const [a, b, c] = await Promise.all([newContact(call), newContact(call), newContact(call)]);
    await addMembers(list.id, [a.id, b.id]);
    const sequence = await newSequence(call, LATER, { list_id: list.id });
    assert.equal(sequence.list_id, list.id);
    await activeAre(sequence.id, [a.id, b.id]);

    await addMembers(list.id, [c.id]);
    await activeAre(sequence.id, [a.id, b.id, c.id]);
    const [joined] = (await enrollments(sequence.id)).filter((e) => e.contact_id === c.id);
    assert.deepEqual(joined.metadata, { source: 'list', list_id: list.id });
    const created = await eventually(async () => {
      const found = delivered('sequence.enrollment.created', joined.id);
      return found.length > 0 && found;
    });
    assert.ok(signatureMatches(created[0], secret), 'signed');
    assert.deepEqual(created[0].body.metadata, { source: 'list', list_id: list.id });

    assert.equal((await call('DELETE', `/crm/lists/${list.id}/members/${c.id}`)).status, 204);
    await activeAre(sequence.id, [a.id, b.id]);
    const left = (await enrollments(sequence.id)).find((e) => e.id === joined.id);
    assert.equal(left.status, 'cancelled');
    assert.equal(left.paused_reason, 'list_change');
    const unenrolled = await eventually(async () => {
      const found = delivered('sequence.contact_unenrolled', joined.id);
      return found.length > 0 && found;
    });
    assert.equal(unenrolled[0].body.data.reason, 'list_change');
    assert.deepEqual(unenrolled[0].body.metadata, { source: 'list', list_id: list.id });
    assert.ok(signatureMatches(unenrolled[0], secret));

    // Added back: a new cause, a new enrollment; once.
    await addMembers(list.id, [c.id]);
    await activeAre(sequence.id, [a.id, b.id, c.id]);
    const createdForC = () =>
      receiver.requests.filter(
        (r) => r.body?.type === 'sequence.enrollment.created' && r.body.data.enrollment.contact_id === c.id,
      ).length;
    // Delivery lags the enrollment under load: wait for the second event, then give a duplicate time to show.
    await eventually(async () => createdForC() >= 2);
    await sleep(TICK_MS * 5);
    assert.equal((await enrollments(sequence.id)).filter((e) => e.contact_id === c.id).length, 2);
    assert.equal(createdForC(), 2, 'one event per enrollment');
  });

  test('a smart list: a contact whose fields start to match is enrolled, one that stops matching is unenrolled', async () => {
    const tag = `vip-${Date.now()}`;
    const list = await newList({
      processing_type: 'smart',
      filter_branch: { field: 'tags', operator: 'has', value: tag },
    });
    const a = await newContact(call, { tags: [tag] });
    const b = await newContact(call);
    const sequence = await newSequence(call, LATER, { list_id: list.id });
    await activeAre(sequence.id, [a.id]);

    assert.equal((await call('PATCH', `/crm/contacts/${b.id}`, { tags: [tag, 'x'] })).status, 200);
    await activeAre(sequence.id, [a.id, b.id]);
    // A new contact that matches from the start.
    const n = await newContact(call, { tags: [tag] });
    await activeAre(sequence.id, [a.id, b.id, n.id]);

    assert.equal((await call('PATCH', `/crm/contacts/${a.id}`, { tags: [] })).status, 200);
    await activeAre(sequence.id, [b.id, n.id]);
    const cancelled = (await enrollments(sequence.id, 'cancelled')).map((e) => e.contact_id);
    assert.deepEqual(cancelled, [a.id]);
    // Another write of a contact that still matches enrolls nothing more.
    assert.equal((await call('PATCH', `/crm/contacts/${b.id}`, { title: 'CEO' })).status, 200);
    await sleep(TICK_MS * 5);
    assert.equal((await enrollments(sequence.id)).length, 3);
  });

  test("exclusions: an archived contact, one on do-not-call, one that unsubscribed from the sequences' emails", async () => {
    const list = await newList({ exclude_archived: true, exclude_dnc: true, exclude_unsubscribed: true });
    const [a, b, c, d] = await Promise.all([
      newContact(call),
      newContact(call),
      newContact(call),
      newContact(call),
    ]);
    await addMembers(list.id, [a.id, b.id, c.id, d.id]);
    // d unsubscribed by a sequence email before the link (the address is kept for the client).
    await t.platform.db
      .insertInto('sequence_email_unsubscribes')
      .values({ org_id: tenant.orgId, client_id: tenant.clientId, email: d.email, enrollment_id: null })
      .execute();
    const sequence = await newSequence(call, LATER, { list_id: list.id });
    await activeAre(sequence.id, [a.id, b.id, c.id]);

    assert.equal((await call('DELETE', `/crm/contacts/${a.id}`)).status, 204);
    const phones = (await call('GET', `/crm/contacts/${b.id}/phones`)).body.data;
    const dnc = await call('PATCH', `/crm/contacts/${b.id}/phones/${phones[0].id}`, {
      consent_status: 'do_not_call',
    });
    assert.equal(dnc.status, 200, JSON.stringify(dnc.body));
    await activeAre(sequence.id, [c.id]);
    const reasons = (await enrollments(sequence.id, 'cancelled')).map((e) => e.paused_reason);
    assert.deepEqual(reasons, ['list_change', 'list_change']);
  });

  test('a smart list relative to now: a contact that time moves out of it is unenrolled (list_change)', async () => {
    const tag = `recent-${Date.now()}`;
    const list = await newList({
      processing_type: 'smart',
      filter_branch: {
        and: [
          { field: 'tags', operator: 'has', value: tag },
          { field: 'created_at', operator: 'within_last_days', value: 1 },
        ],
      },
    });
    const [a, b] = [await newContact(call, { tags: [tag] }), await newContact(call, { tags: [tag] })];
    const sequence = await newSequence(call, LATER, { list_id: list.id });
    await activeAre(sequence.id, [a.id, b.id]);
    const [enrollment] = (await enrollments(sequence.id)).filter((e) => e.contact_id === a.id);

    // Two days pass for a: time writes nothing, so the backdating leaves no mark behind it.
    await t.platform.db.transaction().execute(async (trx) => {
      await trx
        .updateTable('contacts')
        .set({ created_at: new Date(Date.now() - 2 * 24 * 3600_000) })
        .where('id', '=', a.id)
        .execute();
      await trx.deleteFrom('sequence_list_marks').where('contact_id', '=', a.id).execute();
    });
    await activeAre(sequence.id, [b.id]);
    const left = (await enrollments(sequence.id)).find((e) => e.id === enrollment.id);
    assert.equal(left.status, 'cancelled');
    assert.equal(left.paused_reason, 'list_change');
    const unenrolled = await eventually(async () => {
      const found = delivered('sequence.contact_unenrolled', enrollment.id);
      return found.length > 0 && found;
    });
    assert.equal(unenrolled[0].body.data.reason, 'list_change');
    // Synced again and again, the list enrolls b no second time.
    await sleep(RESYNC_MS * 3);
    assert.equal((await enrollments(sequence.id)).length, 2);
  });

  test('a one-click unsubscribe from a sequence email takes the contact out of a list that excludes the unsubscribed', async () => {
    const list = await newList({ exclude_unsubscribed: true });
    const contact = await newContact(call);
    await addMembers(list.id, [contact.id]);
    const following = await newSequence(call, LATER, { list_id: list.id });
    await activeAre(following.id, [contact.id]);
    const membership = () =>
      t.platform.db
        .selectFrom('sequence_list_members')
        .select('contact_id')
        .where('sequence_id', '=', following.id)
        .execute();
    assert.equal((await membership()).length, 1);

    // Another sequence emails the contact, who unsubscribes through the email's link.
    const mailing = await newSequence(call, [
      { kind: 'email', wait_minutes: 0, subject: 'Hi', body: 'Hello' },
    ]);
    await enroll(call, mailing.id, contact.id);
    const [mail] = await eventually(async () => {
      const got = await simulatedEmails(t, contact.email);
      return got.length > 0 && got;
    });
    const link = /^<(.+)>$/.exec(mail.headers['List-Unsubscribe'])?.[1] as string;
    const oneClick = await t.app.inject({
      method: 'POST',
      url: new URL(link).pathname,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'List-Unsubscribe=One-Click',
    });
    assert.equal(oneClick.statusCode, 200);
    await activeAre(following.id, []);
    await eventually(async () => (await membership()).length === 0);

    // With a new address that never unsubscribed, the contact is a member again: a new join, a new enrollment.
    const added = await call('POST', `/crm/contacts/${contact.id}/emails`, {
      email: `new-${Date.now()}@example.test`,
    });
    assert.equal(added.status, 201, JSON.stringify(added.body));
    const emails = (await call('GET', `/crm/contacts/${contact.id}/emails`)).body.data;
    const old = emails.find((e: any) => e.email === contact.email);
    assert.equal((await call('DELETE', `/crm/contacts/${contact.id}/emails/${old.id}`)).status, 204);
    await activeAre(following.id, [contact.id]);
    const [rejoined] = await enrollments(following.id, 'active');
    assert.deepEqual(rejoined.metadata, { source: 'list', list_id: list.id });
  });

  test('emit_flow_triggers false turns the link off; turned on, the list is synced', async () => {
    const list = await newList({ emit_flow_triggers: false });
    const [a, b] = await Promise.all([newContact(call), newContact(call)]);
    await addMembers(list.id, [a.id]);
    const sequence = await newSequence(call, LATER, { list_id: list.id });
    await addMembers(list.id, [b.id]);
    await sleep(TICK_MS * 10);
    assert.deepEqual(await enrollments(sequence.id), []);
    assert.equal((await call('PATCH', `/crm/lists/${list.id}`, { emit_flow_triggers: true })).status, 200);
    await activeAre(sequence.id, [a.id, b.id]);
  });

  test('re-linking to another list: its members join, those only on the old list leave; unlinking keeps them', async () => {
    const [listA, listB] = [await newList(), await newList()];
    const [a, ab, b, manual] = await Promise.all([
      newContact(call),
      newContact(call),
      newContact(call),
      newContact(call),
    ]);
    await addMembers(listA.id, [a.id, ab.id, manual.id]);
    await addMembers(listB.id, [ab.id, b.id]);
    const sequence = await newSequence(call, LATER);
    // Enrolled by hand before the link: the list neither enrolls it again nor cancels it.
    await enroll(call, sequence.id, manual.id);
    assert.equal((await call('PATCH', `/sequences/${sequence.id}`, { list_id: listA.id })).status, 200);
    await activeAre(sequence.id, [a.id, ab.id, manual.id]);
    const before = await enrollments(sequence.id);

    const relinked = await call('PATCH', `/sequences/${sequence.id}`, { list_id: listB.id });
    assert.equal(relinked.body.sequence.list_id, listB.id);
    await activeAre(sequence.id, [ab.id, b.id, manual.id]);
    const abEnrollments = (await enrollments(sequence.id)).filter((e) => e.contact_id === ab.id);
    assert.equal(abEnrollments.length, 1, 'on both lists: kept, not enrolled again');
    assert.equal(abEnrollments[0].id, before.find((e) => e.contact_id === ab.id).id);

    const unlinked = await call('PATCH', `/sequences/${sequence.id}`, { list_id: null });
    assert.equal(unlinked.body.sequence.list_id, null);
    assert.equal((await call('DELETE', `/crm/lists/${listB.id}/members/${b.id}`)).status, 204);
    await sleep(TICK_MS * 10);
    assert.deepEqual(await activeContacts(sequence.id), [ab.id, b.id, manual.id].sort());
  });

  test('a paused sequence follows nothing; re-activated, it catches up', async () => {
    const list = await newList();
    const [a, b] = await Promise.all([newContact(call), newContact(call)]);
    await addMembers(list.id, [a.id]);
    const sequence = await newSequence(call, LATER, { list_id: list.id });
    await activeAre(sequence.id, [a.id]);
    await call('PATCH', `/sequences/${sequence.id}`, { status: 'paused' });
    await addMembers(list.id, [b.id]);
    assert.equal((await call('DELETE', `/crm/lists/${list.id}/members/${a.id}`)).status, 204);
    await sleep(TICK_MS * 10);
    assert.deepEqual(await activeContacts(sequence.id), [a.id]);
    await call('PATCH', `/sequences/${sequence.id}`, { status: 'active' });
    await activeAre(sequence.id, [b.id]);
  });

  test('two passes at once, and workers beside them: 300 contacts added at once are each enrolled once', async () => {
    const list = await newList();
    const sequence = await newSequence(call, LATER, { list_id: list.id });
    await eventually(async () => {
      const row = await t.platform.db
        .selectFrom('sequences')
        .select('list_synced_version')
        .where('id', '=', sequence.id)
        .executeTakeFirstOrThrow();
      return row.list_synced_version !== null;
    });
    const contacts = [];
    for (let i = 0; i < 300; i++) contacts.push(await newContact(call));
    await addMembers(
      list.id,
      contacts.map((c) => c.id),
    );
    const context = { db: t.platform.db, minuteMs: 60_000, batchSize: 50, resyncMs: RESYNC_MS };
    await Promise.all([followLists(context), followLists(context), followLists(context)]);
    const enrolled = () =>
      t.platform.db
        .selectFrom('sequence_enrollments')
        .select(['contact_id', 'status'])
        .where('sequence_id', '=', sequence.id)
        .execute();
    // A worker's pass may still be committing the last batch it took.
    await eventually(async () => (await enrolled()).length >= 300);
    await sleep(TICK_MS * 5);
    const all = await enrolled();
    assert.equal(all.length, 300);
    assert.equal(new Set(all.map((e) => e.contact_id)).size, 300);
    assert.ok(all.every((e) => e.status === 'active'));
    const events = await t.platform.db
      .selectFrom('events')
      .select('data')
      .where('type', '=', 'sequence.enrollment.created')
      .where('org_id', '=', tenant.orgId)
      .execute();
    const ofSequence = events.filter((e: any) => e.data.enrollment.sequence_id === sequence.id);
    assert.equal(ofSequence.length, 300, 'one event per contact');
  });

  test("tenancy: list_id must name a list of the caller's client; a bad one is a 400 and writes nothing", async () => {
    const otherCall = caller(t, other.client);
    const foreign = (await otherCall('POST', '/crm/lists', { name: 'Theirs' })).body.list;
    const created = await call('POST', '/sequences', { name: 'X', list_id: foreign.id });
    assert.equal(created.status, 400);
    assert.equal(created.body.error, 'validation_error');
    assert.equal(created.body.details.fields[0].field, 'list_id');
    const total = (await call('GET', '/sequences')).body.total;
    const sequence = await newSequence(call, LATER);
    const patched = await call('PATCH', `/sequences/${sequence.id}`, { list_id: crypto.randomUUID() });
    assert.equal(patched.status, 400);
    assert.equal(patched.body.details.fields[0].field, 'list_id');
    assert.equal((await call('GET', `/sequences/${sequence.id}`)).body.sequence.list_id, null);
    assert.equal((await call('GET', '/sequences')).body.total, total + 1);

    // Another client's contacts on another client's list never reach this client's sequence.
    const theirContact = await newContact(otherCall);
    await otherCall('POST', `/crm/lists/${foreign.id}/members`, { contact_ids: [theirContact.id] });
    const mine = await newList();
    const linked = await newSequence(call, LATER, { list_id: mine.id });
    const refused = await call('POST', `/crm/lists/${mine.id}/members`, { contact_ids: [theirContact.id] });
    assert.equal(refused.body.not_found, 1);
    await sleep(TICK_MS * 10);
    assert.deepEqual(await enrollments(linked.id), []);
  });

  test('deleting the list unlinks the sequence', async () => {
    const list = await newList();
    const sequence = await newSequence(call, LATER, { list_id: list.id });
    assert.equal((await call('DELETE', `/crm/lists/${list.id}`)).status, 204);
    assert.equal((await call('GET', `/sequences/${sequence.id}`)).body.sequence.list_id, null);
  });
});
