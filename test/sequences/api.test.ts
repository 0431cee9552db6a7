import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Call, caller, eventsOf } from '../crm/crm-client.ts';
import { buildTestApp, createTenant, type TestApp, type TestTenant } from '../helpers.ts';
import { enroll, newContact, newSequence, type StepInput } from './support.ts';

const email = {
  kind: 'email',
  wait_minutes: 0,
  subject: 'Hi {{first_name|there}}',
  body: 'Hello {{full_name}}',
};
const sms: StepInput = { kind: 'sms', wait_minutes: 5, body: 'Hi {{first_name}} from {{company_name|us}}' };

describe('sequences and enrollments through the API', () => {
  let t: TestApp;
  let tenant: TestTenant;
  let other: TestTenant;
  let call: Call;

  before(async () => {
    // No worker runs here: enrollments stay where the API put them.
    t = await buildTestApp();
    tenant = await createTenant(t.app);
    other = await createTenant(t.app);
    call = caller(t, tenant.client);
  });
  after(() => t.close());

  test('create, read, list with total, update and archive a sequence', async () => {
    const created = await call(
      'POST',
      '/sequences',
      { name: 'Welcome', description: 'New leads', steps: [email, sms] },
      { 'idempotency-key': 'seq-create-1' },
    );
    assert.equal(created.status, 201);
    const sequence = created.body.sequence;
    assert.equal(sequence.status, 'draft', 'draft by default');
    assert.deepEqual(sequence.steps, [email, sms]);
    assert.equal(sequence.client_id, tenant.clientId);

    const replay = await call(
      'POST',
      '/sequences',
      { name: 'Welcome', description: 'New leads', steps: [email, sms] },
      { 'idempotency-key': 'seq-create-1' },
    );
    assert.equal(replay.status, 201);
    assert.equal(replay.body.sequence.id, sequence.id, 'the Idempotency-Key replays the first response');

    assert.deepEqual((await call('GET', `/sequences/${sequence.id}`)).body.sequence, sequence);
    const listed = await call('GET', '/sequences?limit=1');
    assert.equal(listed.status, 200);
    assert.equal(listed.body.total, 1);
    assert.equal(listed.body.data[0].id, sequence.id);
    assert.deepEqual(listed.body.data[0].steps, [email, sms], 'each row with its steps');

    const patched = await call('PATCH', `/sequences/${sequence.id}`, { status: 'active', name: 'Welcome 2' });
    assert.equal(patched.status, 200);
    assert.equal(patched.body.sequence.status, 'active');
    assert.equal(patched.body.sequence.name, 'Welcome 2');
    assert.equal((await call('GET', '/sequences?status=draft')).body.total, 0);
    assert.equal((await call('GET', '/sequences?status=active')).body.total, 1);

    assert.equal((await call('DELETE', `/sequences/${sequence.id}`)).status, 204);
    assert.equal((await call('GET', `/sequences/${sequence.id}`)).body.sequence.status, 'archived');
  });

  test('bad input is a 400 with the error envelope, and changes nothing', async () => {
    const before = (await call('GET', '/sequences')).body.total;
    const cases: [unknown, string][] = [
      [{ name: '' }, 'validation_error'],
      [{ name: 'x'.repeat(201) }, 'validation_error'],
      [{ name: 'ok', status: 'archived' }, 'validation_error'],
      [{ name: 'ok', steps: [{ kind: 'fax', wait_minutes: 0, body: 'x' }] }, 'validation_error'],
      [{ name: 'ok', steps: [{ ...sms, wait_minutes: 525_601 }] }, 'validation_error'],
      [{ name: 'ok', steps: [{ ...sms, wait_minutes: -1 }] }, 'validation_error'],
      [{ name: 'ok', steps: Array.from({ length: 51 }, () => sms) }, 'validation_error'],
      [{ name: 'ok', steps: [{ kind: 'email', wait_minutes: 0, body: 'no subject' }] }, 'validation_error'],
      [{ name: 'ok', steps: [{ ...sms, subject: 'not on sms' }] }, 'validation_error'],
      [{ name: 'ok', steps: [{ ...sms, body: 'x'.repeat(1601) }] }, 'validation_error'],
      [{ name: 'ok', extra: true }, 'validation_error'],
    ];
    for (const [body, code] of cases) {
      const response = await call('POST', '/sequences', body);
      assert.equal(response.status, 400, JSON.stringify(body).slice(0, 80));
      assert.equal(response.body.error, code);
      assert.equal(typeof response.body.message, 'string');
    }
    assert.equal((await call('GET', '/sequences')).body.total, before);
  });

  test('an unknown merge field is a 400 naming the step and the field, on create and on update', async () => {
    const response = await call('POST', '/sequences', {
      name: 'Typos',
      steps: [sms, { ...email, subject: 'Hi {{frist_name}}', body: '{{nickname|you}} and {{email}}' }],
    });
    assert.equal(response.status, 400);
    assert.equal(response.body.error, 'validation_error');
    const fields = response.body.details.fields.map((f: { field: string }) => f.field);
    assert.deepEqual(fields, ['steps[1].body', 'steps[1].subject']);
    assert.match(response.body.message, /\{\{nickname\}\}/);
    assert.match(response.body.message, /\{\{frist_name\}\}/);

    const sequence = await newSequence(call, [sms]);
    const patch = await call('PATCH', `/sequences/${sequence.id}`, {
      steps: [{ ...sms, body: 'Hi {{phone}}' }],
    });
    assert.equal(patch.status, 400);
    assert.equal(patch.body.details.fields[0].field, 'steps[0].body');
    assert.deepEqual((await call('GET', `/sequences/${sequence.id}`)).body.sequence.steps, [sms]);
  });

  test('enrolling: 201 once, then 200 with the same row; concurrent enrollments make one row', async () => {
    const sequence = await newSequence(call, [sms]);
    const contact = await newContact(call, { first_name: 'Ada' });
    const first = await call('POST', `/sequences/${sequence.id}/enrollments`, {
      contact_id: contact.id,
      metadata: { campaign: 'spring', n: 1 },
    });
    assert.equal(first.status, 201);
    assert.equal(first.body.idempotent, false);
    const enrollment = first.body.enrollment;
    assert.equal(enrollment.status, 'active');
    assert.equal(enrollment.current_step, 0);
    assert.equal(enrollment.paused_reason, null);
    assert.deepEqual(enrollment.metadata, { campaign: 'spring', n: 1 });
    const due = Date.parse(enrollment.next_run_at) - Date.parse(enrollment.enrolled_at);
    assert.ok(Math.abs(due - 5 * 60_000) < 1000, 'the first step is due after its wait_minutes');

    const again = await call('POST', `/sequences/${sequence.id}/enrollments`, { contact_id: contact.id });
    assert.equal(again.status, 200);
    assert.equal(again.body.idempotent, true);
    assert.equal(again.body.enrollment.id, enrollment.id);

    const racer = await newContact(call);
    const results = await Promise.all(
      Array.from({ length: 8 }, () =>
        call('POST', `/sequences/${sequence.id}/enrollments`, { contact_id: racer.id }),
      ),
    );
    assert.deepEqual(results.map((r) => r.status).sort(), [200, 200, 200, 200, 200, 200, 200, 201]);
    assert.equal(new Set(results.map((r) => r.body.enrollment.id)).size, 1);
    const rows = await t.platform.db
      .selectFrom('sequence_enrollments')
      .select('id')
      .where('contact_id', '=', racer.id)
      .execute();
    assert.equal(rows.length, 1);

    const created = await eventsOf(call, 'sequence.enrollment.created');
    const mine = created.find((e) => e.data.enrollment.id === enrollment.id);
    assert.ok(mine, 'sequence.enrollment.created');
    assert.deepEqual(mine.metadata, { campaign: 'spring', n: 1 }, 'the event echoes the metadata');
    assert.equal(created.filter((e) => e.data.enrollment.contact_id === racer.id).length, 1);
  });

  test('list, read and control enrollments: pause, resume, cancel; a finished one is final', async () => {
    const sequence = await newSequence(call, [sms]);
    const contact = await newContact(call);
    const enrollment = await enroll(call, sequence.id, contact.id, { source: 'test' });
    const path = `/sequences/${sequence.id}/enrollments/${enrollment.id}`;

    const paused = await call('PATCH', path, { status: 'paused' });
    assert.equal(paused.status, 200);
    assert.equal(paused.body.enrollment.status, 'paused');
    assert.equal(paused.body.enrollment.paused_reason, 'manual');
    const pausedEvent = (await eventsOf(call, 'sequence.enrollment.paused')).find(
      (e) => e.data.enrollment.id === enrollment.id,
    );
    assert.equal(pausedEvent.data.enrollment.paused_reason, 'manual');
    assert.deepEqual(pausedEvent.metadata, { source: 'test' });

    assert.equal(
      (await call('GET', `/sequences/${sequence.id}/enrollments?status=paused`)).body.data.length,
      1,
    );
    assert.equal(
      (await call('GET', `/sequences/${sequence.id}/enrollments?status=active`)).body.data.length,
      0,
    );

    const resumed = await call('PATCH', path, { status: 'active' });
    assert.equal(resumed.body.enrollment.status, 'active');
    assert.equal(resumed.body.enrollment.paused_reason, null);
    assert.ok(Date.parse(resumed.body.enrollment.next_run_at) <= Date.now(), 'due on the next tick');

    const cancelled = await call('PATCH', path, { status: 'cancelled' });
    assert.equal(cancelled.body.enrollment.status, 'cancelled');
    const unenrolled = (await eventsOf(call, 'sequence.contact_unenrolled')).filter(
      (e) => e.data.enrollment.id === enrollment.id,
    );
    assert.equal(unenrolled.length, 1);
    assert.equal(unenrolled[0].data.reason, 'manual');

    const again = await call('PATCH', path, { status: 'active' });
    assert.equal(again.status, 409);
    assert.equal(again.body.error, 'invalid_transition');
    assert.equal((await call('PATCH', path, { status: 'bogus' })).status, 400);
    assert.equal((await call('GET', path)).body.enrollment.status, 'cancelled');

    // Cancelled: the contact may be enrolled afresh.
    const fresh = await call('POST', `/sequences/${sequence.id}/enrollments`, { contact_id: contact.id });
    assert.equal(fresh.status, 201);
    assert.notEqual(fresh.body.enrollment.id, enrollment.id);
  });

  test('archiving pauses active enrollments; enrolling into an archived sequence is 409', async () => {
    const sequence = await newSequence(call, [sms]);
    const a = await enroll(call, sequence.id, (await newContact(call)).id, { who: 'a' });
    const b = await enroll(call, sequence.id, (await newContact(call)).id);
    await call('PATCH', `/sequences/${sequence.id}/enrollments/${b.id}`, { status: 'cancelled' });
    assert.equal((await call('DELETE', `/sequences/${sequence.id}`)).status, 204);
    const afterA = (await call('GET', `/sequences/${sequence.id}/enrollments/${a.id}`)).body.enrollment;
    assert.equal(afterA.status, 'paused');
    assert.equal(afterA.paused_reason, 'sequence_archived');
    assert.equal(
      (await call('GET', `/sequences/${sequence.id}/enrollments/${b.id}`)).body.enrollment.status,
      'cancelled',
    );
    const late = await call('POST', `/sequences/${sequence.id}/enrollments`, {
      contact_id: (await newContact(call)).id,
    });
    assert.equal(late.status, 409);
    assert.equal(late.body.error, 'sequence_archived');
    const resume = await call('PATCH', `/sequences/${sequence.id}/enrollments/${a.id}`, { status: 'active' });
    assert.equal(resume.status, 409);
    assert.equal(resume.body.error, 'sequence_archived');
  });

  test("tenants are isolated: another tenant's sequence is 404, its contact a 400", async () => {
    const mine = await newSequence(call, [sms]);
    const otherCall = caller(t, other.client);
    const theirs = await newSequence(otherCall, [sms]);
    const theirContact = await newContact(otherCall);

    for (const [method, url, body] of [
      ['GET', `/sequences/${theirs.id}`],
      ['PATCH', `/sequences/${theirs.id}`, { name: 'mine now' }],
      ['DELETE', `/sequences/${theirs.id}`],
      ['GET', `/sequences/${theirs.id}/enrollments`],
      ['POST', `/sequences/${theirs.id}/enrollments`, { contact_id: (await newContact(call)).id }],
    ] as const) {
      const response = await call(method, url, body);
      assert.equal(response.status, 404, `${method} ${url}`);
      assert.equal(response.body.error, 'not_found');
    }
    const foreign = await call('POST', `/sequences/${mine.id}/enrollments`, { contact_id: theirContact.id });
    assert.equal(foreign.status, 400);
    assert.equal(foreign.body.error, 'validation_error');
    assert.equal(foreign.body.details.fields[0].field, 'contact_id');
    assert.equal(
      (await call('GET', '/sequences')).body.data.some((s: any) => s.id === theirs.id),
      false,
    );
    // The agency key acting as itself works on its house client: the client's sequence is not there.
    const agency = caller(t, tenant.agency);
    assert.equal((await agency('GET', `/sequences/${mine.id}`)).status, 404);
    assert.equal((await caller(t, tenant.agencyAsClient)('GET', `/sequences/${mine.id}`)).status, 200);
    assert.equal((await otherCall('GET', `/sequences/${theirs.id}`)).body.sequence.name, theirs.name);
  });

  test('unknown ids are 404; a malformed id is 400', async () => {
    const sequence = await newSequence(call, [sms]);
    const missing = '0190a0a0-0000-7000-8000-000000000000';
    assert.equal((await call('GET', `/sequences/${missing}`)).status, 404);
    assert.equal((await call('GET', `/sequences/${sequence.id}/enrollments/${missing}`)).status, 404);
    assert.equal((await call('GET', '/sequences/not-a-uuid')).status, 400);
    const badContact = await call('POST', `/sequences/${sequence.id}/enrollments`, { contact_id: 'nope' });
    assert.equal(badContact.status, 400);
  });
});
