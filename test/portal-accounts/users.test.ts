import assert from 'node:assert/strict';
import { randomInt } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { jobRegistry } from '../../src/jobs.ts';
import { listAudit, operatorAudit, userAudit } from '../../src/modules/audit/service.ts';
import { hashToken } from '../../src/modules/users/credentials.ts';
import { PORTAL_ACCOUNTS_CLEANUP } from '../../src/modules/users/jobs.ts';
import {
  accounts,
  changeRole,
  listUsers,
  PASSWORD_RESET_EMAIL_TASK,
  removeUser,
} from '../../src/modules/users/service.ts';
import { inTransaction } from '../../src/platform/db/transaction.ts';
import {
  ADMIN_TOKEN,
  adminCall,
  buildTestApp,
  createTenant,
  type TestApp,
  type TestTenant,
} from '../helpers.ts';

const operator = operatorAudit({ ip: '127.0.0.1' });
// Addresses of this run: failure counters may outlive it in a shared Redis.
const RUN = `10.${randomInt(256)}.${randomInt(256)}`;
const meta = { ip: `${RUN}.7`, userAgent: 'test' };
const PASSWORD = 'correct horse battery';

describe('portal accounts: users, invitations, sessions, passwords', () => {
  let t: TestApp;
  let tenant: TestTenant;
  let n = 0;
  const email = () => `person${++n}-${Date.now()}@example.test`;
  const people = () => accounts(t.platform);
  const db = () => t.platform.db;

  before(async () => {
    t = await buildTestApp({
      PORTAL_SIGN_IN_FAILURES_PER_MINUTE: '3',
      PUBLIC_BASE_URL: 'https://portal.example.test',
    });
    tenant = await createTenant(t.app);
  });
  after(() => t.close());

  const tokenOf = (url: string) => url.split('/').pop()!;

  /** What a worker does with the queued reset emails: runs each job once. */
  const sendQueuedResets = async () => {
    const { rows } = await sql<{ key: string; payload: unknown }>`SELECT j.key, j.payload
      FROM graphile_worker._private_jobs j JOIN graphile_worker._private_tasks k ON k.id = j.task_id
      WHERE k.identifier = ${PASSWORD_RESET_EMAIL_TASK}`.execute(db());
    for (const job of rows) {
      await jobRegistry(t.platform).tasks[PASSWORD_RESET_EMAIL_TASK](job.payload as never);
      await sql`SELECT graphile_worker.remove_job(${job.key})`.execute(db());
    }
  };

  /** An active user of the tenant's org with `PASSWORD`. */
  async function activeUser(role: 'owner' | 'admin' | 'member' | 'client' = 'member', orgId = tenant.orgId) {
    const address = email();
    const { inviteUrl } = await inTransaction(db(), (trx) =>
      people().inviteUser(
        trx,
        orgId,
        { email: address, role, ...(role === 'client' ? { client_id: tenant.clientId } : {}) },
        operator,
      ),
    );
    const accepted = await inTransaction(db(), (trx) =>
      people().acceptInvitation(trx, tokenOf(inviteUrl), PASSWORD, meta),
    );
    return { email: address, ...accepted };
  }

  test('POST /admin/v1/orgs/{orgId}/users invites: 201, the invitation arrives by email, the link works once', async () => {
    const address = `Grace.Hopper+${Date.now()}@Example.test`;
    const response = await t.app.inject({
      method: 'POST',
      url: `/admin/v1/orgs/${tenant.orgId}/users`,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      payload: { email: address, role: 'admin' },
    });
    assert.equal(response.statusCode, 201, response.body);
    const body = response.json();
    assert.equal(body.user.email, address.toLowerCase());
    assert.equal(body.user.role, 'admin');
    assert.equal(body.user.client_id, null);
    assert.equal(body.user.status, 'invited');
    assert.match(
      body.invite_url,
      /^https:\/\/portal\.example\.test\/portal\/invitations\/[A-Za-z0-9_-]{43}$/,
    );

    const mail = await adminCall(
      t.app,
      'GET',
      `/simulator/emails?to=${encodeURIComponent(address.toLowerCase())}`,
    );
    assert.equal(mail.data.length, 1);
    assert.ok(mail.data[0].text.includes(body.invite_url));

    const accepted = await inTransaction(db(), (trx) =>
      people().acceptInvitation(trx, tokenOf(body.invite_url), PASSWORD, meta),
    );
    assert.equal(accepted.user.status, 'active');
    assert.ok(accepted.session.token.length >= 43);
    const again = inTransaction(db(), (trx) =>
      people().acceptInvitation(trx, tokenOf(body.invite_url), PASSWORD, meta),
    );
    await assert.rejects(again, { statusCode: 404 });

    const audit = await listAudit(db(), tenant.orgId, { limit: 10 }, { record_id: body.user.id });
    assert.deepEqual(
      audit.map((entry) => [entry.action, entry.actor.type]),
      [
        ['user.activated', 'user'],
        ['user.invited', 'operator'],
      ],
    );
  });

  test('invitation input: a client user needs a client of the org; an email is unique across the platform', async () => {
    const invite = (payload: object, orgId = tenant.orgId) =>
      t.app.inject({
        method: 'POST',
        url: `/admin/v1/orgs/${orgId}/users`,
        headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
        payload,
      });
    const noClient = await invite({ email: email(), role: 'client' });
    assert.equal(noClient.statusCode, 400);
    assert.equal(noClient.json().details.fields[0].field, 'client_id');
    const other = await createTenant(t.app);
    assert.equal(
      (await invite({ email: email(), role: 'client', client_id: other.clientId })).statusCode,
      404,
    );
    assert.equal(
      (await invite({ email: email(), role: 'member', client_id: tenant.clientId })).statusCode,
      400,
    );
    assert.equal(
      (await invite({ email: 'not-an-email', role: 'member' })).json().details.fields[0].field,
      'email',
    );
    assert.equal((await invite({ email: email(), role: 'janitor' })).statusCode, 400);

    const taken = email();
    assert.equal(
      (await invite({ email: taken, role: 'client', client_id: tenant.clientId })).statusCode,
      201,
    );
    // Still invited: inviting again sends a fresh link, with the new role.
    const again = await invite({ email: taken.toUpperCase(), role: 'member' });
    assert.equal(again.statusCode, 201);
    assert.equal(again.json().user.role, 'member');
    assert.equal(again.json().user.client_id, null);
    const elsewhere = await invite({ email: taken, role: 'owner' }, other.orgId);
    assert.equal(elsewhere.statusCode, 409);
    assert.equal(elsewhere.json().error, 'email_in_use');
  });

  test('passwords have at least 12 characters: 400 validation_error naming password, nothing changes', async () => {
    const { inviteUrl } = await inTransaction(db(), (trx) =>
      people().inviteUser(trx, tenant.orgId, { email: email(), role: 'member' }, operator),
    );
    await assert.rejects(
      inTransaction(db(), (trx) => people().acceptInvitation(trx, tokenOf(inviteUrl), 'short pass', meta)),
      (error: any) =>
        error.statusCode === 400 &&
        error.code === 'validation_error' &&
        error.details.fields[0].field === 'password',
    );
    // The link was not used up.
    const accepted = await inTransaction(db(), (trx) =>
      people().acceptInvitation(trx, tokenOf(inviteUrl), PASSWORD, meta),
    );
    assert.equal(accepted.user.status, 'active');
  });

  test('a password is measured in characters both when set and when checked: 1024 emoji sign in', async () => {
    const address = email();
    const { inviteUrl } = await inTransaction(db(), (trx) =>
      people().inviteUser(trx, tenant.orgId, { email: address, role: 'member' }, operator),
    );
    const long = '\u{1F511}'.repeat(1024);
    await inTransaction(db(), (trx) => people().acceptInvitation(trx, tokenOf(inviteUrl), long, meta));
    const signedIn = await people().signIn(db(), { email: address, password: long }, { ip: `${RUN}.31` });
    assert.equal(signedIn.user.email, address);
    await assert.rejects(
      inTransaction(db(), (trx) => people().acceptInvitation(trx, tokenOf(inviteUrl), `${long}x`, meta)),
      (error: any) => error.details.fields[0].field === 'password',
    );
  });

  test('sign-in: one message for a wrong email or password; the session resolves to the tenant; sign-out ends it', async () => {
    const user = await activeUser('member');
    const wrongPassword = people().signIn(
      db(),
      { email: user.email, password: 'wrong password!!' },
      { ip: `${RUN}.1` },
    );
    const wrongEmail = people().signIn(
      db(),
      { email: `nobody${Date.now()}@example.test`, password: PASSWORD },
      { ip: `${RUN}.2` },
    );
    const [a, b] = await Promise.allSettled([wrongPassword, wrongEmail]);
    assert.equal(a.status, 'rejected');
    assert.equal(b.status, 'rejected');
    const reasonA = (a as PromiseRejectedResult).reason;
    const reasonB = (b as PromiseRejectedResult).reason;
    assert.equal(reasonA.statusCode, 401);
    assert.equal(reasonA.message, reasonB.message);

    const signedIn = await people().signIn(
      db(),
      { email: ` ${user.email.toUpperCase()} `, password: PASSWORD },
      meta,
    );
    assert.equal(signedIn.user.id, user.user.id);
    const resolved = await people().resolveSession(db(), signedIn.session.token);
    assert.ok(resolved);
    assert.equal(resolved.user.id, user.user.id);
    assert.deepEqual(resolved.tenant, {
      orgId: tenant.orgId,
      clientId: tenant.houseClientId,
      isClientScoped: false,
    });
    assert.equal(resolved.org.id, tenant.orgId);

    const client = await activeUser('client');
    const clientSession = await people().resolveSession(db(), client.session.token);
    assert.deepEqual(clientSession?.tenant, {
      orgId: tenant.orgId,
      clientId: tenant.clientId,
      isClientScoped: true,
    });

    await inTransaction(db(), (trx) => people().signOut(trx, signedIn.session.token));
    assert.equal(await people().resolveSession(db(), signedIn.session.token), null);
    assert.equal(await people().resolveSession(db(), 'made-up'), null);
  });

  test('failed sign-ins are throttled per email and per address', async () => {
    const user = await activeUser('member');
    const attempt = (password: string, ip: string) =>
      people()
        .signIn(db(), { email: user.email, password }, { ip })
        .then(
          () => 200,
          (error) => error.statusCode,
        );
    // Three failures for this email from three addresses, then the email is refused, even with its password.
    assert.deepEqual(
      [
        await attempt('wrong password 1', `${RUN}.11`),
        await attempt('wrong password 2', `${RUN}.12`),
        await attempt('wrong password 3', `${RUN}.13`),
      ],
      [401, 401, 401],
    );
    assert.equal(await attempt('wrong password 4', `${RUN}.14`), 429);
    assert.equal(await attempt(PASSWORD, `${RUN}.15`), 429);

    // One address guessing at several emails is refused too.
    const guess = (i: number) =>
      people()
        .signIn(
          db(),
          { email: `guess${i}-${Date.now()}@example.test`, password: PASSWORD },
          { ip: `${RUN}.99` },
        )
        .then(
          () => 200,
          (error) => error.statusCode,
        );
    const statuses = [];
    for (let i = 0; i < 5; i++) statuses.push(await guess(i));
    assert.deepEqual(statuses, [401, 401, 401, 429, 429]);
  });

  test('wrong current passwords are throttled like failed sign-ins: a stolen session cannot guess on', async () => {
    const user = await activeUser('member');
    const change = (current: string) =>
      inTransaction(db(), (trx) =>
        people().changePassword(
          trx,
          { org_id: tenant.orgId, id: user.user.id },
          current,
          'another passphrase',
          user.session.id,
          { ip: `${RUN}.21` },
        ),
      ).then(
        () => 200,
        (error) => error.statusCode,
      );
    assert.deepEqual(
      [await change('guess number 1'), await change('guess number 2'), await change('guess number 3')],
      [400, 400, 400],
    );
    assert.equal(await change('guess number 4'), 429);
    assert.equal(await change(PASSWORD), 429);
    // The email's sign-ins are held back too.
    assert.equal(
      await people()
        .signIn(db(), { email: user.email, password: PASSWORD }, { ip: `${RUN}.22` })
        .then(
          () => 200,
          (error) => error.statusCode,
        ),
      429,
    );
  });

  test('sessions end when idle past PORTAL_SESSION_IDLE or past PORTAL_SESSION_MAX; use slides the idle clock', async () => {
    const user = await activeUser('member');
    const token = user.session.token;
    const move = (column: 'last_seen_at' | 'expires_at', ago: string) =>
      sql`UPDATE portal_sessions SET ${sql.ref(column)} = now() - ${ago}::interval WHERE id = ${user.session.id}`.execute(
        db(),
      );
    await move('last_seen_at', '11 hours');
    assert.ok(await people().resolveSession(db(), token));
    // Used just now: the idle clock starts again.
    const seen = await sql<{
      last_seen_at: Date;
    }>`SELECT last_seen_at FROM portal_sessions WHERE id = ${user.session.id}`.execute(db());
    assert.ok(Date.now() - seen.rows[0].last_seen_at.getTime() < 60_000);
    await move('last_seen_at', '13 hours');
    assert.equal(await people().resolveSession(db(), token), null);

    const other = await people().signIn(db(), { email: user.email, password: PASSWORD }, meta);
    const absolute = (
      await sql<{
        days: number;
      }>`SELECT extract(epoch FROM expires_at - created_at) / 86400 AS days FROM portal_sessions WHERE id = ${other.session.id}`.execute(
        db(),
      )
    ).rows[0];
    assert.equal(Math.round(Number(absolute.days)), 7);
    await sql`UPDATE portal_sessions SET expires_at = now() - interval '1 second' WHERE id = ${other.session.id}`.execute(
      db(),
    );
    assert.equal(await people().resolveSession(db(), other.session.token), null);
  });

  test('password reset: the same answer for any email; the emailed link works once and ends every session', async () => {
    const user = await activeUser('admin');
    const second = await people().signIn(db(), { email: user.email, password: PASSWORD }, meta);
    await inTransaction(db(), (trx) =>
      people().requestPasswordReset(trx, `nobody${Date.now()}@example.test`),
    );
    await inTransaction(db(), (trx) => people().requestPasswordReset(trx, user.email.toUpperCase()));
    await sendQueuedResets();
    const mail = await adminCall(t.app, 'GET', `/simulator/emails?to=${encodeURIComponent(user.email)}`);
    const resetUrl = /https:\/\/portal\.example\.test\/portal\/reset\/[A-Za-z0-9_-]{43}/.exec(
      mail.data[0].text,
    )?.[0];
    assert.ok(resetUrl, mail.data[0].text);

    await assert.rejects(
      inTransaction(db(), (trx) => people().resetPassword(trx, tokenOf(resetUrl), 'too short')),
      { statusCode: 400 },
    );
    const newPassword = 'a brand new passphrase';
    await inTransaction(db(), (trx) => people().resetPassword(trx, tokenOf(resetUrl), newPassword));
    assert.equal(await people().resolveSession(db(), user.session.token), null);
    assert.equal(await people().resolveSession(db(), second.session.token), null);
    await assert.rejects(
      inTransaction(db(), (trx) => people().resetPassword(trx, tokenOf(resetUrl), newPassword)),
      {
        statusCode: 404,
      },
    );
    await assert.rejects(people().signIn(db(), { email: user.email, password: PASSWORD }, meta), {
      statusCode: 401,
    });
    assert.ok(await people().signIn(db(), { email: user.email, password: newPassword }, meta));
  });

  test('password change: the current one is checked; the other sessions end, this one stays', async () => {
    const user = await activeUser('member');
    const other = await people().signIn(db(), { email: user.email, password: PASSWORD }, meta);
    await assert.rejects(
      inTransaction(db(), (trx) =>
        people().changePassword(
          trx,
          { org_id: tenant.orgId, id: user.user.id },
          'not the password',
          'another passphrase',
          user.session.id,
        ),
      ),
      (error: any) => error.details.fields[0].field === 'current_password',
    );
    await inTransaction(db(), (trx) =>
      people().changePassword(
        trx,
        { org_id: tenant.orgId, id: user.user.id },
        PASSWORD,
        'another passphrase',
        user.session.id,
      ),
    );
    assert.ok(await people().resolveSession(db(), user.session.token));
    assert.equal(await people().resolveSession(db(), other.session.token), null);
    const audit = await listAudit(
      db(),
      tenant.orgId,
      { limit: 1 },
      { action: 'user.password_changed', record_id: user.user.id },
    );
    assert.equal(audit[0].actor.id, user.user.id);
  });

  test('team: list, change roles, remove; the last owner can be neither removed nor demoted', async () => {
    const org = await createTenant(t.app);
    const owner = await activeUser('owner', org.orgId);
    const member = await activeUser('member', org.orgId);
    const byOwner = userAudit(owner.user, '127.0.0.1');

    const listed = await listUsers(db(), org.orgId, { limit: 10 });
    assert.deepEqual(listed.map((user) => user.id).sort(), [owner.user.id, member.user.id].sort());
    assert.deepEqual(
      await listUsers(db(), tenant.orgId, { limit: 1000 }).then((users) =>
        users.filter((u) => u.id === owner.user.id),
      ),
      [],
    );

    const demote = inTransaction(db(), (trx) => changeRole(trx, org.orgId, owner.user.id, 'admin', byOwner));
    await assert.rejects(demote, { statusCode: 409, code: 'last_owner' });
    await assert.rejects(
      inTransaction(db(), (trx) => removeUser(trx, org.orgId, owner.user.id, byOwner)),
      {
        code: 'last_owner',
      },
    );
    // Another org's user is not found.
    await assert.rejects(
      inTransaction(db(), (trx) => removeUser(trx, tenant.orgId, member.user.id, byOwner)),
      {
        statusCode: 404,
      },
    );

    const promoted = await inTransaction(db(), (trx) =>
      changeRole(trx, org.orgId, member.user.id, 'owner', byOwner),
    );
    assert.equal(promoted.role, 'owner');
    // Two owners demoting each other at once: one of them stays owner.
    const results = await Promise.allSettled([
      inTransaction(db(), (trx) => changeRole(trx, org.orgId, owner.user.id, 'member', byOwner)),
      inTransaction(db(), (trx) => changeRole(trx, org.orgId, member.user.id, 'member', byOwner)),
    ]);
    assert.deepEqual(results.map((result) => result.status).sort(), ['fulfilled', 'rejected']);

    const remaining = (await listUsers(db(), org.orgId, { limit: 10 })).filter(
      (user) => user.role === 'member',
    );
    await inTransaction(db(), (trx) => removeUser(trx, org.orgId, remaining[0].id, byOwner));
    assert.equal((await listUsers(db(), org.orgId, { limit: 10 })).length, 1);
    const removedEmail = remaining[0].email;
    // Removed: the sessions end, and the email is free again.
    assert.equal(
      await people()
        .signIn(db(), { email: removedEmail, password: PASSWORD }, meta)
        .catch((e) => e.statusCode),
      401,
    );
    const actions = (await listAudit(db(), org.orgId, { limit: 50 })).map((entry) => entry.action);
    assert.ok(actions.includes('user.role_changed'));
    assert.ok(actions.includes('user.removed'));
  });

  test('an invited owner does not count: demoting the last active owner is 409 last_owner', async () => {
    const org = await createTenant(t.app);
    const owner = await activeUser('owner', org.orgId);
    const admin = await activeUser('admin', org.orgId);
    const invited = email();
    await inTransaction(db(), (trx) =>
      people().inviteUser(trx, org.orgId, { email: invited, role: 'owner' }, operator),
    );
    const byAdmin = userAudit(admin.user, '127.0.0.1');
    await assert.rejects(
      inTransaction(db(), (trx) => changeRole(trx, org.orgId, owner.user.id, 'member', operator)),
      { statusCode: 409, code: 'last_owner' },
    );
    await assert.rejects(
      inTransaction(db(), (trx) => removeUser(trx, org.orgId, owner.user.id, operator)),
      { statusCode: 409, code: 'last_owner' },
    );
    // Only an owner may change an invited owner's role; the re-invitation leaves the active owner in place.
    await assert.rejects(
      inTransaction(db(), (trx) =>
        people().inviteUser(trx, org.orgId, { email: invited, role: 'admin' }, byAdmin),
      ),
      { statusCode: 403, code: 'forbidden' },
    );
    await inTransaction(db(), (trx) =>
      people().inviteUser(trx, org.orgId, { email: invited, role: 'admin' }, userAudit(owner.user, null)),
    );
    const owners = (await listUsers(db(), org.orgId, { limit: 10 })).filter(
      (user) => user.role === 'owner' && user.status === 'active',
    );
    assert.deepEqual(
      owners.map((user) => user.id),
      [owner.user.id],
    );
  });

  test('a reset link is emailed once a minute at most, however often it is asked for', async () => {
    const user = await activeUser('member');
    for (let i = 0; i < 3; i++) {
      await inTransaction(db(), (trx) => people().requestPasswordReset(trx, user.email));
      await sendQueuedResets();
    }
    const mail = await adminCall(t.app, 'GET', `/simulator/emails?to=${encodeURIComponent(user.email)}`);
    assert.equal(mail.data.filter((m: { subject: string }) => /Reset/.test(m.subject)).length, 1);
  });

  test('the hourly clean-up forgets ended sessions and expired links, and keeps live ones', async () => {
    const user = await activeUser('member');
    const ended = await people().signIn(db(), { email: user.email, password: PASSWORD }, meta);
    const idle = await people().signIn(db(), { email: user.email, password: PASSWORD }, meta);
    await sql`UPDATE portal_sessions SET expires_at = now() - interval '1 second' WHERE id = ${ended.session.id}`.execute(
      db(),
    );
    await sql`UPDATE portal_sessions SET last_seen_at = now() - interval '13 hours' WHERE id = ${idle.session.id}`.execute(
      db(),
    );
    const { inviteUrl } = await inTransaction(db(), (trx) =>
      people().inviteUser(trx, tenant.orgId, { email: email(), role: 'member' }, operator),
    );
    await sql`UPDATE user_tokens SET expires_at = now() - interval '1 second' WHERE token_hash = ${hashToken(tokenOf(inviteUrl))}`.execute(
      db(),
    );

    await jobRegistry(t.platform).tasks[PORTAL_ACCOUNTS_CLEANUP]({} as never);
    const sessions = await sql<{
      id: string;
    }>`SELECT id FROM portal_sessions WHERE user_id = ${user.user.id}`.execute(db());
    assert.deepEqual(
      sessions.rows.map((row) => row.id),
      [user.session.id],
    );
    const tokens =
      await sql`SELECT 1 FROM user_tokens WHERE token_hash = ${hashToken(tokenOf(inviteUrl))}`.execute(db());
    assert.equal(tokens.rows.length, 0);
  });

  test('the audit log is append-only: UPDATE and DELETE are refused by the database', async () => {
    await assert.rejects(sql`UPDATE audit_log SET action = 'x'`.execute(db()), /append-only/);
    await assert.rejects(sql`DELETE FROM audit_log`.execute(db()), /append-only/);
    await assert.rejects(sql`TRUNCATE audit_log`.execute(db()), /append-only/);
  });
});

describe('portal accounts: an invitation whose email cannot leave', () => {
  let t: TestApp;
  before(async () => {
    // Nothing listens on port 9 of this machine: every send fails at once.
    t = await buildTestApp({ EMAIL_PROVIDER: 'smtp', SMTP_URL: 'smtp://127.0.0.1:9' });
  });
  after(() => t.close());

  test('is 503 service_unavailable and changes nothing', async () => {
    const tenant = await createTenant(t.app);
    const response = await t.app.inject({
      method: 'POST',
      url: `/admin/v1/orgs/${tenant.orgId}/users`,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      payload: { email: 'nobody-reachable@example.test', role: 'owner' },
    });
    assert.equal(response.statusCode, 503, response.body);
    assert.equal(response.json().error, 'service_unavailable');
    assert.deepEqual(await listUsers(t.platform.db, tenant.orgId, { limit: 10 }), []);
    const claims = await sql`SELECT 1 FROM user_emails WHERE email = 'nobody-reachable@example.test'`.execute(
      t.platform.db,
    );
    assert.equal(claims.rows.length, 0);
  });
});
