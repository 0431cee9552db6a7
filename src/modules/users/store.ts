import { type Generated, type Insertable, type Selectable, sql } from 'kysely';
import type { Executor, Trx } from '../../platform/db/pool.ts';
import { prepare } from '../../platform/db/prepared.ts';
import type { NullableTimestamp } from '../../platform/db/schema.ts';
import type { PageRequest } from '../../platform/http/pagination.ts';

export type UserRole = 'owner' | 'admin' | 'member' | 'client';
export type UserStatus = 'invited' | 'active' | 'disabled';
export type TokenPurpose = 'invitation' | 'reset';

export interface UsersTable {
  org_id: string;
  id: string;
  email: string;
  role: UserRole;
  client_id: string | null;
  status: Generated<UserStatus>;
  password_hash: string | null;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
  last_sign_in_at: NullableTimestamp;
}

export interface UserEmailsTable {
  email: string;
  org_id: string;
  user_id: string;
}

export interface PortalSessionsTable {
  token_hash: Buffer;
  id: string;
  org_id: string;
  user_id: string;
  ip: string | null;
  user_agent: string | null;
  created_at: Generated<Date>;
  last_seen_at: Generated<Date>;
  expires_at: Date;
}

export interface UserTokensTable {
  token_hash: Buffer;
  purpose: TokenPurpose;
  org_id: string;
  user_id: string;
  expires_at: Date;
  created_at: Generated<Date>;
}

declare module '../../platform/db/schema.ts' {
  interface Database {
    users: UsersTable;
    user_emails: UserEmailsTable;
    portal_sessions: PortalSessionsTable;
    user_tokens: UserTokensTable;
  }
}

export type UserRow = Selectable<UsersTable>;
export type SessionRow = Selectable<PortalSessionsTable>;

/** Claims the email for a user platform-wide; false when another user holds it. */
export async function claimEmail(trx: Trx, row: UserEmailsTable): Promise<boolean> {
  const claimed = await trx
    .insertInto('user_emails')
    .values(row)
    .onConflict((conflict) => conflict.column('email').doNothing())
    .returning('email')
    .executeTakeFirst();
  return claimed !== undefined;
}

export function insertUser(trx: Trx, row: Insertable<UsersTable>) {
  return trx.insertInto('users').values(row).returningAll().executeTakeFirstOrThrow();
}

export function findUser(db: Executor, orgId: string, userId: string) {
  return db
    .selectFrom('users')
    .selectAll()
    .where('org_id', '=', orgId)
    .where('id', '=', userId)
    .executeTakeFirst();
}

/** The user who holds this email, of whichever org. */
export function findUserByEmail(db: Executor, email: string) {
  return db
    .selectFrom('user_emails as e')
    .innerJoin('users as u', (join) =>
      join.onRef('u.org_id', '=', 'e.org_id').onRef('u.id', '=', 'e.user_id'),
    )
    .selectAll('u')
    .where('e.email', '=', email)
    .executeTakeFirst();
}

export function listUsers(db: Executor, orgId: string, page: PageRequest<string>) {
  let query = db.selectFrom('users').selectAll().where('org_id', '=', orgId);
  if (page.after) query = query.where('id', '<', page.after);
  return query.orderBy('id', 'desc').limit(page.limit).execute();
}

/**
 * The org's active owners, locked until the transaction ends: a demotion or a removal that counts them
 * waits for another in flight, and then sees the owners that are left. An invited owner does not count:
 * until they accept, nobody can act as them.
 */
export function lockActiveOwners(trx: Trx, orgId: string) {
  return trx
    .selectFrom('users')
    .select('id')
    .where('org_id', '=', orgId)
    .where('role', '=', 'owner')
    .where('status', '=', 'active')
    .forUpdate()
    .execute();
}

