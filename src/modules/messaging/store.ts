import { type Generated, type Insertable, type Selectable, sql } from 'kysely';
import type { TenantScope } from '../../platform/auth/tenant.ts';
import { firstIdAt } from '../../platform/db/ids.ts';
import type { Executor, Trx } from '../../platform/db/pool.ts';
import type { Json, MetadataColumn } from '../../platform/db/schema.ts';
import { whereOwned, whereTenant } from '../../platform/db/tenant-rows.ts';
import type { PageRequest } from '../../platform/http/pagination.ts';

declare module '../../platform/db/schema.ts' {
  interface Database {
    sms_conversations: SmsConversationsTable;
    sms_messages: SmsMessagesTable;
  }
}

export type MessageDirection = 'inbound' | 'outbound';
export type MessageStatus =
  | 'queued'
  | 'sending'
  | 'sent'
  | 'delivered'
  | 'undelivered'
  | 'failed'
  | 'received';
export type SendState = 'pending' | 'done' | 'unconfirmed';

export interface SmsConversationsTable {
  id: string;
  org_id: string;
  client_id: string;
  our_number: string;
  phone_number: string;
  contact_id: string | null;
  status: Generated<'open' | 'closed'>;
  last_message_at: Generated<Date | null>;
  unread_count: Generated<number>;
  total_messages: Generated<number>;
  provider: string;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

export interface SmsMessagesTable {
  id: string;
  org_id: string;
  client_id: string;
  conversation_id: string;
  direction: MessageDirection;
  from_number: string;
  to_number: string;
  body: string;
  media_urls: string[];
  segments: number;
  encoding: string;
  fuel_cost: number;
  status: MessageStatus;
  error_code: string | null;
  contact_id: string | null;
  company_id: string | null;
  deal_id: string | null;
  provider: string;
  provider_message_id: string | null;
  provider_error_code: string | null;
  cause_key: string | null;
  metadata: MetadataColumn;
  /** The send's leased work (platform/jobs/leased.ts); `unconfirmed` is its "maybe done" state. */
  send_state: SendState | null;
  send_lease_id: string | null;
  send_lease_until: Date | null;
  send_attempts: Generated<number>;
  /** A provider report held until due (the simulator's), then applied as leased work. */
  report: Json<Record<string, unknown>> | null;
  report_lease_id: string | null;
  report_lease_until: Date | null;
  report_attempts: Generated<number>;
  created_at: Generated<Date>;
  sent_at: Date | null;
  delivered_at: Date | null;
  updated_at: Generated<Date>;
}

export type ConversationRow = Selectable<SmsConversationsTable>;
export type MessageRow = Selectable<SmsMessagesTable>;

/**
 * The conversation of (client, our number, remote number), opened when there is none, with one more
 * message counted (and one more unread for an inbound one). One statement: concurrent first messages of
 * a pair meet on the unique key and both count.
 */
export async function bumpConversation(
  trx: Trx,
  row: Insertable<SmsConversationsTable>,
  inbound: boolean,
  at: Date,
): Promise<ConversationRow> {
  const unread = inbound ? 1 : 0;
  const { rows } = await sql<ConversationRow>`
    INSERT INTO sms_conversations
      (id, org_id, client_id, our_number, phone_number, contact_id, provider, last_message_at,
       unread_count, total_messages)
    VALUES (${row.id}, ${row.org_id}, ${row.client_id}, ${row.our_number}, ${row.phone_number},
            ${row.contact_id ?? null}, ${row.provider}, ${at}, ${unread}, 1)
    ON CONFLICT (org_id, client_id, our_number, phone_number) DO UPDATE SET
      total_messages = sms_conversations.total_messages + 1,
      unread_count = sms_conversations.unread_count + ${unread},
      last_message_at = GREATEST(sms_conversations.last_message_at, EXCLUDED.last_message_at),
      contact_id = COALESCE(sms_conversations.contact_id, EXCLUDED.contact_id),
      status = CASE WHEN ${inbound} THEN 'open' ELSE sms_conversations.status END,
      updated_at = now()
    RETURNING *`.execute(trx);
  return rows[0]!;
}

export function insertMessage(trx: Trx, row: Insertable<SmsMessagesTable>) {
  return trx
    .insertInto('sms_messages')
    .values(row)
    .onConflict((conflict) => conflict.columns(['org_id', 'cause_key']).doNothing())
    .returningAll()
    .executeTakeFirst();
}

/** An inbound message once per carrier id: a repeated webhook inserts nothing. */
export function insertInboundMessage(trx: Trx, row: Insertable<SmsMessagesTable>) {
  return trx
    .insertInto('sms_messages')
    .values(row)
    .onConflict((conflict) => conflict.columns(['org_id', 'provider', 'provider_message_id']).doNothing())
    .returningAll()
    .executeTakeFirst();
}

export function findMessageByCause(db: Executor, tenant: TenantScope, causeKey: string) {
  return db
    .selectFrom('sms_messages')
    .selectAll()
    .where('org_id', '=', tenant.orgId)
    .where('cause_key', '=', causeKey)
    .executeTakeFirst();
}

export function findInbound(db: Executor, provider: string, providerMessageId: string) {
  return db
    .selectFrom('sms_messages')
    .selectAll()
    .where('provider', '=', provider)
    .where('provider_message_id', '=', providerMessageId)
    .executeTakeFirst();
}

export function lockMessage(trx: Trx, id: string) {
  return trx.selectFrom('sms_messages').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
}

export function lockMessageOfProvider(trx: Trx, provider: string, providerMessageId: string) {
  return trx
    .selectFrom('sms_messages')
    .selectAll()
    .where('provider', '=', provider)
    .where('provider_message_id', '=', providerMessageId)
    .forUpdate()
    .executeTakeFirst();
}

export function updateMessage(trx: Executor, id: string, changes: Partial<Insertable<SmsMessagesTable>>) {
  return trx
    .updateTable('sms_messages')
    .set({ ...changes, updated_at: new Date() })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Clears a held report once applied (only that one: a newer report held since stays). */
export async function clearReport(trx: Trx, message: { org_id: string; id: string }, report: unknown) {
  await sql`
    UPDATE sms_messages SET report = NULL, report_lease_until = NULL, report_lease_id = NULL
    WHERE org_id = ${message.org_id} AND id = ${message.id} AND report = ${JSON.stringify(report)}::jsonb`.execute(
    trx,
  );
}

/** Holds a report on its message until `after` (a repeat of the same report changes nothing new). */
export async function holdReport(db: Executor, messageId: string, report: unknown, afterMs: number) {
  await sql`
    UPDATE sms_messages SET report = ${JSON.stringify(report)}::jsonb,
                            report_lease_until = now() + ${afterMs} * interval '1 millisecond'
    WHERE id = ${messageId}`.execute(db);
}

// ---- conversations

export interface ConversationFilter {
  contact_id?: string;
  phone_number?: string;
  unread?: boolean;
}

export interface ConversationCursor {
  lastMessageAt: string | null;
  id: string;
}

export async function listConversations(
  db: Executor,
  tenant: TenantScope,
  filter: ConversationFilter,
  page: PageRequest<ConversationCursor>,
): Promise<ConversationRow[]> {
  let query = db.selectFrom('sms_conversations').selectAll().$call(whereTenant(tenant));
  if (filter.contact_id !== undefined) query = query.where('contact_id', '=', filter.contact_id);
  if (filter.phone_number !== undefined) query = query.where('phone_number', '=', filter.phone_number);
  if (filter.unread) query = query.where('unread_count', '>', 0);
  const after = page.after;
  if (after) {
    // Order: last_message_at DESC NULLS LAST, id DESC (PostgreSQL puts NULLs first in DESC by default,
    // so the sort key is coalesced to -infinity).
    const at = after.lastMessageAt === null ? '-infinity' : after.lastMessageAt;
    query = query.where(
      sql<boolean>`(COALESCE(last_message_at, '-infinity'::timestamptz), id) < (${at}::timestamptz, ${after.id}::uuid)`,
    );
  }
  return query
    .orderBy(sql`COALESCE(last_message_at, '-infinity'::timestamptz)`, 'desc')
    .orderBy('id', 'desc')
    .limit(page.limit)
    .execute();
}

export function findConversation(db: Executor, tenant: TenantScope, id: string) {
  return db.selectFrom('sms_conversations').selectAll().$call(whereOwned(tenant, id)).executeTakeFirst();
}

/** Takes back the count of a message its conversation was bumped for but that was not stored. */
export async function uncountMessage(trx: Trx, tenant: TenantScope, id: string): Promise<void> {
  await trx
    .updateTable('sms_conversations')
    .set({ total_messages: sql`greatest(total_messages - 1, 0)` })
    .$call(whereOwned(tenant, id))
    .execute();
}

export function updateConversation(
  trx: Trx,
  tenant: TenantScope,
  id: string,
  changes: { status?: 'open' | 'closed'; unread_count?: number },
) {
  return trx
    .updateTable('sms_conversations')
    .set({ ...changes, updated_at: new Date() })
    .$call(whereOwned(tenant, id))
    .returningAll()
    .executeTakeFirst();
}

export function listMessages(
  db: Executor,
  tenant: TenantScope,
  conversationId: string,
  page: PageRequest<string>,
): Promise<MessageRow[]> {
  let query = db
    .selectFrom('sms_messages')
    .selectAll()
    .$call(whereTenant(tenant))
    .where('conversation_id', '=', conversationId);
  if (page.after !== undefined) query = query.where('id', '<', page.after);
  return query.orderBy('id', 'desc').limit(page.limit).execute();
}

/** Messages (both directions) created from `since` on: one client's, or the whole org's. */
export async function countMessagesSince(
  db: Executor,
  scope: { orgId: string; clientId: string | null },
  since: Date,
): Promise<number> {
  let query = db
    .selectFrom('sms_messages')
    .where('org_id', '=', scope.orgId)
    .where('id', '>=', firstIdAt(since));
  if (scope.clientId !== null) query = query.where('client_id', '=', scope.clientId);
  const row = await query.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  return Number(row.n);
}
