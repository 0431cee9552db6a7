import type { Config } from '../../config.ts';
import { publicUrl } from '../../config.ts';
import { failedAuthLimit } from '../../platform/auth/failed-auth-limit.ts';
import type { Tenant } from '../../platform/auth/tenant.ts';
import type { Platform } from '../../platform/context.ts';
import { isUuid, newId } from '../../platform/db/ids.ts';
import type { Executor, Trx } from '../../platform/db/pool.ts';
import { ApiError, errors } from '../../platform/http/errors.ts';
import type { PageRequest } from '../../platform/http/pagination.ts';
import { limitedAddress } from '../../platform/http/rate-limit.ts';
import { enqueueJob } from '../../platform/jobs/queue.ts';
import { type EmailProvider, EmailSendError, type OutboundEmail } from '../../providers/email/index.ts';
import { type AuditContext, recordAudit, userAudit } from '../audit/service.ts';
import { getClient } from '../clients/service.ts';
import { getOrg } from '../orgs/service.ts';
import {
  checkPassword,
  hashPassword,
  hashToken,
  newToken,
  normalizeEmail,
  verifyPassword,
} from './credentials.ts';
import type { LiveSessionRow, UserRole, UserRow } from './store.ts';
import * as store from './store.ts';

export type { UserRole, UserStatus } from './store.ts';

/** The user as the admin API and the portal show it. */
export function publicUser(
  row: Pick<UserRow, 'id' | 'email' | 'role' | 'client_id' | 'status' | 'created_at' | 'last_sign_in_at'>,
) {
  return {
    id: row.id,
    email: row.email,
    role: row.role,
    client_id: row.client_id,
    status: row.status,
    created_at: row.created_at,
    last_sign_in_at: row.last_sign_in_at,
  };
}

export type PublicUser = ReturnType<typeof publicUser>;

/** Where a request comes from: noted on the session and in the audit log. */
export interface RequestMeta {
  ip: string | null;
  userAgent?: string | null;
}

export interface NewSession {
  /** The cookie's value: shown here once, only its hash is stored. */
  token: string;
  id: string;
  /** The absolute end of the session (the cookie's expiry); idle expiry comes sooner when it is unused. */
  expiresAt: Date;
}

export interface ResolvedSession {
  session: { id: string; createdAt: Date; lastSeenAt: Date; expiresAt: Date };
  user: PublicUser & { org_id: string };
  org: { id: string; name: string; house_client_id: string };
  /** What the user acts as, as a key would: an agency user on the house client, a client user on its client. */
  tenant: Pick<Tenant, 'orgId' | 'clientId' | 'isClientScoped'>;
}

export const AGENCY_ROLES: readonly UserRole[] = ['owner', 'admin', 'member'];
const USER_ROLES: readonly UserRole[] = [...AGENCY_ROLES, 'client'];

const ROLE_NAMES: Record<UserRole, string> = {
  owner: 'an owner',
  admin: 'an admin',
  member: 'a member',
  client: 'a client user',
};

/** Owners and admins manage the team, agency keys and agency-wide webhooks. */
export function canManageAgency(role: UserRole): boolean {
  return role === 'owner' || role === 'admin';
}

/** The job that emails a password reset link (queued by `requestPasswordReset`). */
export const PASSWORD_RESET_EMAIL_TASK = 'portal_password_reset_email';

/** How often at most a reset link is emailed to one user. */
const RESET_EMAIL_EVERY_MS = 60_000;

/** How often at most a used session's idle clock is written forward. */
const SLIDE_EVERY_MS = 60_000;

const invalidLink = (what: string) =>
  new ApiError(
    404,
    'not_found',
    `This ${what} link is not valid: it was used already, replaced, or has expired.`,
  );

type AccountsConfig = Pick<
  Config,
  | 'publicBaseUrl'
  | 'portalSessionIdleMs'
  | 'portalSessionMaxMs'
  | 'portalInviteTtlMs'
  | 'portalResetTtlMs'
  | 'portalSignInFailuresPerMinute'
>;

/**
 * The portal's people: users, invitations, sign-in, sessions and passwords. One per process
 * (`accounts(platform)`), since it holds the sign-in failure counters; it sends with the process's
 * email provider (`platform.providers.email`).
 * Every function takes the database or the caller's transaction first; the edge opens the transaction.
 */
export class Accounts {
  private readonly failuresByEmail;
  private readonly failuresByAddress;

