import { type Keyring, open, seal } from '../../platform/crypto.ts';
import { newId } from '../../platform/db/ids.ts';
import type { Executor, Trx } from '../../platform/db/pool.ts';
import { isEventType } from '../../platform/events/catalog.ts';
import { type EventEnvelope, emit } from '../../platform/events/emit.ts';
import { errors, type FieldError } from '../../platform/http/errors.ts';
import type { PageRequest } from '../../platform/http/pagination.ts';
import { outboundUrlProblem } from '../../platform/outbound/address-policy.ts';
import { type AuditAction, type AuditContext, recordAudit } from '../audit/service.ts';
import {
  queueDispatch,
  requestManualAttempt,
  requeueWindow,
  skipPendingDeliveries,
} from './delivery-store.ts';
import { TEST_EVENT } from './fan-out.ts';
import { newSigningSecret, SIGNING_HEADER, sealSecret } from './signing.ts';
import {
  type AttemptRow,
  type AttemptStatus,
  deleteSubscription,
  findAttempt,
  findSubscription,
  insertSubscription,
  listAttempts,
  listSubscriptions,
  lockSubscription,
  type SubscriptionChanges,
  type SubscriptionRow,
  updateSubscription,
  type WebhookScope,
} from './store.ts';

export interface WebhookRules {
  encryptionKey: Keyring;
  allowPrivate: boolean;
}

export const RECOVERY_WINDOW_DAYS = 14;

