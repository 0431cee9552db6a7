import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { accounts } from '../../src/modules/users/service.ts';
import { inTransaction } from '../../src/platform/db/transaction.ts';
import { adminCall, buildTestApp, type TestApp } from '../helpers.ts';

const PASSWORD = 'correct horse battery staple';

/** A browser without a browser: the portal's cookies kept, its forms posted with their CSRF token. */
class Visitor {
  readonly cookies = new Map<string, string>();
  constructor(private readonly app: FastifyInstance) {}

  private cookieHeader() {
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }

  private keep(response: LightMyRequestResponse) {
    for (const cookie of response.cookies as { name: string; value: string }[]) {
      if (cookie.value) this.cookies.set(cookie.name, cookie.value);
      else this.cookies.delete(cookie.name);
    }
    return response;
  }

  async get(url: string) {
    return this.keep(await this.app.inject({ method: 'GET', url, headers: { cookie: this.cookieHeader() } }));
  }

  /** Posts a form of the page at `from` (its CSRF token) to `url`. */
  async post(url: string, fields: Record<string, string>, from: string) {
    const page = await this.get(from);
    const csrf = /name="_csrf" value="([^"]+)"/.exec(page.body)?.[1];
    assert.ok(csrf, `no form on ${from}: ${page.statusCode}`);
    return this.keep(
      await this.app.inject({
        method: 'POST',
        url,
        headers: {
          cookie: this.cookieHeader(),
          'content-type': 'application/x-www-form-urlencoded',
          'sec-fetch-site': 'same-origin',
        },
        payload: new URLSearchParams({ ...fields, _csrf: csrf }).toString(),
      }),
    );
  }
}