  constructor(
    private readonly config: AccountsConfig,
    private readonly email: EmailProvider,
    redis: Platform['redis'],
  ) {
    const perMinute = config.portalSignInFailuresPerMinute;
    this.failuresByEmail = failedAuthLimit(redis, perMinute, {
      prefix: 'rl:signin:email:',
      subject: 'for this email',
    });
    this.failuresByAddress = failedAuthLimit(redis, perMinute, { prefix: 'rl:signin:ip:' });
  }

  /** Sends in the caller's transaction: an email that cannot leave now rolls the change back, as a 503. */
  private async sendEmail(email: OutboundEmail): Promise<void> {
    try {
      await this.email.send(email);
    } catch (error) {
      if (!(error instanceof EmailSendError)) throw error;
      throw errors.unavailable(
        `The email to ${email.to} could not be sent (${error.message}); nothing was changed, retry later.`,
        60,
      );
    }
  }

  /** Invites a person (or sends a fresh invitation to one still invited) and emails the link. */
  async inviteUser(
    trx: Trx,
    orgId: string,
    input: { email: string; role: UserRole; client_id?: string | null },
    audit: AuditContext,
  ): Promise<{ user: PublicUser; inviteUrl: string }> {
    const email = normalizeEmail(input.email);
    const clientId = input.client_id ?? null;
    if (!USER_ROLES.includes(input.role))
      throw errors.invalidField('role', `must be one of ${USER_ROLES.join(', ')}`);
    const org = await getOrg(trx, orgId);
    if (input.role === 'client') {
      if (!clientId) throw errors.invalidField('client_id', 'is required for a client user');
      await getClient(trx, orgId, clientId);
    } else if (clientId) {
      throw errors.invalidField('client_id', `is only accepted for client users, not ${input.role}s`);
    }
    if (input.role === 'owner') await requireOwner(trx, orgId, audit, 'invite an owner');

    const id = newId();
    let user: UserRow;
    if (await store.claimEmail(trx, { email, org_id: orgId, user_id: id })) {
      user = await store.insertUser(trx, { org_id: orgId, id, email, role: input.role, client_id: clientId });
    } else {
      const holder = await store.findUserByEmail(trx, email);
      // Inviting again someone who has not accepted yet sends a fresh link; anyone else holds the email.
      if (holder?.org_id !== orgId || holder.status !== 'invited')
        throw errors.conflict('email_in_use', `A user with the email ${email} exists already.`, { email });
      const changes = holder.role !== input.role || holder.client_id !== clientId;
      if (changes && holder.role === 'owner')
        await requireOwner(trx, orgId, audit, 'change the role of an invited owner');
      // The holder is invited, so not an active owner: changing their role leaves the active owners as they are.
      user = changes
        ? await store.updateUser(trx, orgId, holder.id, { role: input.role, client_id: clientId })
        : holder;
      await store.deleteTokens(trx, user, 'invitation');
    }
    const inviteUrl = await this.issueLink(trx, user, 'invitation');
    await recordAudit(trx, orgId, {
      ...audit,
      action: 'user.invited',
      record: { type: 'user', id: user.id },
      clientId,
      details: { email, role: input.role },
    });
    await this.sendEmail({
      key: `user_invitation:${hashToken(inviteUrl).toString('hex')}`,
      to: email,
      subject: `You are invited to ${org.name} on the Agency Platform portal`,
      text:
        `You are invited to join ${org.name} as ${ROLE_NAMES[input.role]}.\n\n` +
        `Choose your password here (the link works once, for ${days(this.config.portalInviteTtlMs)}):\n${inviteUrl}\n`,
    });
    return { user: publicUser(user), inviteUrl };
  }

  /** Sets the password of an invited person from the invitation link, and signs them in. */
  async acceptInvitation(trx: Trx, token: string, password: string, meta: RequestMeta) {
    checkPassword(password);
    const invited = await store.consumeToken(trx, hashToken(token), 'invitation');
    if (invited?.status !== 'invited') throw invalidLink('invitation');
    const user = await store.updateUser(trx, invited.org_id, invited.id, {
      status: 'active',
      password_hash: await hashPassword(password),
    });
    await recordAudit(trx, user.org_id, {
      ...userAudit(user, meta.ip),
      action: 'user.activated',
      record: { type: 'user', id: user.id },
      clientId: user.client_id,
    });
    return { user: publicUser(user), session: await this.startSession(trx, user, meta) };
  }

