import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { adminCall, eventually } from '../helpers.ts';
import { type Receiver, startReceiver } from '../webhooks/receiver.ts';
import {
  api,
  checkPage,
  invitedAndSignedIn,
  PASSWORD,
  type PortalHarness,
  startPortal,
  visit,
} from './browser.ts';

/** The portal's main flows in a real browser, as an agency owner would go through them. */
describe('portal flows in Chromium', () => {
  let h: PortalHarness;
  let receiver: Receiver;
  let orgId: string;

  before(async () => {
    // One attempt per delivery, so a failure is dead-lettered at once and Retry shows.
    h = await startPortal({
      OUTBOUND_ALLOW_PRIVATE: 'true',
      WEBHOOK_RETRY_SCHEDULE: '0s',
      SMS_SIMULATOR_DELAY_MS: '50',
    });
    receiver = await startReceiver();
    ({
      org: { id: orgId },
    } = await adminCall(h.t.app, 'POST', '/orgs', { name: 'Northwind Agency' }));
  });
  after(async () => {
    await receiver?.close();
    await h?.close();
  });

  test('invite, set a password, sign in; a client, its key answers /v1/me as the client, an SMS debits FUEL, revoke gives 401', async () => {
    const page = await invitedAndSignedIn(h, orgId, { email: 'owner@northwind.test', role: 'owner' });
    await checkPage(page, 'overview-empty');

    // Sign out, and back in with the labelled fields and the Sign in button.
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(/\/portal\/sign-in/);
    await checkPage(page, 'sign-in');
    await page.getByLabel('Email').fill('owner@northwind.test');
    await page.getByLabel('Password').fill('not the password at all');
    await page.getByRole('button', { name: 'Sign in' }).click();
    assert.match(await page.locator('.notice.bad').innerText(), /email or the password is not right/);
    await checkPage(page, 'sign-in-refused');
    await page.getByLabel('Email').fill('nobody@northwind.test');
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    assert.match(await page.locator('.notice.bad').innerText(), /email or the password is not right/);
    await page.getByLabel('Email').fill('owner@northwind.test');
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${h.base}/portal`);

    // A client.
    await visit(page, '/portal/clients', 'clients-empty');
    await page.getByLabel('Client name').fill('Acme Dental');
    await page.getByRole('button', { name: 'New client' }).click();
    await page.waitForURL(/\/portal\/clients\/[0-9a-f-]{36}\?notice=created/);
    const clientId = /clients\/([0-9a-f-]{36})/.exec(page.url())![1];
    await checkPage(page, 'client-overview');

    // Its key, shown once with a copy button.
    await visit(page, `/portal/clients/${clientId}/keys`, 'client-keys-empty');
    await page.getByLabel('Name').fill('Acme production');
    await page.getByRole('button', { name: 'Create key' }).click();
    const key = (await page.locator('output#new-key').innerText()).trim();
    assert.match(key, /^cl_live_/);
    assert.match(await page.locator('.secret').innerText(), /will not be shown again/);
    assert.ok(await page.getByRole('button', { name: 'Copy' }).isVisible());
    await checkPage(page, 'client-key-created');
    // A reload asks for the page again (the script replaced the post in the history): no second key.
    await page.reload();
    assert.equal(await page.locator('output#new-key').count(), 0, 'the key is shown once');
    assert.equal(await page.getByRole('button', { name: 'Revoke' }).count(), 1);
    assert.match(await page.locator('table').innerText(), /Acme production[\s\S]*cl_live_…/);

    const me = await api(h, key, 'GET', '/me');
    assert.equal(me.status, 200);
    assert.equal(me.body.tenant.client_id, clientId);
    assert.equal(me.body.api_key.kind, 'client');

    // An SMS sent with it shows its debit in the FUEL ledger.
    await adminCall(h.t.app, 'POST', `/orgs/${orgId}/numbers`, {
      number: '+14155550100',
      client_id: clientId,
    });
    await adminCall(h.t.app, 'POST', `/orgs/${orgId}/fuel`, { amount: 25, reason: 'Welcome credit' });
    const sent = await api(h, key, 'POST', '/sms/messages', {
      to: '+14155550199',
      body: 'Your cleaning is on Monday.',
    });
    assert.equal(sent.status, 202, JSON.stringify(sent.body));
    await visit(page, '/portal', 'overview');
    assert.match(await page.locator('.stats').innerText(), /SMS, last 7 days\s+1\b/);

    // A sequence with an enrollment, counted per status on the client's sequences page.
    const sequence = await api(h, key, 'POST', '/sequences', {
      name: 'Recall reminders',
      steps: [{ kind: 'sms', wait_minutes: 60, body: 'Time for your check-up, {{first_name}}!' }],
    });
    assert.equal(sequence.status, 201, JSON.stringify(sequence.body));
    const contact = await api(h, key, 'POST', '/crm/contacts', { first_name: 'Ada', phone: '+14155550142' });
    assert.equal(contact.status, 201, JSON.stringify(contact.body));
    assert.equal(
      (await api(h, key, 'PATCH', `/sequences/${sequence.body.sequence.id}`, { status: 'active' })).status,
      200,
    );
    const enrolled = await api(h, key, 'POST', `/sequences/${sequence.body.sequence.id}/enrollments`, {
      contact_id: contact.body.contact.id,
    });
    assert.equal(enrolled.status, 201, JSON.stringify(enrolled.body));

    await visit(page, '/portal/fuel', 'fuel');
    const ledger = await page.getByRole('table', { name: 'FUEL ledger' }).innerText();
    assert.match(ledger, /SMS\s+-1\s+24/);
    assert.match(ledger, /Welcome credit/);
    assert.equal(await page.locator('rect.bar.sms').count(), 1);

    // The client's read-only pages, linked from its overview.
    await visit(page, `/portal/clients/${clientId}`, 'client-overview-active');
    await page
      .getByRole('link', { name: /SMS conversations/ })
      .first()
      .click();
    await page.waitForURL(/\/conversations$/);
    await checkPage(page, 'client-conversations');
    await page.getByRole('link', { name: '+14155550199' }).click();
    assert.match(await page.locator('main').innerText(), /Your cleaning is on Monday/);
    await checkPage(page, 'client-conversation');
    for (const [path, name] of [
      ['calls', 'client-calls'],
      ['knowledge', 'client-knowledge'],
      ['webhooks', 'client-webhooks'],
    ])
      assert.equal(await visit(page, `/portal/clients/${clientId}/${path}`, name), 200);

    // A call with its transcript, and a knowledge base with a document, read in the client's area.
    await adminCall(h.t.app, 'POST', '/simulator/calls', {
      direction: 'inbound',
      from: '+14155550123',
      to: '+14155550100',
      outcome: 'answered',
      duration_seconds: 42,
      summary: 'Asked to move the cleaning to Tuesday.',
      transcript: [
        { speaker: 'agent', content: 'Acme Dental, how can I help?', start_time_seconds: 0 },
        { speaker: 'contact', content: 'Can I move my cleaning to Tuesday?', start_time_seconds: 3 },
      ],
    });
    const kb = await api(h, key, 'POST', '/kb', { name: 'Front desk handbook' });
    assert.equal(kb.status, 201, JSON.stringify(kb.body));
    const document = await api(h, key, 'POST', `/kb/${kb.body.knowledge_base.id}/documents`, {
      title: 'Opening hours',
      source_type: 'manual',
      content: 'We are open Monday to Friday, 8 to 6.',
    });
    assert.equal(document.status, 201, JSON.stringify(document.body));
    await eventually(async () => {
      await page.goto(`/portal/clients/${clientId}/calls`);
      return (await page.getByRole('table', { name: 'Calls' }).count()) === 1;
    });
    await page.getByRole('table', { name: 'Calls' }).getByRole('link').first().click();
    await eventually(async () => {
      await page.reload();
      return /Can I move my cleaning to Tuesday\?/.test(await page.locator('main').innerText());
    });
    await checkPage(page, 'client-call');
    await page.goto(`/portal/clients/${clientId}/knowledge`);
    await page.getByRole('link', { name: 'Front desk handbook' }).click();
    assert.match(await page.getByRole('table', { name: 'Documents' }).innerText(), /Opening hours/);
    await checkPage(page, 'client-knowledge-base');
    await visit(page, `/portal/clients/${clientId}/sequences`, 'client-sequences');
    assert.match(
      await page.getByRole('table', { name: 'Sequences' }).innerText(),
      /Recall reminders\s+active\s+1\s+1\s+0\s+0\s+0/,
    );
    await visit(page, '/portal/account', 'account');

    // Revoke, confirmed: the key is refused from that moment.
    await visit(page, `/portal/clients/${clientId}/keys`, 'client-keys');
    await page.getByRole('button', { name: 'Revoke' }).click();
    await page.waitForURL(/notice=revoked/);
    await checkPage(page, 'client-key-revoked');
    assert.equal((await api(h, key, 'GET', '/me')).status, 401);

    // The audit log shows each change, made by this user from the browser.
    await visit(page, '/portal/audit', 'audit');
    const audit = await page.getByRole('table', { name: 'Audit log' }).innerText();
    for (const action of ['api_key.revoked', 'api_key.created', 'client.created', 'user.activated'])
      assert.match(audit, new RegExp(action.replace('.', '\\.')));
    assert.match(audit, /owner@northwind\.test/);
  });

  test('webhooks: add an endpoint, send a test event, see it in the log; retry a failed delivery from the page', async () => {
    const page = await invitedAndSignedIn(h, orgId, { email: 'admin@northwind.test', role: 'admin' });
    await visit(page, '/portal/webhooks', 'webhooks-empty');
    await page.getByLabel('Endpoint URL').fill(`${receiver.url}/hooks`);
    await page.getByLabel('All events').check();
    await page.getByLabel('Description').fill('Our CRM sync');
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    assert.match(await page.locator('output#created-secret').innerText(), /^whsec_/);
    await checkPage(page, 'webhook-created');

    await page.getByRole('link', { name: `${receiver.url}/hooks` }).click();
    await page.getByRole('button', { name: 'Send test event' }).click();
    await page.waitForURL(/notice=test_sent/);
    await eventually(async () => receiver.requests.some((request) => request.body?.type === 'webhook.test'));
    // The log updates in place (the page's script fetches it again), with no reload.
    await page
      .getByRole('table', { name: 'Delivery log' })
      .getByText('succeeded')
      .waitFor({ timeout: 20_000 });
    await checkPage(page, 'webhook-delivered');

    // A failing endpoint: its delivery is dead-lettered, then retried from the page once it answers.
    receiver.handle(() => ({ status: 500, body: 'down for maintenance' }));
    await page.getByRole('button', { name: 'Send test event' }).click();
    await eventually(async () => {
      await page.reload();
      return /dead letter/.test(await page.getByRole('table', { name: 'Delivery log' }).innerText());
    });
    await page.getByLabel('Status').selectOption('dead_letter');
    await page.getByRole('button', { name: 'Filter' }).click();
    const filtered = await page.getByRole('table', { name: 'Delivery log' }).innerText();
    assert.doesNotMatch(filtered, /succeeded/);
    await checkPage(page, 'webhook-failed');
    receiver.handle(() => ({ status: 200 }));
    const received = receiver.requests.length;
    await page.getByRole('button', { name: 'Retry' }).click();
    await page.waitForURL(/notice=retried/);
    await eventually(async () => receiver.requests.length > received);
    await eventually(async () => {
      await page.goto(page.url().split('?')[0]);
      const log = await page.getByRole('table', { name: 'Delivery log' }).innerText();
      return (log.match(/succeeded/g) ?? []).length === 2;
    });
    await checkPage(page, 'webhook-retried');

    // Rotate the secret (shown once), disable and enable, recover since a time.
    await page.getByRole('button', { name: 'Rotate secret' }).click();
    assert.match(await page.locator('output#rotated-secret').innerText(), /^whsec_/);
    await checkPage(page, 'webhook-rotated');
    await page.getByRole('button', { name: 'Disable' }).click();
    await page.waitForURL(/notice=disabled/);
    await page.getByRole('button', { name: 'Enable' }).click();
    await page.waitForURL(/notice=enabled/);
    const since = new Date(Date.now() - 3_600_000).toISOString().slice(0, 16);
    await page.getByLabel(/Re-send what failed since/).fill(since);
    await page.getByRole('button', { name: 'Recover' }).click();
    await page.waitForURL(/notice=recovered_\d+/);
    await checkPage(page, 'webhook-recovered');
  });
});
