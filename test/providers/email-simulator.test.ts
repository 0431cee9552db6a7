import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { openDatabase } from '../../src/platform/db/pool.ts';
import {
  createEmailProvider,
  type EmailProvider,
  type OutboundEmail,
} from '../../src/providers/email/index.ts';
import { ADMIN_TOKEN, adminCall, buildTestApp, type TestApp } from '../helpers.ts';

const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };

function email(overrides: Partial<OutboundEmail> = {}): OutboundEmail {
  return {
    key: 'enrollment:0190-b:step:0',
    to: 'grace@example.test',
    subject: 'Hello {{first_name}} is already merged by the caller',
    text: 'Plain text body',
    html: '<p>HTML body</p>',
    headers: {
      'List-Unsubscribe': '<https://api.agency.test/u/tok_9>',
      'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
    },
    ...overrides,
  };
}

describe('Email simulator', () => {
  let t: TestApp;
  let provider: EmailProvider;

  before(async () => {
    t = await buildTestApp({ EMAIL_FROM: 'Demo Agency <hello@demo.test>' });
    provider = await createEmailProvider(t.config, t.platform.db);
  });
  after(() => t.close());

  it('records a sent email that the admin API lists, headers and all', async () => {
    const result = await provider.send(email());
    assert.equal(result.sent, true);
    assert.match(result.messageId, /^<[0-9a-f]{40}@demo\.test>$/);
    const listed = await adminCall(t.app, 'GET', '/simulator/emails?to=grace@example.test');
    assert.equal(listed.limit, 50);
    assert.equal(listed.data.length, 1);
    const [row] = listed.data;
    assert.deepEqual(
      { ...row, sent_at: undefined },
      {
        key: 'enrollment:0190-b:step:0',
        message_id: result.messageId,
        from: 'Demo Agency <hello@demo.test>',
        to: 'grace@example.test',
        subject: 'Hello {{first_name}} is already merged by the caller',
        text: 'Plain text body',
        html: '<p>HTML body</p>',
        headers: {
          'List-Unsubscribe': '<https://api.agency.test/u/tok_9>',
          'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
        },
        sent_at: undefined,
      },
    );
    assert.ok(Math.abs(Date.parse(row.sent_at) - Date.now()) < 60_000);
  });

  it('records nothing new for a key already sent, from this process or another', async () => {
    const first = await provider.send(email({ key: 'repeat', to: 'repeat@example.test' }));
    const again = await provider.send(email({ key: 'repeat', to: 'repeat@example.test' }));
    const other = openDatabase(t.database.url, { max: 2 });
    try {
      const fromWorker = await (await createEmailProvider(t.config, other.db)).send(
        email({ key: 'repeat', to: 'repeat@example.test' }),
      );
      assert.deepEqual(fromWorker, { messageId: first.messageId, sent: false });
    } finally {
      await other.close();
    }
    assert.deepEqual(again, { messageId: first.messageId, sent: false });
    const listed = await adminCall(t.app, 'GET', '/simulator/emails?to=repeat@example.test');
    assert.equal(listed.data.length, 1);
  });

  it('records one email when many sends of one key race', async () => {
    const results = await Promise.all(
      Array.from({ length: 8 }, () => provider.send(email({ key: 'race', to: 'race@example.test' }))),
    );
    assert.equal(results.filter((result) => result.sent).length, 1);
    assert.equal(new Set(results.map((result) => result.messageId)).size, 1);
    const listed = await adminCall(t.app, 'GET', '/simulator/emails?to=race@example.test');
    assert.equal(listed.data.length, 1);
  });

  it('lists newest first, filters by recipient whatever its case, and honours limit', async () => {
    for (const step of [1, 2, 3])
      await provider.send(email({ key: `order:${step}`, to: 'Order@Example.test' }));
    const listed = await adminCall(t.app, 'GET', '/simulator/emails?to=order@example.TEST&limit=2');
    assert.deepEqual(
      listed.data.map((row: { key: string }) => row.key),
      ['order:3', 'order:2'],
    );
    const all = await adminCall(t.app, 'GET', '/simulator/emails');
    assert.ok(all.data.length >= 6);
    assert.ok(all.data.some((row: { to: string }) => row.to === 'grace@example.test'));
  });

  it('refuses an email a caller got wrong before recording anything', async () => {
    const wrong: Partial<OutboundEmail>[] = [
      { to: 'not an address' },
      { key: '' },
      { subject: 'Injected\r\nBcc: everyone@example.test' },
      { headers: { 'X-Campaign': 'a\r\nBcc: everyone@example.test' } },
      { headers: { 'Message-ID': '<mine@example.test>' } },
      { headers: { 'Bad Name': 'x' } },
    ];
    for (const overrides of wrong) {
      await assert.rejects(
        provider.send(email({ key: 'wrong', to: 'wrong@example.test', ...overrides })),
        TypeError,
      );
    }
    const listed = await adminCall(t.app, 'GET', '/simulator/emails?to=wrong@example.test');
    assert.equal(listed.data.length, 0);
  });

  it('answers only the admin token, validates its query, and stays out of the OpenAPI document', async () => {
    const unauthenticated = await t.app.inject({ method: 'GET', url: '/admin/v1/simulator/emails' });
    assert.equal(unauthenticated.statusCode, 401);
    const badLimit = await t.app.inject({
      method: 'GET',
      url: '/admin/v1/simulator/emails?limit=0',
      headers: admin,
    });
    assert.equal(badLimit.statusCode, 400);
    assert.equal(badLimit.json().error, 'validation_error');
    const unknown = await t.app.inject({
      method: 'GET',
      url: '/admin/v1/simulator/emails?from=x',
      headers: admin,
    });
    assert.equal(unknown.statusCode, 400);
    const openapi = (await t.app.inject({ method: 'GET', url: '/v1/openapi.json' })).json();
    assert.ok(!Object.keys(openapi.paths).some((path) => path.includes('simulator')));
  });
});

describe('Email simulator admin route under another provider', () => {
  let t: TestApp;

  before(async () => {
    t = await buildTestApp({ EMAIL_PROVIDER: 'smtp', SMTP_URL: 'smtp://127.0.0.1:2525' });
  });
  after(() => t.close());

  it('is 404', async () => {
    const response = await t.app.inject({ method: 'GET', url: '/admin/v1/simulator/emails', headers: admin });
    assert.equal(response.statusCode, 404);
    assert.equal(response.json().error, 'not_found');
    assert.match(response.json().message, /EMAIL_PROVIDER is smtp/);
  });
});