  /**
   * Signs in with an email and a password: 401 `unauthorized` with one message whether the email or the
   * password is wrong; failures are throttled per email and per address (429 `rate_limited`).
   */
  async signIn(db: Executor, input: { email: string; password: string }, meta: RequestMeta) {
    const email = input.email.trim().toLowerCase();
    const attempt = async () => {
      const user = await store.findUserByEmail(db, email);
      const matches = await verifyPassword(user?.password_hash ?? null, input.password);
      if (!user || !matches || user.status !== 'active')
        throw errors.unauthorized('The email or the password is not right.');
      return user;
    };
    const user = await this.failuresByAddress.guardKey(meta.ip ? limitedAddress(meta.ip) : 'unknown', () =>
      this.failuresByEmail.guardKey(email, attempt),
    );
    return { user: publicUser(user), session: await this.startSession(db, user, meta) };
  }

  private async startSession(db: Executor, user: UserRow, meta: RequestMeta): Promise<NewSession> {
    const { token, hash } = newToken();
    const session = await store.insertSession(db, {
      token_hash: hash,
      id: newId(),
      org_id: user.org_id,
      user_id: user.id,
      ip: meta.ip,
      user_agent: meta.userAgent?.slice(0, 500) ?? null,
      expires_at: new Date(Date.now() + this.config.portalSessionMaxMs),
    });
    return { token, id: session.id, expiresAt: session.expires_at };
  }

  /**
   * The session a cookie's token stands for, or null when it is unknown, signed out, idle past
   * `PORTAL_SESSION_IDLE`, past `PORTAL_SESSION_MAX`, or its user is no longer active. A used session's
   * idle clock moves forward, written at most once a minute.
   */
  async resolveSession(db: Executor, token: string): Promise<ResolvedSession | null> {
    if (token.length === 0 || token.length > 100) return null;
    const row = await store.findLiveSession(db, hashToken(token), this.config.portalSessionIdleMs);
    if (!row) return null;
    if (Date.now() - row.last_seen_at.getTime() > SLIDE_EVERY_MS)
      await store.touchSession(db, row.session_id);
    return resolved(row);
  }

  /** Ends the session of this token (nothing when there is none). */
  async signOut(trx: Trx, token: string): Promise<void> {
    await store.deleteSessionByHash(trx, hashToken(token));
  }

  /**
   * Asks for a reset link when an active user holds the email; the answer is the same either way. The
   * email is sent by a job queued in `trx` (`emailPasswordReset`), so the answer never waits for the
   * mail server: its time tells nothing of whether the address has an account.
   */
  async requestPasswordReset(trx: Trx, email: string): Promise<void> {
    const normalized = email.trim().toLowerCase();
    const user = await store.findUserByEmail(trx, normalized);
    if (user?.status !== 'active') return;
    await enqueueJob(
      trx,
      PASSWORD_RESET_EMAIL_TASK,
      { orgId: user.org_id, userId: user.id },
      { jobKey: `${PASSWORD_RESET_EMAIL_TASK}:${user.id}` },
    );
  }

  /** `portal_password_reset_email`: emails a fresh reset link to a user still active. */
  async emailPasswordReset(trx: Trx, payload: unknown): Promise<void> {
    const { orgId, userId } = (payload ?? {}) as { orgId?: unknown; userId?: unknown };
    if (typeof orgId !== 'string' || !isUuid(orgId) || typeof userId !== 'string' || !isUuid(userId)) return;
    const user = await store.findUser(trx, orgId, userId);
    if (user?.status !== 'active') return;
    // One email a minute at most: asking again and again does not flood the mailbox.
    if (await store.issuedRecently(trx, user, 'reset', RESET_EMAIL_EVERY_MS)) return;
    await store.deleteTokens(trx, user, 'reset');
    const resetUrl = await this.issueLink(trx, user, 'reset');
    await this.sendEmail({
      key: `user_reset:${hashToken(resetUrl).toString('hex')}`,
      to: user.email,
      subject: 'Reset your Agency Platform portal password',
      text:
        `Someone asked to reset the password of ${user.email}. If it was you, choose a new one here ` +
        `(the link works once, for ${hours(this.config.portalResetTtlMs)}):\n${resetUrl}\n\n` +
        'If it was not you, ignore this email: your password stays as it is.\n',
    });
  }

