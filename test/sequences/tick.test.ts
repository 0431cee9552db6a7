import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sequenceTickContext } from '../../src/modules/sequences/jobs.ts';
import { runDueSteps } from '../../src/modules/sequences/tick.ts';
import { unsubscribeToken } from '../../src/modules/sequences/unsubscribe.ts';
import { unsubscribeKeys } from '../../src/modules/sequences/unsubscribe-routes.ts';
import { openDatabase } from '../../src/platform/db/pool.ts';
import { createEmailProvider } from '../../src/providers/email/index.ts';
import { type Call, caller, eventsOf } from '../crm/crm-client.ts';
import { buildTestApp, createTenant, sleep, type TestApp, type TestTenant } from '../helpers.ts';
import { createWebhook, type Receiver, startReceiver } from '../webhooks/receiver.ts';
import {
  claimDueEnrollments,
  enroll,
  eventually,
  newContact,
  newSequence,
  readEnrollment,
  simulatedEmails,
  stepSends,
} from './support.ts';

const TICK_MS = 100;
const MINUTE_MS = 600;
const LEASE_MS = 4000;

describe('the sequence tick: steps run once each, in order, on time', () => {
  let t: TestApp;
  let tenant: TestTenant;
  let call: Call;
  let receiver: Receiver;
  let running = 0;
  /** Workers keep running once started (the test app stops them): the first tests need none. */
  const workers = async (count: number) => {
    for (; running < count; running++) await t.startWorker();
  };

  before(async () => {
    t = await buildTestApp({
      SEQUENCE_TICK_MS: String(TICK_MS),
      SEQUENCE_MINUTE_MS: String(MINUTE_MS),
      SEQUENCE_LEASE_MS: String(LEASE_MS),
      OUTBOUND_ALLOW_PRIVATE: 'true',
    });
    tenant = await createTenant(t.app);
    call = caller(t, tenant.client);
    receiver = await startReceiver();
    await createWebhook(t, tenant.client, {
      url: `${receiver.url}/hook`,
      events: ['sequence.enrollment.paused', 'sequence.enrollment.completed', 'sequence.completed'],
    });
  });
  after(async () => {
    await t.close();
    await receiver.close();
  });

  const received = (type: string, enrollmentId: string) =>
    receiver.requests.filter((r) => r.body?.type === type && r.body.data.enrollment.id === enrollmentId);

  test('a killed worker: its claims are taken over once the lease is over, and each step is sent once', async () => {
    const sequence = await newSequence(call, [
      { kind: 'email', wait_minutes: 0, subject: 'One', body: 'First' },
    ]);
    const contacts = await Promise.all(Array.from({ length: 5 }, () => newContact(call)));
    const enrollments = [];
    for (const contact of contacts) enrollments.push(await enroll(call, sequence.id, contact.id));
    // The dead worker: it claimed every due enrollment and ran none.
    const started = Date.now();
    const claimed = await claimDueEnrollments(t.platform.db, LEASE_MS, 100);
    assert.equal(claimed.length, 5);
    // ... and had sent the first one's email before it died, without recording the step.
    await t.platform.providers.email.send({
      key: `sequence_step:${enrollments[0].id}:0`,
      to: contacts[0].email,
      subject: 'One',
      text: 'First',
    });
    await workers(1);
    await sleep(LEASE_MS / 4);
    const states = await Promise.all(enrollments.map((e) => readEnrollment(call, sequence.id, e.id)));
    // Meaningful only while the lease surely holds (a loaded machine may be slow to start the worker).
    if (Date.now() - started < LEASE_MS / 2)
      assert.deepEqual(
        states.map((e) => e.status),
        enrollments.map(() => 'active'),
        'not taken over while the lease holds',
      );
    for (const enrollment of enrollments)
      await eventually(
        async () => (await readEnrollment(call, sequence.id, enrollment.id)).status === 'completed',
      );
    assert.ok(Date.now() - started >= LEASE_MS - 100, 'not before the lease ran out');
    for (const [i, contact] of contacts.entries()) {
      assert.equal((await simulatedEmails(t, contact.email)).length, 1, `one email to contact ${i}`);
      assert.equal((await stepSends(t, enrollments[i].id)).length, 1);
    }
  });

  test('a three-step ladder runs in order, merge fields filled, waits honoured, then completes with both events', async () => {
    await workers(1);
    const sequence = await newSequence(call, [
      {
        kind: 'email',
        wait_minutes: 0,
        subject: 'Hi {{first_name}}',
        body: 'Hello {{full_name}} at {{company_name}}',
      },
      {
        kind: 'email',
        wait_minutes: 1,
        subject: 'Re: {{title|your role}}',
        body: 'Still there, {{first_name|friend}}?',
      },
      { kind: 'email', wait_minutes: 2, subject: 'Last one', body: 'Bye {{last_name}} ({{email}})' },
    ]);
    const contact = await newContact(call, {
      first_name: 'Ada',
      last_name: 'Lovelace',
      company_name: 'Engines',
    });
    const enrollment = await enroll(call, sequence.id, contact.id, { campaign: 'spring' });
    await eventually(
      async () => (await readEnrollment(call, sequence.id, enrollment.id)).status === 'completed',
      15_000,
    );
    const emails = await simulatedEmails(t, contact.email);
    assert.deepEqual(
      emails.map((e) => [e.subject, e.text.split('\n\n--\n')[0]]),
      [
        ['Hi Ada', 'Hello Ada Lovelace at Engines'],
        ['Re: your role', 'Still there, Ada?'],
        ['Last one', `Bye Lovelace (${contact.email})`],
      ],
    );
    const sends = await stepSends(t, enrollment.id);
    assert.deepEqual(
      sends.map((s) => s.step_index),
      [0, 1, 2],
    );
    const gaps = [
      sends[1].sent_at.getTime() - sends[0].sent_at.getTime(),
      sends[2].sent_at.getTime() - sends[1].sent_at.getTime(),
    ];
    assert.ok(gaps[0] >= MINUTE_MS, `step 1 waits one minute after step 0 (${gaps[0]} ms)`);
    assert.ok(gaps[1] >= 2 * MINUTE_MS, `step 2 waits two minutes after step 1 (${gaps[1]} ms)`);

    const done = await readEnrollment(call, sequence.id, enrollment.id);
    assert.equal(done.current_step, 3);
    assert.ok(done.completed_at);
    assert.ok(done.last_step_at);
    for (const type of ['sequence.enrollment.completed', 'sequence.completed']) {
      const [event] = await eventually(async () => {
        const got = received(type, enrollment.id);
        return got.length > 0 && got;
      });
      assert.equal(event.body.data.enrollment.status, 'completed');
      assert.deepEqual(event.body.metadata, { campaign: 'spring' });
      assert.equal(received(type, enrollment.id).length, 1);
    }
    const timeline = (await call('GET', `/crm/activities?contact_id=${contact.id}`)).body.data;
    assert.deepEqual(timeline.map((a: any) => [a.activity_type, a.direction, a.subject]).sort(), [
      ['email', 'outbound', 'Hi Ada'],
      ['email', 'outbound', 'Last one'],
      ['email', 'outbound', 'Re: your role'],
    ]);
  });

  test("every email carries a working one-click List-Unsubscribe; using it cancels the contact's enrollments", async () => {
    await workers(1);
    const sequence = await newSequence(call, [
      { kind: 'email', wait_minutes: 0, subject: 'One', body: 'First' },
      { kind: 'email', wait_minutes: 60, subject: 'Two', body: 'Second' },
    ]);
    const another = await newSequence(call, [{ kind: 'email', wait_minutes: 60, subject: 'x', body: 'y' }]);
    const contact = await newContact(call);
    const enrollment = await enroll(call, sequence.id, contact.id, { via: 'unsubscribe-test' });
    const other = await enroll(call, another.id, contact.id);
    const [mail] = await eventually(async () => {
      const got = await simulatedEmails(t, contact.email);
      return got.length > 0 && got;
    });
    assert.equal(mail.headers['List-Unsubscribe-Post'], 'List-Unsubscribe=One-Click');
    const link = /^<(.+)>$/.exec(mail.headers['List-Unsubscribe'])?.[1] as string;
    assert.ok(link, 'List-Unsubscribe names a link');
    assert.ok(mail.text.includes(link), 'the link is in the body too');
    const path = new URL(link).pathname;

    const page = await t.app.inject({ method: 'GET', url: path });
    assert.equal(page.statusCode, 200);
    assert.match(page.body, /<form method="post">/);
    assert.equal(
      (await readEnrollment(call, sequence.id, enrollment.id)).status,
      'active',
      'a GET changes nothing',
    );

    const forged = await t.app.inject({
      method: 'POST',
      url: `${path.slice(0, -3)}abc`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'List-Unsubscribe=One-Click',
    });
    assert.equal(forged.statusCode, 404);
    assert.equal(forged.json().error, 'not_found');

    const oneClick = await t.app.inject({
      method: 'POST',
      url: path,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'List-Unsubscribe=One-Click',
    });
    assert.equal(oneClick.statusCode, 200);
    for (const [seq, id] of [
      [sequence.id, enrollment.id],
      [another.id, other.id],
    ]) {
      const row = await readEnrollment(call, seq, id);
      assert.equal(row.status, 'cancelled');
      assert.equal(row.paused_reason, 'unsubscribed');
    }
    const unenrolled = (await eventsOf(call, 'sequence.contact_unenrolled')).filter(
      (e) => e.data.enrollment.contact_id === contact.id,
    );
    assert.equal(unenrolled.length, 2);
    assert.deepEqual(unenrolled.find((e) => e.data.enrollment.id === enrollment.id).metadata, {
      via: 'unsubscribe-test',
    });
    // Again: nothing more to do, still 200.
    const again = await t.app.inject({
      method: 'POST',
      url: path,
      payload: 'List-Unsubscribe=One-Click',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    assert.equal(again.statusCode, 200);

    // The address stays unsubscribed for the client: a new enrollment's email step pauses as opted_out.
    const later = await enroll(call, another.id, contact.id);
    await call('PATCH', `/sequences/${another.id}/enrollments/${later.id}`, { status: 'active' });
    await t.platform.db
      .updateTable('sequence_enrollments')
      .set({ next_run_at: new Date() })
      .where('id', '=', later.id)
      .execute();
    const paused = await eventually(async () => {
      const row = await readEnrollment(call, another.id, later.id);
      return row.status === 'paused' && row;
    });
    assert.equal(paused.paused_reason, 'opted_out');
    assert.equal((await simulatedEmails(t, contact.email)).length, 1);
  });

  test('a step that cannot be sent pauses the enrollment with the reason, never skips it', async () => {
    await workers(1);
    const sequence = await newSequence(call, [
      { kind: 'email', wait_minutes: 0, subject: 'Hi', body: 'Hello' },
      { kind: 'email', wait_minutes: 0, subject: 'Again', body: 'Hello again' },
    ]);
    const { status, body } = await call('POST', '/crm/contacts', {
      phone: '+14155550999',
      first_name: 'NoMail',
    });
    assert.equal(status, 201);
    const enrollment = await enroll(call, sequence.id, body.contact.id, { k: 'v' });
    const paused = await eventually(async () => {
      const row = await readEnrollment(call, sequence.id, enrollment.id);
      return row.status === 'paused' && row;
    });
    assert.equal(paused.paused_reason, 'missing_email');
    assert.equal(paused.current_step, 0, 'the step is not skipped');
    assert.equal((await stepSends(t, enrollment.id)).length, 0);
    const event = await eventually(async () => received('sequence.enrollment.paused', enrollment.id)[0]);
    assert.equal(event.body.data.enrollment.paused_reason, 'missing_email');
    assert.deepEqual(event.body.metadata, { k: 'v' });
  });

  test('a paused sequence advances nobody until it is active again; DELETE stops in-flight enrollments', async () => {
    await workers(1);
    const sequence = await newSequence(call, [
      { kind: 'email', wait_minutes: 0, subject: 'One', body: 'First' },
      { kind: 'email', wait_minutes: 1, subject: 'Two', body: 'Second' },
    ]);
    await call('PATCH', `/sequences/${sequence.id}`, { status: 'paused' });
    const contact = await newContact(call);
    const enrollment = await enroll(call, sequence.id, contact.id);
    await sleep(TICK_MS * 5);
    assert.equal((await simulatedEmails(t, contact.email)).length, 0, 'nothing while paused');
    await call('PATCH', `/sequences/${sequence.id}`, { status: 'active' });
    await eventually(async () => (await simulatedEmails(t, contact.email)).length === 1);

    assert.equal((await call('DELETE', `/sequences/${sequence.id}`)).status, 204);
    const row = await readEnrollment(call, sequence.id, enrollment.id);
    assert.equal(row.status, 'paused');
    assert.equal(row.paused_reason, 'sequence_archived');
    await sleep(MINUTE_MS * 2);
    assert.equal((await simulatedEmails(t, contact.email)).length, 1, 'nothing sent after the DELETE');
    assert.equal((await readEnrollment(call, sequence.id, enrollment.id)).current_step, 1);
  });

  test('editing steps does not restart enrollments; one past the new end completes', async () => {
    await workers(1);
    const three = [
      { kind: 'email' as const, wait_minutes: 0, subject: 'One', body: 'First' },
      { kind: 'email' as const, wait_minutes: 1, subject: 'Two', body: 'Second' },
      { kind: 'email' as const, wait_minutes: 1, subject: 'Three', body: 'Third' },
    ];
    const sequence = await newSequence(call, three);
    const contact = await newContact(call);
    const enrollment = await enroll(call, sequence.id, contact.id);
    await eventually(async () => (await readEnrollment(call, sequence.id, enrollment.id)).current_step === 1);
    await call('PATCH', `/sequences/${sequence.id}`, { steps: [three[0]] });
    const done = await eventually(async () => {
      const row = await readEnrollment(call, sequence.id, enrollment.id);
      return row.status === 'completed' && row;
    });
    assert.equal(done.current_step, 1);
    assert.deepEqual(
      (await simulatedEmails(t, contact.email)).map((e) => e.subject),
      ['One'],
    );
  });

  test('two workers at once, many enrollments: every step sent exactly once', async () => {
    await workers(2);
    const sequence = await newSequence(call, [
      { kind: 'email', wait_minutes: 0, subject: 'One', body: 'First' },
      { kind: 'email', wait_minutes: 0, subject: 'Two', body: 'Second' },
    ]);
    const contacts = await Promise.all(Array.from({ length: 60 }, () => newContact(call)));
    const ids: string[] = [];
    for (const contact of contacts) ids.push((await enroll(call, sequence.id, contact.id)).id);
    await eventually(async () => {
      const { data } = (await call('GET', `/sequences/${sequence.id}/enrollments?status=completed&limit=200`))
        .body;
      return data.length === ids.length;
    }, 30_000);
    const sends = await t.platform.db
      .selectFrom('sequence_step_sends')
      .select(['enrollment_id', 'step_index'])
      .where('enrollment_id', 'in', ids)
      .execute();
    assert.equal(sends.length, ids.length * 2, 'each (enrollment, step) recorded once');
    const mails = await t.platform.db
      .selectFrom('email_messages')
      .select('key')
      .where(
        'to_address',
        'in',
        contacts.map((c) => c.email),
      )
      .execute();
    assert.equal(mails.length, ids.length * 2, 'each step emailed once');
  });

  test('a one-click POST that arrives before the tick has recorded the step waits for it, then unsubscribes', async () => {
    // Due in hours: no worker takes it; this test plays the tick that is sending step 0.
    const sequence = await newSequence(call, [
      { kind: 'email', wait_minutes: 10_000, subject: 'S', body: 'B' },
    ]);
    const contact = await newContact(call);
    const enrollment = await enroll(call, sequence.id, contact.id);
    const token = unsubscribeToken(unsubscribeKeys(t.platform), enrollment.id, 0);
    const tick = await t.database.pool.connect();
    try {
      await tick.query('BEGIN');
      await tick.query('SELECT 1 FROM sequence_enrollments WHERE id = $1 FOR UPDATE', [enrollment.id]);
      await tick.query(
        `INSERT INTO sequence_step_sends (enrollment_id, step_index, org_id, client_id, kind, cause_key, message_ref, to_address)
         VALUES ($1, 0, $2, $3, 'email', $4, 'm', $5)`,
        [enrollment.id, tenant.orgId, tenant.clientId, `sequence_step:${enrollment.id}:0`, contact.email],
      );
      let answered = false;
      const click = t.app
        .inject({
          method: 'POST',
          url: `/unsubscribe/${token}`,
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          payload: 'List-Unsubscribe=One-Click',
        })
        .finally(() => {
          answered = true;
        });
      await sleep(300);
      assert.equal(answered, false, 'the POST waits for the sending tick');
      await tick.query('COMMIT');
      assert.equal((await click).statusCode, 200);
    } finally {
      tick.release();
    }
    assert.equal((await readEnrollment(call, sequence.id, enrollment.id)).status, 'cancelled');
  });
});

describe('the sequence tick in a process with a small pool', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp({ SEQUENCE_MINUTE_MS: String(MINUTE_MS) });
  });
  after(async () => {
    await t.close();
  });

  test('steps never hold every connection while each waits for a second one: with five, none fails', async () => {
    const call = caller(t, (await createTenant(t.app)).client);
    const sequence = await newSequence(call, [
      { kind: 'email', wait_minutes: 0, subject: 'One', body: 'First' },
    ]);
    const ids: string[] = [];
    for (let i = 0; i < 24; i++) ids.push((await enroll(call, sequence.id, (await newContact(call)).id)).id);

    // The worker of a process started with DATABASE_POOL_MAX=5, the least it takes (an email step holds two).
    const small = openDatabase(t.database.url, { max: 5, connectTimeoutMs: 2000 });
    const platform = {
      ...t.platform,
      database: small,
      db: small.db,
      config: { ...t.config, databasePoolMax: 5 },
      providers: { ...t.platform.providers, email: await createEmailProvider(t.config, small.db) },
    };
    try {
      const failures: unknown[] = [];
      const log = Object.assign(Object.create(t.platform.log), {
        warn: (fields: unknown) => failures.push(fields),
      });
      await runDueSteps({ ...sequenceTickContext(platform), log });
      assert.deepEqual(failures, [], 'no step failed waiting for a connection');
      const { rows } = await t.database.pool.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM sequence_step_sends WHERE enrollment_id = ANY($1::uuid[])',
        [ids],
      );
      assert.equal(rows[0].n, ids.length);
    } finally {
      await platform.providers.email.close();
      await small.close();
    }
  });
});
