import type { TenantScope } from '../../platform/auth/tenant.ts';
import { isUuid, newId } from '../../platform/db/ids.ts';
import type { Executor, Trx } from '../../platform/db/pool.ts';
import { emit } from '../../platform/events/emit.ts';
import type { Hook } from '../../platform/hooks.ts';
import { errors } from '../../platform/http/errors.ts';
import type { Keyset, PageRequest } from '../../platform/http/pagination.ts';
import { assertReferences } from '../../platform/http/references.ts';
import {
  type InboundSms as CarrierInboundSms,
  countSegments,
  type SmsErrorCode,
  type SmsProviderName,
  type SmsStatusUpdate,
} from '../../providers/sms/index.ts';
import { createActivity } from '../activities/service.ts';
import { COMPANY } from '../companies/service.ts';
import { applyPhoneConsentKeyword, CONTACT, normalizePhone, phoneReach } from '../contacts/service.ts';
import { DEAL } from '../deals/service.ts';
import { debitFuel, refundFuel } from '../fuel/service.ts';
import { chooseSender, numberOwner } from '../numbers/service.ts';
import {
  bumpConversation,
  type ConversationCursor,
  type ConversationFilter,
  type ConversationRow,
  countMessagesSince,
  findConversation,
  findInbound,
  findMessageByCause,
  insertInboundMessage,
  insertMessage,
  listConversations,
  listMessages,
  lockMessage,
  lockMessageOfProvider,
  type MessageRow,
  type MessageStatus,
  uncountMessage,
  updateConversation,
  updateMessage,
} from './store.ts';

/**
 * SMS, both ways. An outbound message is accepted in the caller's transaction (`sendMessage`): its
 * conversation, its row (`queued`), its timeline activity and its FUEL debit, the debit last so the
 * org's balance row is locked for as short a time as possible. After commit a worker loop claims it
 * under a lease, checks consent again and hands it to the provider exactly once (see sender.ts).
 * Inbound messages are routed by their `to` number (`receiveMessage`); `STOP`/`START` keywords change
 * the contact phone's consent; the `inboundMessage` hook's handlers (`src/wiring.ts`) run in the storing
 * transaction. Every function here runs in its caller's transaction: the route, job or loop opens it.
 */

/** The FUEL ledger's reference type of an SMS debit (its id is the message id). */
export const FUEL_REFERENCE = 'sms_message';
export const MAX_BODY = 1600;
export const MAX_MEDIA = 10;
const DEFAULT_COUNTRY = 'US';

// ---- the messaging contract (consumed by sequences)

export interface OutboundSms {
  to: string; // E.164
  body: string;
  from?: string; // E.164 of the org's numbers; chosen with chooseSender when absent
  contactId?: string | null;
  /** Unique per cause in the org, e.g. `api:<uuid>` or `sequence_step:<enrollment>:<step>`: the same key
   *  again returns the first message and sends and debits nothing more. */
  causeKey: string;
  /** Echoed in the metadata of the message's events (`sms.sent`, `sms.delivery_failed`). */
  metadata?: Record<string, unknown>;
}

export interface InboundSms {
  id: string;
  orgId: string;
  clientId: string;
  contactId: string | null;
  conversationId: string;
  from: string;
  to: string;
  body: string;
  receivedAt: Date;
}

export type Message = ReturnType<typeof toMessage>;
export type Conversation = ReturnType<typeof toConversation>;

/**
 * Accepts an outbound message in `trx`: the conversation, the message (`queued`), the contact's `sms`
 * activity and the FUEL debit (1 per segment, cause `sms_message:<message id>`), which is the last
 * statement. The same `causeKey` again returns the first message with `created: false` and changes
 * nothing. Consent is checked when the message is sent, after commit. Throws 402 `fuel_exhausted`,
 * 422 `no_sender_number`, 400 `validation_error`. `provider` is the one the process sends with
 * (`platform.providers.sms.name`), recorded on the message.
 */
export async function sendMessage(
  trx: Trx,
  tenant: TenantScope,
  sms: OutboundSms,
  provider: SmsProviderName,
): Promise<{ message: Message; created: boolean }> {
  return acceptMessage(trx, tenant, sms, provider);
}

// ---- shapes

export function toMessage(row: MessageRow) {
  return {
    id: row.id,
    conversation_id: row.conversation_id,
    direction: row.direction,
    from: row.from_number,
    to: row.to_number,
    body: row.body,
    media_urls: row.media_urls,
    segments: row.segments,
    encoding: row.encoding,
    fuel_cost: row.fuel_cost,
    status: row.status,
    error_code: row.error_code,
    contact_id: row.contact_id,
    company_id: row.company_id,
    deal_id: row.deal_id,
    metadata: row.metadata,
    created_at: row.created_at,
    sent_at: row.sent_at,
    delivered_at: row.delivered_at,
  };
}