  /** Sets a new password from a reset link; every session of the user ends. */
  async resetPassword(trx: Trx, token: string, password: string): Promise<{ user: PublicUser }> {
    checkPassword(password);
    const found = await store.consumeToken(trx, hashToken(token), 'reset');
    if (found?.status !== 'active') throw invalidLink('password reset');
    const user = await this.setPassword(trx, found, password, null, null);
    return { user: publicUser(user) };
  }

  /**
   * Changes the signed-in user's password: 400 naming `current_password` when it is wrong; wrong ones
   * are throttled with the email's failed sign-ins (429 `rate_limited`). Every other
   * session of the user ends; `keepSessionId` (the one making the change) stays.
   */
  async changePassword(
    trx: Trx,
    user: { org_id: string; id: string },
    current: string,
    next: string,
    keepSessionId: string | null,
    meta: RequestMeta = { ip: null },
  ): Promise<void> {
    checkPassword(next, 'new_password');
    const row = await store.findUser(trx, user.org_id, user.id);
    if (!row) throw errors.notFound('User', user.id);
    // Wrong current passwords count with the email's failed sign-ins: a stolen session cannot guess on.
    try {
      await this.failuresByEmail.guardKey(row.email, async () => {
        if (!(await verifyPassword(row.password_hash, current)))
          throw errors.unauthorized('The current password is not right.');
      });
    } catch (error) {
      if (error instanceof ApiError && error.statusCode === 401)
        throw errors.invalidField('current_password', 'is not your current password');
      throw error;
    }
    await this.setPassword(trx, row, next, keepSessionId, meta.ip);
  }

  private async setPassword(
    trx: Trx,
    user: UserRow,
    password: string,
    keepSessionId: string | null,
    ip: string | null,
  ) {
    const updated = await store.updateUser(trx, user.org_id, user.id, {
      password_hash: await hashPassword(password),
    });
    await store.deleteSessions(trx, user, keepSessionId);
    await store.deleteTokens(trx, user, 'reset');
    await recordAudit(trx, user.org_id, {
      ...userAudit(user, ip),
      action: 'user.password_changed',
      record: { type: 'user', id: user.id },
      clientId: user.client_id,
    });
    return updated;
  }

  private async issueLink(trx: Trx, user: UserRow, purpose: store.TokenPurpose): Promise<string> {
    const { token, hash } = newToken();
    const ttl = purpose === 'invitation' ? this.config.portalInviteTtlMs : this.config.portalResetTtlMs;
    await store.insertToken(trx, {
      token_hash: hash,
      purpose,
      org_id: user.org_id,
      user_id: user.id,
      expires_at: new Date(Date.now() + ttl),
    });
    return publicUrl(this.config, `/portal/${purpose === 'invitation' ? 'invitations' : 'reset'}/${token}`);
  }
}

/**
 * A user who can sign in at once, with this password: the demo seed's (anyone else is invited and
 * chooses their own).
 */
export async function createActiveUser(
  trx: Trx,
  orgId: string,
  input: { email: string; role: UserRole; client_id?: string | null },
  password: string,
  audit: AuditContext,
) {
  checkPassword(password);
  const email = normalizeEmail(input.email);
  const id = newId();
  if (!(await store.claimEmail(trx, { email, org_id: orgId, user_id: id })))
    throw errors.conflict('email_in_use', `A user with the email ${email} exists already.`, { email });
  const user = await store.insertUser(trx, {
    org_id: orgId,
    id,
    email,
    role: input.role,
    client_id: input.client_id ?? null,
    status: 'active',
    password_hash: await hashPassword(password),
  });
  await recordAudit(trx, orgId, {
    ...audit,
    action: 'user.activated',
    record: { type: 'user', id },
    clientId: user.client_id,
    details: { email, role: user.role },
  });
  return publicUser(user);
}

/** The org's users, invited ones included, newest first. */
export async function listUsers(db: Executor, orgId: string, page: PageRequest<string>) {
  return (await store.listUsers(db, orgId, page)).map(publicUser);
}

export async function getUser(db: Executor, orgId: string, userId: string) {
  const user = await store.findUser(db, orgId, userId);
  if (!user) throw errors.notFound('User', userId);
  return publicUser(user);
}

const lastOwner = () =>
  errors.conflict(
    'last_owner',
    'This is the last owner of the org (an invited owner counts once they accept): make another user owner first.',
  );