export function updateUser(
  trx: Trx,
  orgId: string,
  userId: string,
  changes: Partial<Pick<UserRow, 'role' | 'client_id' | 'status' | 'password_hash' | 'last_sign_in_at'>>,
) {
  return trx
    .updateTable('users')
    .set({ ...changes, updated_at: sql<Date>`now()` })
    .where('org_id', '=', orgId)
    .where('id', '=', userId)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Deletes the user with its email claim, sessions and links. */
export async function deleteUser(trx: Trx, user: UserRow): Promise<void> {
  await deleteSessions(trx, user, null);
  await trx
    .deleteFrom('user_tokens')
    .where('org_id', '=', user.org_id)
    .where('user_id', '=', user.id)
    .execute();
  await trx.deleteFrom('user_emails').where('email', '=', user.email).execute();
  await trx.deleteFrom('users').where('org_id', '=', user.org_id).where('id', '=', user.id).execute();
}

export async function insertToken(trx: Trx, row: Insertable<UserTokensTable>): Promise<void> {
  await trx.insertInto('user_tokens').values(row).execute();
}

/** Drops the user's unused links of one purpose (a new one replaces them). */
export async function deleteTokens(trx: Trx, user: UserRow, purpose: TokenPurpose): Promise<void> {
  await trx
    .deleteFrom('user_tokens')
    .where('org_id', '=', user.org_id)
    .where('user_id', '=', user.id)
    .where('purpose', '=', purpose)
    .execute();
}

/** Uses a link up: deletes it and returns its user, or undefined when it is unknown, used or expired. */
export function consumeToken(trx: Trx, hash: Buffer, purpose: TokenPurpose) {
  return trx
    .with('used', (db) =>
      db
        .deleteFrom('user_tokens')
        .where('token_hash', '=', hash)
        .where('purpose', '=', purpose)
        .where('expires_at', '>', sql<Date>`now()`)
        .returning(['org_id', 'user_id']),
    )
    .selectFrom('used')
    .innerJoin('users as u', (join) =>
      join.onRef('u.org_id', '=', 'used.org_id').onRef('u.id', '=', 'used.user_id'),
    )
    .selectAll('u')
    .forUpdate('u')
    .executeTakeFirst();
}

/** Starts a session and notes the sign-in, in one statement. */
export async function insertSession(db: Executor, row: Insertable<PortalSessionsTable>): Promise<SessionRow> {
  const result = await db
    .with('session', (q) => q.insertInto('portal_sessions').values(row).returningAll())
    .with('signed_in', (q) =>
      q
        .updateTable('users')
        .set({ last_sign_in_at: sql<Date>`now()` })
        .where('org_id', '=', row.org_id)
        .where('id', '=', row.user_id)
        .returning('id'),
    )
    .selectFrom('session')
    .selectAll()
    .executeTakeFirstOrThrow();
  return result;
}

/**
 * A live session by its token's hash, with its user and org: unexpired, not idle past `idleMs`, its user active.
 * Prepared: it runs on every portal request.
 */
const liveSessionStatement = prepare(
  (_db, p: { hash: Buffer; idleMs: number }) =>
    sql<LiveSessionRow>`
    SELECT s.id AS session_id, s.created_at AS session_created_at, s.last_seen_at, s.expires_at,
           u.org_id, u.id, u.email, u.role, u.client_id, u.status, u.created_at, u.last_sign_in_at,
           o.name AS org_name, o.house_client_id
    FROM portal_sessions s
    JOIN users u ON u.org_id = s.org_id AND u.id = s.user_id
    JOIN orgs o ON o.id = s.org_id
    WHERE s.token_hash = ${p.hash}
      AND s.expires_at > now()
      AND s.last_seen_at > now() - ${p.idleMs} * interval '1 millisecond'
      AND u.status = 'active'`,
);

export interface LiveSessionRow {
  session_id: string;
  session_created_at: Date;
  last_seen_at: Date;
  expires_at: Date;
  org_id: string;
  id: string;
  email: string;
  role: UserRole;
  client_id: string | null;
  status: UserStatus;
  created_at: Date;
  last_sign_in_at: Date | null;
  org_name: string;
  house_client_id: string;
}

export async function findLiveSession(db: Executor, hash: Buffer, idleMs: number) {
  const [row] = await liveSessionStatement.run(db, { hash, idleMs });
  return row;
}

export async function touchSession(db: Executor, sessionId: string): Promise<void> {
  await db
    .updateTable('portal_sessions')
    .set({ last_seen_at: sql<Date>`now()` })
    .where('id', '=', sessionId)
    .execute();
}

export async function deleteSessionByHash(trx: Trx, hash: Buffer): Promise<void> {
  await trx.deleteFrom('portal_sessions').where('token_hash', '=', hash).execute();
}

/** Ends every session of the user but `keepSessionId` (all of them when null). */
export async function deleteSessions(trx: Trx, user: UserRow, keepSessionId: string | null): Promise<void> {
  let query = trx
    .deleteFrom('portal_sessions')
    .where('org_id', '=', user.org_id)
    .where('user_id', '=', user.id);
  if (keepSessionId) query = query.where('id', '<>', keepSessionId);
  await query.execute();
}

/** Whether a link of this purpose was issued to the user in the last `withinMs`. */
export async function issuedRecently(db: Executor, user: UserRow, purpose: TokenPurpose, withinMs: number) {
  const row = await db
    .selectFrom('user_tokens')
    .select('token_hash')
    .where('org_id', '=', user.org_id)
    .where('user_id', '=', user.id)
    .where('purpose', '=', purpose)
    .where('created_at', '>', sql<Date>`now() - ${withinMs} * interval '1 millisecond'`)
    .executeTakeFirst();
  return row !== undefined;
}

/** Deletes sessions past their end or idle past `idleMs`, and links past their expiry; the counts. */
export async function deleteExpired(db: Executor, idleMs: number) {
  const sessions = await db
    .deleteFrom('portal_sessions')
    .where((eb) =>
      eb.or([
        eb('expires_at', '<=', sql<Date>`now()`),
        eb('last_seen_at', '<=', sql<Date>`now() - ${idleMs} * interval '1 millisecond'`),
      ]),
    )
    .executeTakeFirst();
  const tokens = await db
    .deleteFrom('user_tokens')
    .where('expires_at', '<=', sql<Date>`now()`)
    .executeTakeFirst();
  return { sessions: Number(sessions.numDeletedRows), tokens: Number(tokens.numDeletedRows) };
}
