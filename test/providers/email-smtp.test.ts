import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { sql } from 'kysely';
import { loadConfig } from '../../src/config.ts';
import { freePort } from '../../src/platform/db/embedded.ts';
import { type DatabaseHandle, openDatabase } from '../../src/platform/db/pool.ts';
import {
  createEmailProvider,
  EmailDeferredError,
  type EmailProvider,
  EmailRejectedError,
  type OutboundEmail,
} from '../../src/providers/email/index.ts';
import { createTestDatabase } from '../helpers.ts';
import { header, type SmtpReceiver, startSmtpReceiver } from './smtp-receiver.ts';

const UNSUBSCRIBE =
  '<https://api.agency.test/unsubscribe/tok_123>, <mailto:unsubscribe@agency.test?subject=tok_123>';

function email(overrides: Partial<OutboundEmail> = {}): OutboundEmail {
  return {
    key: 'enrollment:0190-a:step:1',
    to: 'ada@example.test',
    subject: 'Following up on Tuesday',
    text: 'Hi Ada, are you free on Tuesday?',
    html: '<p>Hi Ada, are you free on <b>Tuesday</b>?</p>',
    headers: { 'List-Unsubscribe': UNSUBSCRIBE, 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' },
    ...overrides,
  };
}

describe('SMTP email provider against a real SMTP server', () => {
  let database: DatabaseHandle;
  let drop: () => Promise<void>;
  let receiver: SmtpReceiver;
  const providers: EmailProvider[] = [];

  const smtp = async (url = receiver.url, from?: string) => {
    const provider = await createEmailProvider(
      loadConfig({ EMAIL_PROVIDER: 'smtp', SMTP_URL: url, ...(from ? { EMAIL_FROM: from } : {}) }),
      database.db,
    );
    providers.push(provider);
    return provider;
  };
  const recorded = () =>
    database.db.selectFrom('email_messages').select(['key', 'status', 'provider']).orderBy('key').execute();

  before(async () => {
    const testDb = await createTestDatabase();
    drop = testDb.drop;
    database = openDatabase(testDb.url, { max: 10 });
    receiver = await startSmtpReceiver({ user: 'mailer', password: 's3cret' });
  });
  beforeEach(async () => {
    receiver.mail.length = 0;
    receiver.rcptVerdict = () => ({ accept: true });
    receiver.dataVerdict = () => ({ accept: true });
    receiver.dataDelayMs = 0;
    await database.db.deleteFrom('email_messages').execute();
  });
  after(async () => {
    for (const provider of providers) await provider.close();
    await receiver.close();
    await database.close();
    await drop();
  });

  it('delivers the message with its headers, both bodies and the envelope recipient, logged in with SMTP_URL', async () => {
    const result = await (await smtp(receiver.url, 'Acme Agency <hello@acme.test>')).send(email());
    assert.equal(result.sent, true);
    assert.match(result.messageId, /^<[0-9a-f]{40}@acme\.test>$/);
    assert.equal(receiver.mail.length, 1);
    const [mail] = receiver.mail;
    assert.equal(mail.user, 'mailer');
    assert.equal(mail.mailFrom, 'hello@acme.test');
    assert.deepEqual(mail.rcptTo, ['ada@example.test']);
    assert.equal(header(mail.raw, 'Message-ID'), result.messageId);
    assert.equal(header(mail.raw, 'From'), 'Acme Agency <hello@acme.test>');
    assert.equal(header(mail.raw, 'To'), 'ada@example.test');
    assert.equal(header(mail.raw, 'Subject'), 'Following up on Tuesday');
    assert.equal(header(mail.raw, 'List-Unsubscribe'), UNSUBSCRIBE);
    assert.equal(header(mail.raw, 'List-Unsubscribe-Post'), 'List-Unsubscribe=One-Click');
    assert.match(header(mail.raw, 'Content-Type')!, /^multipart\/alternative/);
    assert.ok(mail.raw.includes('Hi Ada, are you free on Tuesday?'));
    assert.ok(mail.raw.includes('<p>Hi Ada, are you free on <b>Tuesday</b>?</p>'));
    assert.deepEqual(await recorded(), [
      { key: 'enrollment:0190-a:step:1', status: 'sent', provider: 'smtp' },
    ]);
  });

  it('sends from EMAIL_FROM by default, a plain-text email when there is no html', async () => {
    await (await smtp()).send(email({ html: undefined, headers: undefined }));
    const [mail] = receiver.mail;
    assert.equal(header(mail.raw, 'From'), 'Agency Platform <no-reply@localhost>');
    assert.equal(mail.mailFrom, 'no-reply@localhost');
    assert.match(header(mail.raw, 'Content-Type')!, /^text\/plain/);
    assert.equal(header(mail.raw, 'List-Unsubscribe'), null);
  });

  it('sends a key once: a repeat answers sent: false with the same Message-ID and sends nothing', async () => {
    const provider = await smtp();
    const first = await provider.send(email());
    const second = await provider.send(email());
    const fromAnotherProcess = await (await smtp()).send(email());
    assert.deepEqual(second, { messageId: first.messageId, sent: false });
    assert.deepEqual(fromAnotherProcess, { messageId: first.messageId, sent: false });
    assert.equal(receiver.mail.length, 1);
  });

  it('sends a key once when two workers send it at the same moment', async () => {
    receiver.dataDelayMs = 300;
    const outcomes = await Promise.allSettled([(await smtp()).send(email()), (await smtp()).send(email())]);
    const sent = outcomes.filter((outcome) => outcome.status === 'fulfilled' && outcome.value.sent);
    assert.equal(sent.length, 1);
    const other = outcomes.find((outcome) => !(outcome.status === 'fulfilled' && outcome.value.sent))!;
    // The loser either saw the finished send or was told to come back later.
    if (other.status === 'rejected') assert.ok(other.reason instanceof EmailDeferredError);
    else assert.equal(other.value.sent, false);
    assert.equal((await (await smtp()).send(email())).sent, false);
    assert.equal(receiver.mail.length, 1);
  });

  it('tells a permanent refusal (5xx) from a temporary one (4xx), and records neither as sent', async () => {
    const provider = await smtp();
    receiver.rcptVerdict = () => ({ accept: false, code: 550, message: 'No such user here' });
    await assert.rejects(provider.send(email({ key: 'k-550' })), (error: unknown) => {
      assert.ok(error instanceof EmailRejectedError, String(error));
      assert.equal(error.permanent, true);
      assert.equal(error.responseCode, 550);
      return true;
    });
    receiver.rcptVerdict = () => ({ accept: false, code: 451, message: 'Greylisted, try again later' });
    await assert.rejects(provider.send(email({ key: 'k-451' })), (error: unknown) => {
      assert.ok(error instanceof EmailDeferredError, String(error));
      assert.equal(error.permanent, false);
      assert.equal(error.responseCode, 451);
      return true;
    });
    assert.deepEqual(await recorded(), []);
    // The greylisting passes: the same key goes out on the retry.
    receiver.rcptVerdict = () => ({ accept: true });
    assert.equal((await provider.send(email({ key: 'k-451' }))).sent, true);
    assert.equal(receiver.mail.length, 1);
  });

  it('tells a refusal at the end of DATA apart the same way', async () => {
    const provider = await smtp();
    receiver.dataVerdict = () => ({ accept: false, code: 554, message: 'Message rejected as spam' });
    await assert.rejects(provider.send(email({ key: 'k-554' })), EmailRejectedError);
    receiver.dataVerdict = () => ({ accept: false, code: 452, message: 'Mailbox full' });
    await assert.rejects(provider.send(email({ key: 'k-452' })), EmailDeferredError);
    assert.equal(receiver.mail.length, 0);
  });

  it('defers when the server cannot be reached or refuses the login', async () => {
    await assert.rejects(
      (await smtp(`smtp://127.0.0.1:${await freePort()}`)).send(email()),
      (error: unknown) => {
        assert.ok(error instanceof EmailDeferredError, String(error));
        return error.responseCode === null;
      },
    );
    const badLogin = receiver.url.replace('s3cret', 'wrong');
    await assert.rejects((await smtp(badLogin)).send(email()), (error: unknown) => {
      assert.ok(error instanceof EmailDeferredError, String(error));
      return error.responseCode === 535;
    });
    assert.deepEqual(await recorded(), []);
  });

  it('leaves a send claimed by a live process alone, and takes over the claim of a dead one', async () => {
    const provider = await smtp();
    await provider.send(email({ key: 'claimed' }));
    await database.db
      .updateTable('email_messages')
      .set({ status: 'sending', sent_at: null, claimed_at: sql<Date>`now()` })
      .execute();
    await assert.rejects(provider.send(email({ key: 'claimed' })), EmailDeferredError);
    assert.equal(receiver.mail.length, 1);
    await database.db
      .updateTable('email_messages')
      .set({ claimed_at: sql<Date>`now() - interval '1 hour'` })
      .execute();
    assert.equal((await provider.send(email({ key: 'claimed' }))).sent, true);
    assert.equal(receiver.mail.length, 2);
    assert.deepEqual(await recorded(), [{ key: 'claimed', status: 'sent', provider: 'smtp' }]);
  });
});