/**
 * Owners are above admins: only an owner may grant the owner role, or change or remove an owner. 403
 * `forbidden` when the actor is not an owner; the operator (admin API) may do anything.
 */
async function requireOwner(db: Executor, orgId: string, audit: AuditContext, what: string): Promise<void> {
  if (audit.actor.type === 'operator') return;
  const actor = audit.actor.id ? await store.findUser(db, orgId, audit.actor.id) : undefined;
  if (actor?.role !== 'owner') throw errors.forbidden(`Only an owner may ${what}.`);
}

/**
 * Whether changing or removing this user would leave the org without an active owner. Only active owners
 * count: an invited owner may never accept, and a re-invitation may change their role.
 */
function isLastActiveOwner(user: UserRow, activeOwners: { id: string }[]): boolean {
  return (
    user.role === 'owner' && user.status === 'active' && activeOwners.every((owner) => owner.id === user.id)
  );
}

/**
 * Changes an agency user's role among owner, admin and member; 409 `last_owner` when it would leave the org
 * without an owner. A client user stays one (invite them again as an agency user instead).
 */
export async function changeRole(
  trx: Trx,
  orgId: string,
  userId: string,
  role: UserRole,
  audit: AuditContext,
) {
  if (!AGENCY_ROLES.includes(role))
    throw errors.invalidField('role', 'must be owner, admin or member: a client user is invited as one');
  const owners = await store.lockActiveOwners(trx, orgId);
  const user = await store.findUser(trx, orgId, userId);
  if (!user) throw errors.notFound('User', userId);
  if (user.role === 'client') throw errors.invalidField('role', 'of a client user cannot change');
  if (user.role === role) return publicUser(user);
  if (role === 'owner') await requireOwner(trx, orgId, audit, 'make someone an owner');
  if (user.role === 'owner') await requireOwner(trx, orgId, audit, 'change the role of an owner');
  if (isLastActiveOwner(user, owners)) throw lastOwner();
  const updated = await store.updateUser(trx, orgId, userId, { role });
  await recordAudit(trx, orgId, {
    ...audit,
    action: 'user.role_changed',
    record: { type: 'user', id: userId },
    details: { email: user.email, from: user.role, to: role },
  });
  return publicUser(updated);
}

/** Removes a user, their sessions and links; 409 `last_owner` for the last owner. */
export async function removeUser(
  trx: Trx,
  orgId: string,
  userId: string,
  audit: AuditContext,
): Promise<void> {
  const owners = await store.lockActiveOwners(trx, orgId);
  const user = await store.findUser(trx, orgId, userId);
  if (!user) throw errors.notFound('User', userId);
  if (user.role === 'owner') await requireOwner(trx, orgId, audit, 'remove an owner');
  if (isLastActiveOwner(user, owners)) throw lastOwner();
  await store.deleteUser(trx, user);
  await recordAudit(trx, orgId, {
    ...audit,
    action: 'user.removed',
    record: { type: 'user', id: userId },
    clientId: user.client_id,
    details: { email: user.email, role: user.role },
  });
}

function resolved(row: LiveSessionRow): ResolvedSession {
  const isClient = row.role === 'client';
  return {
    session: {
      id: row.session_id,
      createdAt: row.session_created_at,
      lastSeenAt: row.last_seen_at,
      expiresAt: row.expires_at,
    },
    user: { ...publicUser(row), org_id: row.org_id },
    org: { id: row.org_id, name: row.org_name, house_client_id: row.house_client_id },
    tenant: {
      orgId: row.org_id,
      clientId: isClient ? row.client_id! : row.house_client_id,
      isClientScoped: isClient,
    },
  };
}

const days = (ms: number) =>
  ms % 86_400_000 === 0 ? `${ms / 86_400_000} days` : `${Math.round(ms / 3_600_000)} hours`;
const hours = (ms: number) =>
  ms % 3_600_000 === 0
    ? `${ms / 3_600_000} hour${ms === 3_600_000 ? '' : 's'}`
    : `${Math.round(ms / 60_000)} minutes`;

const instances = new WeakMap<Platform, Accounts>();

/** The process's `Accounts` (its sign-in failure counters, shared by the portal and the admin API). */
export function accounts(platform: Platform): Accounts {
  let instance = instances.get(platform);
  if (!instance) {
    instance = new Accounts(platform.config, platform.providers.email, platform.redis);
    instances.set(platform, instance);
  }
  return instance;
}