export function toConversation(row: ConversationRow) {
  return {
    id: row.id,
    phone_number: row.phone_number,
    our_number: row.our_number,
    contact_id: row.contact_id,
    status: row.status,
    last_message_at: row.last_message_at,
    unread_count: row.unread_count,
    total_messages: row.total_messages,
    provider: row.provider,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

function tenantOf(row: { org_id: string; client_id: string }): TenantScope {
  return { orgId: row.org_id, clientId: row.client_id };
}

function messageEvent(row: MessageRow) {
  return { message_id: row.id, ...toMessage(row) };
}

// ---- accepting

export interface SendInput extends OutboundSms {
  companyId?: string | null;
  dealId?: string | null;
  mediaUrls?: string[];
  /** The cause was made up for this request (`api:<new id>`): no earlier message can have it. */
  freshCause?: boolean;
}

export async function acceptMessage(
  trx: Trx,
  tenant: TenantScope,
  input: SendInput,
  provider: SmsProviderName,
  defaultCountry = DEFAULT_COUNTRY,
): Promise<{ message: Message; created: boolean }> {
  if (!input.freshCause) {
    const earlier = await findMessageByCause(trx, tenant, input.causeKey);
    if (earlier) return { message: toMessage(earlier), created: false };
  }
  if (input.body.length < 1 || input.body.length > MAX_BODY)
    throw errors.invalidField('body', `must be 1 to ${MAX_BODY} characters`);
  const to = normalizePhone(input.to, defaultCountry, 'to');
  const sender = await chooseSender(trx, tenant, input.from, defaultCountry);
  await assertReferences(trx, tenant, [
    { field: 'contact_id', id: input.contactId ?? undefined, kind: CONTACT },
    { field: 'company_id', id: input.companyId ?? undefined, kind: COMPANY },
    { field: 'deal_id', id: input.dealId ?? undefined, kind: DEAL },
  ]);
  const contactId = input.contactId ?? (await phoneReach(trx, tenant, to)).contact?.id ?? null;
  const { segments, encoding } = countSegments(input.body);
  const now = new Date();
  const conversation = await bumpConversation(
    trx,
    {
      id: newId(),
      org_id: tenant.orgId,
      client_id: tenant.clientId,
      our_number: sender.number,
      phone_number: to,
      contact_id: contactId,
      provider,
    },
    false,
    now,
  );
  const id = newId();
  const row = await insertMessage(trx, {
    id,
    org_id: tenant.orgId,
    client_id: tenant.clientId,
    conversation_id: conversation.id,
    direction: 'outbound',
    from_number: sender.number,
    to_number: to,
    body: input.body,
    media_urls: input.mediaUrls ?? [],
    segments,
    encoding,
    fuel_cost: segments,
    status: 'queued',
    contact_id: contactId,
    company_id: input.companyId ?? null,
    deal_id: input.dealId ?? null,
    provider,
    cause_key: input.causeKey,
    metadata: JSON.stringify(input.metadata ?? {}),
    send_state: 'pending',
    send_lease_until: now,
    created_at: now,
  });
  if (!row) {
    // The same cause was accepted by a concurrent transaction that committed first: its message stands.
    await uncountMessage(trx, tenant, conversation.id);
    const first = await findMessageByCause(trx, tenant, input.causeKey);
    return { message: toMessage(first!), created: false };
  }
  if (contactId) {
    await createActivity(trx, tenant, {
      activity_type: 'sms',
      direction: 'outbound',
      contact_id: contactId,
      company_id: input.companyId ?? null,
      deal_id: input.dealId ?? null,
      body: input.body,
      performed_at: now.toISOString(),
    });
  }
  // Last: the org's balance row stays locked from here to the commit.
  await debitFuel(trx, tenant, {
    reason: 'sms',
    amount: segments,
    referenceType: FUEL_REFERENCE,
    referenceId: id,
  });
  return { message: toMessage(row), created: true };
}

// ---- status changes (sender, delivery reports, status callbacks)

/** Forward order; the last rank is final. A change to a lower or equal rank is ignored. */
const RANK: Record<MessageStatus, number> = {
  queued: 0,
  sending: 1,
  sent: 2,
  delivered: 3,
  undelivered: 3,
  failed: 3,
  received: 3,
};

export interface StatusChange {
  status: Exclude<MessageStatus, 'queued' | 'received'>;
  errorCode?: SmsErrorCode | 'do_not_contact' | null;
  providerErrorCode?: string | null;
  providerMessageId?: string | null;
  at?: Date;
  /** Give the FUEL back (the message was never handed to the carrier). */
  refund?: boolean;
  /** Also settle the send: no worker will try it again. */
  settleSend?: boolean;
}

/**
 * Moves a locked outbound message forward, once: a change to a status at or below its current one
 * changes nothing and emits nothing, so a duplicate or late report is harmless. `sms.sent` when it
 * first reaches `sent` or `delivered`; `sms.delivery_failed` when it first fails.
 */
export async function advanceMessage(trx: Trx, row: MessageRow, change: StatusChange): Promise<MessageRow> {
  const at = change.at ?? new Date();
  const settle: Partial<MessageRow> = {};
  if (change.settleSend && row.send_state !== 'done')
    Object.assign(settle, { send_state: 'done', send_lease_id: null, send_lease_until: null });
  if (change.providerMessageId && !row.provider_message_id)
    settle.provider_message_id = change.providerMessageId;
  if (RANK[change.status] <= RANK[row.status] || row.direction !== 'outbound') {
    return Object.keys(settle).length ? updateMessage(trx, row.id, settle) : row;
  }
  const failed = change.status === 'failed' || change.status === 'undelivered';
  const next = await updateMessage(trx, row.id, {
    ...settle,
    status: change.status,
    ...(failed
      ? {
          error_code: change.errorCode ?? 'provider_error',
          provider_error_code: change.providerErrorCode ?? null,
        }
      : {}),
    ...((change.status === 'sent' || change.status === 'delivered') && !row.sent_at ? { sent_at: at } : {}),
    ...(change.status === 'delivered' ? { delivered_at: at } : {}),
  });
  const tenant = tenantOf(row);
  if (failed) {
    if (change.refund && row.fuel_cost > 0)
      await refundFuel(trx, tenant, { referenceType: FUEL_REFERENCE, referenceId: row.id });
    await emit(trx, tenant, 'sms.delivery_failed', messageEvent(next), next.metadata);
  } else if (RANK[row.status] < RANK.sent) {
    await emit(trx, tenant, 'sms.sent', messageEvent(next), next.metadata);
  }
  return next;
}

/** A provider's status report (simulator delivery report or a verified status callback), applied once. */
export async function applyStatus(trx: Trx, update: SmsStatusUpdate, provider: string): Promise<void> {
  const row =
    update.messageId && isUuid(update.messageId)
      ? await lockMessage(trx, update.messageId)
      : await lockMessageOfProvider(trx, provider, update.providerMessageId);
  if (row?.direction !== 'outbound') return;
  await advanceMessage(trx, row, {
    status: update.status,
    errorCode: update.errorCode,
    providerErrorCode: update.providerErrorCode,
    providerMessageId: update.providerMessageId,
    at: new Date(update.occurredAt),
    // A status callback can be the first news of a message whose send was unconfirmed.
    settleSend: row.send_state === 'unconfirmed',
  });
}

// ---- inbound

const STOP_WORDS = new Set(['STOP', 'STOPALL', 'UNSUBSCRIBE', 'CANCEL', 'END', 'QUIT']);
const START_WORDS = new Set(['START', 'UNSTOP', 'YES']);

/** The consent a whole-body carrier keyword asks for, or null. */
export function consentKeyword(body: string): 'opt_out' | 'opt_in' | null {
  const word = body.trim().toUpperCase();
  if (STOP_WORDS.has(word)) return 'opt_out';
  if (START_WORDS.has(word)) return 'opt_in';
  return null;
}

/**
 * Stores an inbound message (parsed from a carrier webhook or the simulator hook: one code path) in
 * the client that holds its `to` number, once per carrier message id. Applies consent keywords, logs
 * the contact's activity, emits `sms.received` and runs the `inboundMessage` hook's handlers, all in
 * `trx`. 404 `number_not_found` when no org holds `to`. Returns the message id. A repeat of a message
 * stored by a concurrent transaction throws `RepeatedInbound`: the caller rolls back and answers
 * `firstInbound`.
 */
export async function receiveMessage(
  trx: Trx,
  received: Hook<InboundSms>,
  provider: string,
  inbound: CarrierInboundSms,
): Promise<string> {
  const owner = await numberOwner(trx, inbound.to);
  if (!owner) throw errors.numberNotFound(inbound.to);
  const tenant: TenantScope = { orgId: owner.org_id, clientId: owner.client_id };
  const repeated = await findInbound(trx, provider, inbound.providerMessageId);
  if (repeated) return repeated.id;
  const keyword = consentKeyword(inbound.body);
  const keywordContact = keyword ? await applyPhoneConsentKeyword(trx, tenant, inbound.from, keyword) : null;
  const contactId = keywordContact ?? (await phoneReach(trx, tenant, inbound.from)).contact?.id ?? null;
  const receivedAt = new Date(inbound.receivedAt);
  const conversation = await bumpConversation(
    trx,
    {
      id: newId(),
      org_id: tenant.orgId,
      client_id: tenant.clientId,
      our_number: owner.number,
      phone_number: inbound.from,
      contact_id: contactId,
      provider,
    },
    true,
    receivedAt,
  );
  const { segments, encoding } = countSegments(inbound.body);
  const row = await insertInboundMessage(trx, {
    id: newId(),
    org_id: tenant.orgId,
    client_id: tenant.clientId,
    conversation_id: conversation.id,
    direction: 'inbound',
    from_number: inbound.from,
    to_number: owner.number,
    body: inbound.body,
    media_urls: inbound.mediaUrls,
    segments,
    encoding,
    fuel_cost: 0,
    status: 'received',
    contact_id: contactId,
    provider,
    provider_message_id: inbound.providerMessageId,
    created_at: receivedAt,
  });
  if (!row) {
    // A repeat of the same webhook stored it first; this transaction must leave no trace.
    throw new RepeatedInbound();
  }
  if (contactId) {
    await createActivity(trx, tenant, {
      activity_type: 'sms',
      direction: 'inbound',
      contact_id: contactId,
      body: inbound.body,
      performed_at: receivedAt.toISOString(),
    });
  }
  await emit(trx, tenant, 'sms.received', messageEvent(row));
  const message: InboundSms = {
    id: row.id,
    orgId: tenant.orgId,
    clientId: tenant.clientId,
    contactId,
    conversationId: conversation.id,
    from: inbound.from,
    to: owner.number,
    body: inbound.body,
    receivedAt,
  };
  await received.run(trx, message);
  return row.id;
}

/** A repeat of a carrier message stored by a concurrent transaction: the repeat's must leave no trace. */
export class RepeatedInbound extends Error {}

/** The id of the message `RepeatedInbound` found stored first. */
export async function firstInbound(
  db: Executor,
  provider: string,
  inbound: CarrierInboundSms,
): Promise<string> {
  const first = await findInbound(db, provider, inbound.providerMessageId);
  return first!.id;
}

// ---- conversations

/** Most recent activity first; a conversation without messages last. */
export const conversationKeyset: Keyset<Conversation, ConversationCursor> = {
  key: (row) => [row.last_message_at ? row.last_message_at.toISOString() : null, row.id],
  cursor: ([at, id]) =>
    (at === null || (typeof at === 'string' && !Number.isNaN(Date.parse(at)))) && typeof id === 'string'
      ? { lastMessageAt: at, id }
      : undefined,
};

export interface ConversationQuery {
  contact_id?: string;
  phone_number?: string;
  unread?: boolean;
}

export async function searchConversations(
  db: Executor,
  tenant: TenantScope,
  query: ConversationQuery,
  page: PageRequest<ConversationCursor>,
  defaultCountry = DEFAULT_COUNTRY,
): Promise<Conversation[]> {
  const filter: ConversationFilter = {
    contact_id: query.contact_id,
    phone_number:
      query.phone_number === undefined
        ? undefined
        : normalizePhone(query.phone_number, defaultCountry, 'phone_number'),
    unread: query.unread,
  };
  return (await listConversations(db, tenant, filter, page)).map(toConversation);
}

/** SMS messages, both directions, of the last `days` × 24 hours: one client's, or the whole org's (`clientId` null). */
export function countRecentMessages(
  db: Executor,
  scope: { orgId: string; clientId: string | null },
  days: number,
): Promise<number> {
  return countMessagesSince(db, scope, new Date(Date.now() - days * 86_400_000));
}

export async function getConversation(db: Executor, tenant: TenantScope, id: string): Promise<Conversation> {
  const row = await findConversation(db, tenant, id);
  if (!row) throw errors.notFound('Conversation', id);
  return toConversation(row);
}

export async function conversationMessages(
  db: Executor,
  tenant: TenantScope,
  id: string,
  page: PageRequest<string>,
): Promise<Message[]> {
  await getConversation(db, tenant, id);
  return (await listMessages(db, tenant, id, page)).map(toMessage);
}

export interface ConversationPatch {
  status?: 'open' | 'closed';
  read?: boolean;
}

export async function patchConversation(
  trx: Trx,
  tenant: TenantScope,
  id: string,
  patch: ConversationPatch,
): Promise<Conversation> {
  if (patch.read === false)
    throw errors.invalidField('read', 'can only be true (mark the conversation read)');
  const row = await updateConversation(trx, tenant, id, {
    ...(patch.status ? { status: patch.status } : {}),
    ...(patch.read ? { unread_count: 0 } : {}),
  });
  if (!row) throw errors.notFound('Conversation', id);
  return toConversation(row);
}
