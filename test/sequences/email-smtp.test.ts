import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Call, caller } from '../crm/crm-client.ts';
import { buildTestApp, createTenant, type TestApp, type TestTenant } from '../helpers.ts';
import { header, type SmtpReceiver, startSmtpReceiver } from '../providers/smtp-receiver.ts';
import { enroll, eventually, newContact, newSequence, readEnrollment } from './support.ts';

describe('sequence emails through a real SMTP server (EMAIL_PROVIDER=smtp)', () => {
  let t: TestApp;
  let tenant: TestTenant;
  let call: Call;
  let receiver: SmtpReceiver;

  before(async () => {
    receiver = await startSmtpReceiver({ user: 'mailer', password: 'secret' });
    t = await buildTestApp({
      EMAIL_PROVIDER: 'smtp',
      SMTP_URL: receiver.url,
      EMAIL_FROM: 'Acme Dental <hello@acme.test>',
      SEQUENCE_TICK_MS: '100',
      SEQUENCE_MINUTE_MS: '300',
      SEQUENCE_LEASE_MS: '3000',
      PUBLIC_BASE_URL: 'https://api.acme.test',
    });
    tenant = await createTenant(t.app);
    call = caller(t, tenant.client);
    // Two workers on one database from the start.
    await t.startWorker();
    await t.startWorker();
  });
  after(async () => {
    await t.close();
    await receiver.close();
  });

  test('each step arrives once, with merge fields, headers and a one-click unsubscribe that works', async () => {
    const sequence = await newSequence(call, [
      {
        kind: 'email',
        wait_minutes: 0,
        subject: 'Hi {{first_name}}',
        body: 'Welcome to {{company_name|us}}.',
      },
      { kind: 'email', wait_minutes: 1, subject: 'Checking in', body: 'Any questions, {{first_name}}?' },
    ]);
    const contacts = await Promise.all(
      Array.from({ length: 30 }, (_, i) => newContact(call, { first_name: `Lead${i}` })),
    );
    const enrollments = [];
    for (const contact of contacts) enrollments.push(await enroll(call, sequence.id, contact.id));
    await eventually(async () => {
      const { data } = (await call('GET', `/sequences/${sequence.id}/enrollments?status=completed&limit=200`))
        .body;
      return data.length === contacts.length;
    }, 60_000);

    assert.equal(receiver.mail.length, contacts.length * 2, 'two workers, each step delivered once');
    const ids = receiver.mail.map((mail) => header(mail.raw, 'Message-ID'));
    assert.equal(new Set(ids).size, ids.length, 'no Message-ID twice');
    for (const [i, contact] of contacts.entries()) {
      const mine = receiver.mail.filter((mail) => mail.rcptTo.includes(contact.email));
      assert.deepEqual(
        mine.map((mail) => header(mail.raw, 'Subject')),
        [`Hi Lead${i}`, 'Checking in'],
      );
      assert.match(mine[0].raw, /Welcome to us\./);
      assert.equal(header(mine[0].raw, 'From'), 'Acme Dental <hello@acme.test>');
      assert.equal(header(mine[0].raw, 'List-Unsubscribe-Post'), 'List-Unsubscribe=One-Click');
      assert.match(
        header(mine[0].raw, 'List-Unsubscribe') ?? '',
        /^<https:\/\/api\.acme\.test\/unsubscribe\/[^>]+>$/,
      );
    }

    // A mail client's one-click POST to the link of the first contact's last email.
    const last = receiver.mail.filter((mail) => mail.rcptTo.includes(contacts[0].email))[1];
    const link = /^<(.+)>$/.exec(header(last.raw, 'List-Unsubscribe') ?? '')?.[1] as string;
    const later = await newSequence(call, [{ kind: 'email', wait_minutes: 30, subject: 'x', body: 'y' }]);
    const pending = await enroll(call, later.id, contacts[0].id);
    const posted = await t.app.inject({
      method: 'POST',
      url: new URL(link).pathname,
      headers: { 'content-type': 'multipart/form-data; boundary=b' },
      payload: '--b\r\nContent-Disposition: form-data; name="List-Unsubscribe"\r\n\r\nOne-Click\r\n--b--\r\n',
    });
    assert.equal(posted.statusCode, 200);
    const cancelled = await readEnrollment(call, later.id, pending.id);
    assert.equal(cancelled.status, 'cancelled');
    assert.equal(cancelled.paused_reason, 'unsubscribed');
  });

  test('a refused recipient pauses the enrollment (email_rejected) instead of skipping the step', async () => {
    receiver.rcptVerdict = (address) =>
      address.startsWith('lead-') && address.includes('refuse')
        ? { accept: false, code: 550, message: 'No such user' }
        : { accept: true };
    const sequence = await newSequence(call, [
      { kind: 'email', wait_minutes: 0, subject: 'Hi', body: 'Hello' },
    ]);
    const { body } = await call('POST', '/crm/contacts', { email: 'lead-refuse@example.test' });
    const enrollment = await enroll(call, sequence.id, body.contact.id);
    const paused = await eventually(async () => {
      const row = await readEnrollment(call, sequence.id, enrollment.id);
      return row.status === 'paused' && row;
    }, 15_000);
    assert.equal(paused.paused_reason, 'email_rejected');
    assert.equal(paused.current_step, 0);
  });
});