/** The portal's forms and their answers, through app.inject: what is not visual needs no browser. */
describe('portal forms without a browser', () => {
  let t: TestApp;
  let orgId: string;
  let n = 0;

  before(async () => {
    t = await buildTestApp();
    orgId = (await adminCall(t.app, 'POST', '/orgs', { name: 'Fabrikam Agency' })).org.id;
  });
  after(() => t.close());

  const email = () => `person${++n}-${Date.now()}@fabrikam.test`;

  /** An active user of the org, signed in as a visitor. */
  async function signedIn(role: 'owner' | 'admin' | 'member') {
    const address = email();
    const { invite_url, user } = await adminCall(t.app, 'POST', `/orgs/${orgId}/users`, {
      email: address,
      role,
    });
    const accepted = await inTransaction(t.platform.db, (trx) =>
      accounts(t.platform).acceptInvitation(trx, invite_url.split('/').pop(), PASSWORD, { ip: null }),
    );
    const visitor = new Visitor(t.app);
    visitor.cookies.set('ap_session', accepted.session.token);
    return { visitor, email: address, id: user.id as string };
  }

  const roleOf = async (id: string) =>
    (
      await t.platform.db
        .selectFrom('users')
        .select('role')
        .where('org_id', '=', orgId)
        .where('id', '=', id)
        .executeTakeFirstOrThrow()
    ).role;

  test('the invitation and reset pages open, and their tokens stay out of the service log', async () => {
    const { invite_url } = await adminCall(t.app, 'POST', `/orgs/${orgId}/users`, {
      email: email(),
      role: 'member',
    });
    const visitor = new Visitor(t.app);
    const invitation = await visitor.get(new URL(invite_url).pathname);
    assert.equal(invitation.statusCode, 200);
    const reset = await visitor.get(`/portal/reset/${'r'.repeat(43)}`);
    assert.ok([200, 404].includes(reset.statusCode), String(reset.statusCode));
    // `npm test` scans the service log (at debug level) for these tokens: see test/log-scan.ts.
  });

  test('sign-in goes to a printable portal path named by next, anywhere else to the overview', async () => {
    const { email: address } = await signedIn('member');
    const signIn = (next: string) =>
      new Visitor(t.app).post(
        '/portal/sign-in',
        { email: address, password: PASSWORD, next },
        '/portal/sign-in',
      );
    const cases: Array<[string, string]> = [
      ['/portal/team?after=x', '/portal/team?after=x'],
      ['/portal?notice=x', '/portal?notice=x'],
      ['/portal/caf\u00e9', '/portal'],
      ['/portal/a\u0001b', '/portal'],
      ['/portal/a b', '/portal'],
      ['/portal/x\u2028y', '/portal'],
      ['//evil.test/portal', '/portal'],
      ['/portal//evil.test', '/portal'],
      ['/portal/\\evil.test', '/portal'],
      ['https://evil.test/portal', '/portal'],
      ['/portalx', '/portal'],
    ];
    for (const [next, location] of cases) {
      const response = await signIn(next);
      assert.equal(response.statusCode, 303, `${JSON.stringify(next)}: ${response.body.slice(0, 200)}`);
      assert.equal(response.headers.location, location, JSON.stringify(next));
    }
  });

  test('hand-edited input is refused or ignored, never a 500: a cursor that is no UUID, an unknown role', async () => {
    const owner = await signedIn('owner');
    const cursor = (key: unknown) => Buffer.from(JSON.stringify(key)).toString('base64url');
    for (const path of [
      '/portal/team',
      '/portal/audit',
      '/portal/clients',
      '/portal/keys',
      '/portal/webhooks',
    ]) {
      for (const after of [cursor(['not-a-uuid']), cursor([1]), cursor([]), 'junk']) {
        const page = await owner.visitor.get(`${path}?after=${after}`);
        assert.equal(page.statusCode, 200, `${path}?after=${after}`);
      }
    }
    const invite = await owner.visitor.post(
      '/portal/team',
      { email: email(), role: 'superuser' },
      '/portal/team',
    );
    assert.equal(invite.statusCode, 400);
    assert.match(invite.body, /Must be one of owner, admin, member, client/);
  });

  test('a POST-only address opened with GET (a reload after Rotate secret) goes to its page, not a 404', async () => {
    const owner = await signedIn('owner');
    const id = '01a21d0a-a944-7095-8bf9-752878e54f38';
    const client = '01a21d0a-a5c0-7618-a9bd-5afa676772bd';
    const cases: Array<[string, string]> = [
      [`/portal/webhooks/${id}/rotate`, `/portal/webhooks/${id}`],
      [`/portal/clients/${client}/webhooks/${id}/rotate`, `/portal/clients/${client}/webhooks/${id}`],
      [`/portal/webhooks/${id}/recover`, `/portal/webhooks/${id}`],
      [`/portal/webhooks/${id}/deliveries/${client}/retry`, `/portal/webhooks/${id}`],
      [`/portal/keys/${id}/revoke`, '/portal/keys'],
      [`/portal/team/${id}/role`, '/portal/team'],
      ['/portal/account/password', '/portal/account'],
    ];
    for (const [path, page] of cases) {
      const response = await owner.visitor.get(path);
      assert.equal(response.statusCode, 303, path);
      assert.equal(response.headers.location, page, path);
    }
  });

  test('owners are above admins: an admin cannot grant, change or remove an owner (403 on the team page)', async () => {
    const owner = await signedIn('owner');
    const admin = await signedIn('admin');
    const member = await signedIn('member');

    const promote = await admin.visitor.post(
      `/portal/team/${member.id}/role`,
      { role: 'owner' },
      '/portal/team',
    );
    assert.equal(promote.statusCode, 403);
    assert.match(promote.body, /Only an owner may make someone an owner/);
    assert.equal(await roleOf(member.id), 'member');

    const demote = await admin.visitor.post(
      `/portal/team/${owner.id}/role`,
      { role: 'member' },
      '/portal/team',
    );
    assert.equal(demote.statusCode, 403);
    assert.match(demote.body, /Only an owner may change the role of an owner/);
    assert.equal(await roleOf(owner.id), 'owner');

    const remove = await admin.visitor.post(`/portal/team/${owner.id}/remove`, {}, '/portal/team');
    assert.equal(remove.statusCode, 403);
    assert.match(remove.body, /Only an owner may remove an owner/);
    assert.equal(await roleOf(owner.id), 'owner');

    const invited = email();
    const invite = await admin.visitor.post(
      '/portal/team',
      { email: invited, role: 'owner' },
      '/portal/team',
    );
    assert.equal(invite.statusCode, 403);
    assert.match(invite.body, /Only an owner may invite an owner/);
    const held = await t.platform.db
      .selectFrom('user_emails')
      .select('email')
      .where('email', '=', invited)
      .executeTakeFirst();
    assert.equal(held, undefined);

    // An admin still manages admins and members; an owner does all of it.
    const asAdmin = await admin.visitor.post(
      `/portal/team/${member.id}/role`,
      { role: 'admin' },
      '/portal/team',
    );
    assert.equal(asAdmin.statusCode, 303);
    assert.equal(await roleOf(member.id), 'admin');
    const byOwner = await owner.visitor.post(
      `/portal/team/${member.id}/role`,
      { role: 'owner' },
      '/portal/team',
    );
    assert.equal(byOwner.statusCode, 303);
    assert.equal(await roleOf(member.id), 'owner');
    const removed = await owner.visitor.post(`/portal/team/${member.id}/remove`, {}, '/portal/team');
    assert.equal(removed.statusCode, 303);
  });
});