/** The subscription as the API shows it: never the secret, only its last four characters. */
export function toWebhook(row: SubscriptionRow) {
  return {
    id: row.id,
    url: row.url,
    events: row.events,
    active: row.active,
    description: row.description,
    client_id: row.all_clients ? null : row.client_id,
    secret_last4: row.secret_last4,
    consecutive_failures: row.consecutive_failures,
    disabled_at: row.disabled_at,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

export function toDeliveryAttempt(row: AttemptRow) {
  return {
    id: row.id,
    event_id: row.event_id,
    event_type: row.event_type,
    attempt: row.attempt,
    manual: row.manual,
    status: row.status,
    response_status: row.response_status,
    response_body: row.response_body,
    error_class: row.error_class,
    error: row.error,
    duration_ms: row.duration_ms,
    next_attempt_at: row.next_attempt_at,
    created_at: row.created_at,
  };
}

/** Catalog names, or `*` alone; repeats are dropped. */
function checkEvents(events: string[], problems: FieldError[]): string[] {
  const unique = [...new Set(events)];
  if (unique.includes('*')) {
    if (unique.length > 1) problems.push({ field: 'events', message: 'must be ["*"] alone, or event names' });
    return ['*'];
  }
  events.forEach((name, index) => {
    if (!isEventType(name))
      problems.push({ field: `events.${index}`, message: `"${name}" is not an event of the catalog` });
  });
  return unique;
}

function checkUrl(url: string, rules: WebhookRules, problems: FieldError[]): void {
  const problem = outboundUrlProblem(url, { allowPrivate: rules.allowPrivate });
  if (problem) problems.push({ field: 'url', message: problem });
}

/**
 * Creates a subscription. The answer, which `runIdempotent` stores for a replay, carries the signing
 * secret sealed (so no plaintext secret is ever at rest); `revealSecret` opens it for the response.
 */
export async function createWebhook(
  trx: Trx,
  tenant: WebhookScope,
  input: { url: string; events: string[]; description?: string | null },
  rules: WebhookRules,
  audit: AuditContext,
): Promise<CreatedWebhook> {
  const problems: FieldError[] = [];
  checkUrl(input.url, rules, problems);
  const events = checkEvents(input.events, problems);
  if (problems.length) throw errors.validation(problems);

  const id = newId();
  const secret = newSigningSecret();
  const webhook = await insertSubscription(trx, tenant, {
    id,
    url: input.url,
    events,
    description: input.description ?? null,
    secret_ciphertext: sealSecret(rules.encryptionKey, owner(tenant, id), secret),
    secret_last4: secret.slice(-4),
  });
  await auditWebhook(trx, webhook, 'webhook.created', audit, { url: webhook.url, events: webhook.events });
  return {
    webhook: toWebhook(webhook),
    sealed_secret: seal(rules.encryptionKey, secret, responseAad(webhook.id)).toString('base64'),
  };
}

export interface CreatedWebhook {
  webhook: ReturnType<typeof toWebhook>;
  sealed_secret: string;
}

/** The response to a create (first or replayed): the subscription and its secret, in the clear this once. */
export function revealSecret(created: CreatedWebhook, rules: WebhookRules) {
  const { sealed_secret, webhook } = created;
  const secret = open(rules.encryptionKey, Buffer.from(sealed_secret, 'base64'), responseAad(webhook.id));
  return { webhook, secret, signing_header: SIGNING_HEADER };
}

/** A stored create response's secret is bound to the subscription it was made for. */
function responseAad(webhookId: string): string {
  return `webhook-create-response:${webhookId}`;
}

/** The record a secret is bound to: the subscription's org, client and id. */
function owner(tenant: WebhookScope, id: string) {
  return { id, org_id: tenant.orgId, client_id: tenant.clientId };
}

async function findWebhook(db: Executor, tenant: WebhookScope, id: string): Promise<SubscriptionRow> {
  const webhook = await findSubscription(db, tenant, id);
  if (!webhook) throw errors.notFound('Webhook', id);
  return webhook;
}

export async function getWebhook(db: Executor, tenant: WebhookScope, id: string) {
  return toWebhook(await findWebhook(db, tenant, id));
}

/** `GET /webhooks`: newest first. */
export async function searchWebhooks(db: Executor, tenant: WebhookScope, page: PageRequest<string>) {
  return (await listSubscriptions(db, tenant, page)).map(toWebhook);
}

/** `GET /webhooks/{id}/deliveries`: the delivery log, one record per attempt, newest first. */
export async function searchDeliveryAttempts(
  db: Executor,
  tenant: WebhookScope,
  id: string,
  filter: { status?: AttemptStatus },
  page: PageRequest<string>,
) {
  const webhook = await findWebhook(db, tenant, id);
  return (await listAttempts(db, webhook, filter, page)).map(toDeliveryAttempt);
}

/** A PATCH: the subscription, and its new secret when it was rotated. */
export async function updateWebhook(
  trx: Trx,
  tenant: WebhookScope,
  id: string,
  input: {
    url?: string;
    events?: string[];
    description?: string | null;
    active?: boolean;
    rotate_secret?: boolean;
  },
  rules: WebhookRules,
  audit: AuditContext,
) {
  const problems: FieldError[] = [];
  if (input.url !== undefined) checkUrl(input.url, rules, problems);
  const events = input.events === undefined ? undefined : checkEvents(input.events, problems);
  if (problems.length) throw errors.validation(problems);

  const current = await lockSubscription(trx, tenant, id);
  if (!current) throw errors.notFound('Webhook', id);
  const changes: SubscriptionChanges = {};
  if (input.url !== undefined) changes.url = input.url;
  if (events !== undefined) changes.events = events;
  if (input.description !== undefined) changes.description = input.description;
  if (input.active === true) {
    changes.active = true;
    changes.disabled_at = null;
    changes.consecutive_failures = 0;
  } else if (input.active === false && current.active) {
    changes.active = false;
    changes.disabled_at = new Date();
  }
  let secret: string | null = null;
  if (input.rotate_secret) {
    secret = newSigningSecret();
    changes.secret_ciphertext = sealSecret(rules.encryptionKey, current, secret);
    changes.secret_last4 = secret.slice(-4);
  }
  const webhook = await updateSubscription(trx, current, changes);
  const edited = (['url', 'events', 'description'] as const).filter((field) => field in changes);
  if (edited.length) await auditWebhook(trx, webhook, 'webhook.updated', audit, { fields: edited });
  if (changes.active !== undefined)
    await auditWebhook(trx, webhook, changes.active ? 'webhook.enabled' : 'webhook.disabled', audit);
  if (secret)
    await auditWebhook(trx, webhook, 'webhook.secret_rotated', audit, { secret_last4: webhook.secret_last4 });
  if (changes.active === false)
    await skipPendingDeliveries(trx, webhook, 'The subscription was disabled with PATCH active=false.');
  return secret
    ? { webhook: toWebhook(webhook), secret, signing_header: SIGNING_HEADER }
    : { webhook: toWebhook(webhook) };
}

export async function deleteWebhook(
  trx: Trx,
  tenant: WebhookScope,
  id: string,
  audit: AuditContext,
): Promise<void> {
  const webhook = await lockSubscription(trx, tenant, id);
  if (!webhook) throw errors.notFound('Webhook', id);
  await deleteSubscription(trx, webhook);
  await auditWebhook(trx, webhook, 'webhook.deleted', audit, { url: webhook.url });
}

function auditWebhook(
  trx: Trx,
  webhook: SubscriptionRow,
  action: AuditAction,
  audit: AuditContext,
  details?: Record<string, unknown>,
): Promise<void> {
  return recordAudit(trx, webhook.org_id, {
    ...audit,
    action,
    record: { type: 'webhook', id: webhook.id },
    clientId: webhook.all_clients ? null : webhook.client_id,
    details,
  });
}

function requireActive(webhook: SubscriptionRow): void {
  if (!webhook.active)
    throw errors.conflict(
      'webhook_disabled',
      'This webhook is disabled; re-enable it with PATCH active=true first.',
      { disabled_at: webhook.disabled_at?.toISOString() ?? null },
    );
}

/** Emits a `webhook.test` event that only this subscription receives. */
export async function sendTestEvent(trx: Trx, tenant: WebhookScope, id: string): Promise<EventEnvelope> {
  const webhook = await findWebhook(trx, tenant, id);
  requireActive(webhook);
  return emit(trx, { orgId: webhook.org_id, clientId: webhook.client_id }, TEST_EVENT, {
    webhook_id: webhook.id,
    message: 'A test event sent with POST /v1/webhooks/{id}/test.',
  });
}

/** One more attempt of a logged delivery, now and outside the schedule. */
export async function retryDelivery(trx: Trx, tenant: WebhookScope, id: string, attemptId: string) {
  const webhook = await findWebhook(trx, tenant, id);
  requireActive(webhook);
  const attempt = await findAttempt(trx, webhook, attemptId);
  if (!attempt) throw errors.notFound('Delivery', attemptId);
  if (!(await requestManualAttempt(trx, webhook, attempt.delivery_id)))
    throw errors.conflict(
      'delivery_in_progress',
      'An attempt of this delivery is in flight; retry after it ends.',
    );
  await queueDispatch(trx);
  return {
    retry: {
      webhook_id: webhook.id,
      delivery_id: attempt.id,
      event_id: attempt.event_id,
      requested_at: new Date(),
    },
  };
}

/** Puts every event of the window that did not reach this subscription back on a fresh schedule. */
export async function recoverWebhook(
  trx: Trx,
  tenant: WebhookScope,
  id: string,
  window: { since: string; until?: string },
) {
  const since = new Date(window.since);
  const until = window.until === undefined ? new Date() : new Date(window.until);
  if (until.getTime() <= since.getTime()) throw errors.invalidField('until', 'must be after since');
  if (until.getTime() - since.getTime() > RECOVERY_WINDOW_DAYS * 86_400_000)
    throw errors.invalidField('until', `must be at most ${RECOVERY_WINDOW_DAYS} days after since`);
  const webhook = await findWebhook(trx, tenant, id);
  requireActive(webhook);
  const queued = await requeueWindow(trx, webhook, { since, until });
  if (queued > 0) await queueDispatch(trx);
  return { recovery: { webhook_id: webhook.id, since, until, queued } };
}
