import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { adminCall, eventually } from '../helpers.ts';
import {
  checkPage,
  invitedAndSignedIn,
  PASSWORD,
  type PortalHarness,
  startPortal,
  visit,
} from './browser.ts';

/** Who may open what, CSRF, sessions, bad input and the headers: the portal's safety, in Chromium. */
describe('portal access and safety in Chromium', () => {
  let h: PortalHarness;
  let orgId: string;
  let clientA: string;
  let clientB: string;

  before(async () => {
    h = await startPortal();
    const { org } = await adminCall(h.t.app, 'POST', '/orgs', { name: 'Contoso Agency' });
    orgId = org.id;
    await adminCall(h.t.app, 'POST', `/orgs/${orgId}/users`, {
      email: 'founder@contoso.test',
      role: 'owner',
    });
    clientA = (await adminCall(h.t.app, 'POST', `/orgs/${orgId}/clients`, { name: 'Alpine Bakery' })).client
      .id;
    clientB = (await adminCall(h.t.app, 'POST', `/orgs/${orgId}/clients`, { name: 'Bayside Gym' })).client.id;
  });
  after(async () => h?.close());

  const clientsNamed = async (name: string) =>
    h.t.platform.db
      .selectFrom('clients')
      .select('id')
      .where('org_id', '=', orgId)
      .where('name', '=', name)
      .execute();

  test("a client user sees its client's area only: another client's page is a 404 page", async () => {
    const page = await invitedAndSignedIn(h, orgId, {
      email: 'baker@alpine.test',
      role: 'client',
      client_id: clientA,
    });
    await checkPage(page, 'client-user-overview');
    assert.match(await page.locator('h1').innerText(), /Alpine Bakery/);
    assert.equal(await visit(page, `/portal/clients/${clientA}/keys`, 'client-user-keys'), 200);
    for (const path of ['', '/keys', '/webhooks', '/calls', '/conversations']) {
      assert.equal(await visit(page, `/portal/clients/${clientB}${path}`, 'client-user-other-client'), 404);
      assert.match(await page.locator('h1').innerText(), /Page not found/);
    }
    assert.equal(await visit(page, `/portal/clients/${orgId}`, 'client-user-unknown-client'), 404);
    assert.equal(await visit(page, '/portal/clients', 'client-user-clients'), 403);
    assert.equal(await visit(page, '/portal/keys', 'client-user-agency-keys'), 403);
  });

  test('a member works in the clients but cannot open /portal/keys, team, webhooks, FUEL or the audit log', async () => {
    const page = await invitedAndSignedIn(h, orgId, { email: 'member@contoso.test', role: 'member' });
    await checkPage(page, 'member-overview');
    assert.equal(
      await page.getByRole('link', { name: 'API keys' }).count(),
      0,
      'no link to what they cannot open',
    );
    assert.equal(await visit(page, '/portal/keys', 'member-keys-forbidden'), 403);
    assert.match(await page.locator('main').innerText(), /Not allowed/);
    for (const path of ['/portal/team', '/portal/webhooks', '/portal/fuel', '/portal/audit'])
      assert.equal((await page.goto(path))!.status(), 403, path);
    assert.equal(await visit(page, '/portal/clients', 'member-clients'), 200);
    assert.equal(await visit(page, `/portal/clients/${clientB}/keys`, 'member-client-keys'), 200);
  });

  test('a cross-site form post, without the CSRF token, is refused and changes nothing', async () => {
    const page = await invitedAndSignedIn(h, orgId, { email: 'target@contoso.test', role: 'admin' });
    // Another origin (another port) with a form that posts to the portal on load.
    const attacker = http.createServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/html' });
      response.end(
        `<!doctype html><html lang="en"><title>Win</title><form method="post" action="${h.base}/portal/clients">` +
          `<input name="name" value="Evil Corp"></form><script>document.forms[0].submit()</script></html>`,
      );
    });
    await new Promise<void>((resolve) => attacker.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = attacker.address() as AddressInfo;
      const refused = page.waitForResponse((response) => response.url() === `${h.base}/portal/clients`);
      await page.goto(`http://127.0.0.1:${port}/`);
      const response = await refused;
      assert.equal(response.status(), 403);
      // Refused as a page of its own: the portal does not show the other site's form back, filled in.
      assert.match(
        await page.locator('main').innerText(),
        /did not come from the portal. Nothing was changed/,
      );
      assert.equal(await page.locator('input[name="name"]').count(), 0);
      await checkPage(page, 'csrf-refused');
      assert.deepEqual(await clientsNamed('Evil Corp'), []);
    } finally {
      await new Promise<void>((resolve) => attacker.close(() => resolve()));
    }
    // And a request with a token from another session is refused as well.
    const forged = await page.request.post(`${h.base}/portal/clients`, {
      form: { name: 'Evil Corp', _csrf: 'x'.repeat(43) },
    });
    assert.equal(forged.status(), 403);
    assert.deepEqual(await clientsNamed('Evil Corp'), []);
  });

  test('bad input shows the error next to the field, keeps what was typed, and changes nothing', async () => {
    const page = await invitedAndSignedIn(h, orgId, { email: 'careful@contoso.test', role: 'admin' });

    await page.goto('/portal/clients');
    await page.getByRole('button', { name: 'New client' }).click();
    assert.equal(await page.locator('#field-name-error').innerText(), 'Required.');
    await checkPage(page, 'bad-client-name');

    await page.goto('/portal/webhooks');
    await page.getByLabel('Endpoint URL').fill('ftp://files.contoso.test/in');
    await page.getByLabel('contact.created').check();
    await page.getByLabel('Description').fill('Nightly export');
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    assert.match(await page.locator('#field-url-error').innerText(), /https/);
    assert.equal(await page.getByLabel('Endpoint URL').inputValue(), 'ftp://files.contoso.test/in');
    assert.equal(await page.getByLabel('Description').inputValue(), 'Nightly export');
    assert.ok(await page.getByLabel('contact.created').isChecked());
    await checkPage(page, 'bad-webhook-url');
    await page.getByLabel('Endpoint URL').fill('https://hooks.contoso.test/in');
    await page.getByLabel('contact.created').uncheck();
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    assert.equal(await page.locator('#events-error').innerText(), 'Required.');
    const subscriptions = await h.t.platform.db
      .selectFrom('webhook_subscriptions')
      .select('id')
      .where('org_id', '=', orgId)
      .execute();
    assert.deepEqual(subscriptions, []);

    await page.goto('/portal/keys');
    await page.getByLabel('Name').fill('Nightly job');
    await page.getByLabel('Rate limit per minute').fill('20000000');
    await page.getByRole('button', { name: 'Create key' }).click();
    assert.match(await page.locator('#field-rate_limit_per_minute-error').innerText(), /at most 10000000/);
    assert.equal(await page.getByLabel('Name').inputValue(), 'Nightly job');
    await checkPage(page, 'bad-key-limit');

    // A stale form: opened before the session changed, posted after.
    await page.goto('/portal/clients');
    await page.getByLabel('Client name').fill('Cedar Dental');
    const other = await page.context().newPage();
    await other.goto('/portal');
    await other.getByRole('button', { name: 'Sign out' }).click();
    await other.getByLabel('Email').fill('careful@contoso.test');
    await other.getByLabel('Password').fill(PASSWORD);
    await other.getByRole('button', { name: 'Sign in' }).click();
    await other.waitForURL(`${h.base}/portal`);
    await page.getByRole('button', { name: 'New client' }).click();
    assert.match(await page.locator('.notice.bad').innerText(), /stale/);
    assert.equal(await page.getByLabel('Client name').inputValue(), 'Cedar Dental');
    assert.deepEqual(await clientsNamed('Cedar Dental'), []);
    await checkPage(page, 'stale-form');
    // Submitted again, the form now carries the new session's token.
    await page.getByRole('button', { name: 'New client' }).click();
    await page.waitForURL(/notice=created/);
    assert.equal((await clientsNamed('Cedar Dental')).length, 1);

    // A password too short, on the invitation page.
    const { invite_url } = await adminCall(h.t.app, 'POST', `/orgs/${orgId}/users`, {
      email: 'short@contoso.test',
      role: 'member',
    });
    const invited = await h.person();
    await invited.goto(invite_url);
    await invited.getByLabel('New password').fill('short');
    await invited.getByRole('button', { name: 'Accept and sign in' }).click();
    assert.match(await invited.locator('#field-password-error').innerText(), /12/);
    await checkPage(invited, 'bad-password');
    const user = await h.t.platform.db
      .selectFrom('users')
      .select('status')
      .where('email', '=', 'short@contoso.test')
      .executeTakeFirstOrThrow();
    assert.equal(user.status, 'invited');
  });

  test('sign out ends the session: the old cookie is refused', async () => {
    const page = await invitedAndSignedIn(h, orgId, { email: 'leaver@contoso.test', role: 'admin' });
    const cookies = await page.context().cookies();
    assert.ok(
      cookies.some((cookie) => cookie.name === 'ap_session' && cookie.httpOnly && cookie.sameSite === 'Lax'),
    );
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(/sign-in/);
    const replay = await h.person();
    await replay.context().addCookies(cookies);
    const response = await replay.goto('/portal/keys');
    assert.match(response!.url(), /\/portal\/sign-in\?next=%2Fportal%2Fkeys/);
    await checkPage(replay, 'signed-out-cookie');
  });

  test('the team page invites, changes roles and refuses to demote the last owner; a reset link sets a new password', async () => {
    const page = await h.person();
    page.on('dialog', (dialog) => dialog.accept());
    // The owner invited in before() resets a password they never had: forgot, email, reset, sign in.
    const { invite_url } = await adminCall(h.t.app, 'POST', `/orgs/${orgId}/users`, {
      email: 'founder@contoso.test',
      role: 'owner',
    });
    await page.goto(invite_url);
    await page.getByLabel('New password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Accept and sign in' }).click();
    await page.waitForURL(`${h.base}/portal`);

    await visit(page, '/portal/team', 'team');
    await page.getByLabel('Email').fill('newhire@contoso.test');
    await page.getByLabel('Role', { exact: true }).selectOption('member');
    await page.getByRole('button', { name: 'Send invitation' }).click();
    assert.match(await page.locator('output#invite-url').innerText(), /\/portal\/invitations\//);
    await checkPage(page, 'team-invited');
    const emails = await adminCall(h.t.app, 'GET', '/simulator/emails?to=newhire@contoso.test');
    assert.equal(emails.data.length, 1);

    await page.getByLabel('Role of newhire@contoso.test', { exact: true }).selectOption('admin');
    await page
      .getByRole('form', { name: 'Change the role of newhire@contoso.test' })
      .getByRole('button', { name: 'Change' })
      .click();
    await page.waitForURL(/notice=role_changed/);
    await page.getByLabel('Role of founder@contoso.test', { exact: true }).selectOption('member');
    await page
      .getByRole('form', { name: 'Change the role of founder@contoso.test' })
      .getByRole('button', { name: 'Change' })
      .click();
    assert.match(await page.locator('.notice.bad').innerText(), /last owner/);
    await checkPage(page, 'team-last-owner');

    // Forgot password: the same answer for any email; the link sets a new one and ends every session.
    const reset = await h.person();
    await reset.goto('/portal/forgot');
    await checkPage(reset, 'forgot');
    await reset.getByLabel('Email').fill('founder@contoso.test');
    await reset.getByRole('button', { name: 'Email me a link' }).click();
    assert.match(await reset.locator('.notice').innerText(), /If an account uses that email/);
    const mail = await eventually(async () => {
      const { data } = await adminCall(h.t.app, 'GET', '/simulator/emails?to=founder@contoso.test');
      return data.find((email: any) => /reset/i.test(email.subject));
    });
    const link = /https?:\/\/\S+\/portal\/reset\/\S+/.exec(mail.text)![0];
    await reset.goto(link);
    await checkPage(reset, 'reset');
    await reset.getByLabel('New password', { exact: true }).fill('an even better passphrase');
    await reset.getByRole('button', { name: 'Set password' }).click();
    await reset.waitForURL(/sign-in\?notice=password_reset/);
    await reset.getByLabel('Email').fill('founder@contoso.test');
    await reset.getByLabel('Password').fill('an even better passphrase');
    await reset.getByRole('button', { name: 'Sign in' }).click();
    await reset.waitForURL(`${h.base}/portal`);
    // The session from before the reset is over.
    const before = await page.goto('/portal/team');
    assert.match(before!.url(), /sign-in/);
  });

  test('every portal response sends the security headers; an error is a portal page without a stack trace', async () => {
    const page = await h.person();
    for (const path of ['/portal/sign-in', '/portal/nowhere', '/portal/assets/portal.css']) {
      const response = await page.goto(path);
      const headers = response!.headers();
      assert.match(headers['content-security-policy'], /script-src 'self'/);
      assert.match(headers['content-security-policy'], /frame-ancestors 'none'/);
      assert.doesNotMatch(headers['content-security-policy'], /unsafe-inline/);
      assert.equal(headers['referrer-policy'], 'same-origin');
      assert.equal(headers['x-content-type-options'], 'nosniff');
    }
    const notFound = await page.goto('/portal/nowhere');
    assert.equal(notFound!.status(), 404);
    await checkPage(page, 'not-found');
    // A signed-in page asked for signed out goes to the sign-in page.
    const redirected = await page.goto(`/portal/clients/${clientA}`);
    assert.match(redirected!.url(), /\/portal\/sign-in\?next=/);
  });
});
