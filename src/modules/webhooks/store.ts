import type { Generated, Selectable, Updateable } from 'kysely';
import type { Tenant } from '../../platform/auth/tenant.ts';

/** Who manages subscriptions: a key's tenant or a portal session's (which has no key). */
export type WebhookScope = Pick<Tenant, 'orgId' | 'clientId' | 'isClientScoped'>;

import type { Executor, Trx } from '../../platform/db/pool.ts';
import type { NullableTimestamp, Timestamp } from '../../platform/db/schema.ts';
import type { PageRequest } from '../../platform/http/pagination.ts';

export interface WebhookSubscriptionsTable {
  id: string;
  org_id: string;
  client_id: string;
  all_clients: boolean;
  url: string;
  events: string[];
  description: string | null;
  active: Generated<boolean>;
  secret_ciphertext: Buffer;
  secret_last4: string;
  consecutive_failures: Generated<number>;
  disabled_at: NullableTimestamp;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

export type DeliveryStatus = 'pending' | 'succeeded' | 'failed' | 'dead_letter' | 'skipped';
export type AttemptStatus = 'succeeded' | 'failed' | 'retrying' | 'dead_letter' | 'skipped';

export interface WebhookDeliveriesTable {
  id: string;
  org_id: string;
  subscription_id: string;
  event_id: string;
  event_type: string;
  event_created_at: Timestamp;
  status: DeliveryStatus;
  attempts: Generated<number>;
  scheduled_attempts: Generated<number>;
  next_attempt_at: NullableTimestamp;
  manual: Generated<boolean>;
  resume_status: DeliveryStatus | null;
  resume_at: NullableTimestamp;
  lease_id: string | null;
  lease_until: NullableTimestamp;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

export interface WebhookDeliveryAttemptsTable {
  id: string;
  org_id: string;
  subscription_id: string;
  delivery_id: string;
  event_id: string;
  event_type: string;
  attempt: number;
  manual: Generated<boolean>;
  status: AttemptStatus;
  response_status: number | null;
  response_body: string | null;
  error_class: string | null;
  error: string | null;
  duration_ms: number | null;
  next_attempt_at: NullableTimestamp;
  created_at: Generated<Date>;
}

declare module '../../platform/db/schema.ts' {
  interface Database {
    webhook_subscriptions: WebhookSubscriptionsTable;
    webhook_deliveries: WebhookDeliveriesTable;
    webhook_delivery_attempts: WebhookDeliveryAttemptsTable;
  }
}

export type SubscriptionRow = Selectable<WebhookSubscriptionsTable>;
export type AttemptRow = Selectable<WebhookDeliveryAttemptsTable>;

/**
 * Subscriptions a caller can see and manage: a client-scoped caller its client's own; an agency key
 * acting as itself every subscription of its org (its agency-wide ones and those of its clients).
 */
function visibleSubscriptions(db: Executor, tenant: WebhookScope) {
  let query = db.selectFrom('webhook_subscriptions').where('org_id', '=', tenant.orgId);
  if (tenant.isClientScoped)
    query = query.where('client_id', '=', tenant.clientId).where('all_clients', '=', false);
  return query;
}

export function findSubscription(
  db: Executor,
  tenant: WebhookScope,
  id: string,
): Promise<SubscriptionRow | undefined> {
  return visibleSubscriptions(db, tenant).selectAll().where('id', '=', id).executeTakeFirst();
}

/** The same, locking the row for an update in the caller's transaction. */
export function lockSubscription(
  trx: Trx,
  tenant: WebhookScope,
  id: string,
): Promise<SubscriptionRow | undefined> {
  return visibleSubscriptions(trx, tenant).selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
}

/** Subscriptions newest first. */
export function listSubscriptions(
  db: Executor,
  tenant: WebhookScope,
  page: PageRequest<string>,
): Promise<SubscriptionRow[]> {
  let query = visibleSubscriptions(db, tenant).selectAll();
  if (page.after !== undefined) query = query.where('id', '<', page.after);
  return query.orderBy('id', 'desc').limit(page.limit).execute();
}

export function insertSubscription(
  trx: Trx,
  tenant: WebhookScope,
  values: Omit<
    WebhookSubscriptionsTable,
    | 'org_id'
    | 'client_id'
    | 'all_clients'
    | 'active'
    | 'consecutive_failures'
    | 'disabled_at'
    | 'created_at'
    | 'updated_at'
  >,
): Promise<SubscriptionRow> {
  return trx
    .insertInto('webhook_subscriptions')
    .values({
      ...values,
      org_id: tenant.orgId,
      client_id: tenant.clientId,
      all_clients: !tenant.isClientScoped,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export type SubscriptionChanges = Updateable<
  Pick<
    WebhookSubscriptionsTable,
    | 'url'
    | 'events'
    | 'description'
    | 'active'
    | 'secret_ciphertext'
    | 'secret_last4'
    | 'consecutive_failures'
    | 'disabled_at'
  >
>;

export function updateSubscription(
  trx: Trx,
  subscription: SubscriptionRow,
  changes: SubscriptionChanges,
): Promise<SubscriptionRow> {
  return trx
    .updateTable('webhook_subscriptions')
    .set({ ...changes, updated_at: new Date() })
    .where('org_id', '=', subscription.org_id)
    .where('client_id', '=', subscription.client_id)
    .where('id', '=', subscription.id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function deleteSubscription(trx: Trx, subscription: SubscriptionRow): Promise<void> {
  await trx
    .deleteFrom('webhook_subscriptions')
    .where('org_id', '=', subscription.org_id)
    .where('client_id', '=', subscription.client_id)
    .where('id', '=', subscription.id)
    .execute();
}

/** The delivery log of one subscription, newest first. */
export function listAttempts(
  db: Executor,
  subscription: SubscriptionRow,
  filter: { status?: AttemptStatus },
  page: PageRequest<string>,
): Promise<AttemptRow[]> {
  let query = db
    .selectFrom('webhook_delivery_attempts')
    .selectAll()
    .where('org_id', '=', subscription.org_id)
    .where('subscription_id', '=', subscription.id);
  if (filter.status) query = query.where('status', '=', filter.status);
  if (page.after !== undefined) query = query.where('id', '<', page.after);
  return query.orderBy('id', 'desc').limit(page.limit).execute();
}

export function findAttempt(
  db: Executor,
  subscription: SubscriptionRow,
  attemptId: string,
): Promise<AttemptRow | undefined> {
  return db
    .selectFrom('webhook_delivery_attempts')
    .selectAll()
    .where('org_id', '=', subscription.org_id)
    .where('subscription_id', '=', subscription.id)
    .where('id', '=', attemptId)
    .executeTakeFirst();
}
