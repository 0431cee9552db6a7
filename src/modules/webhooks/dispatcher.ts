import { performance } from 'node:perf_hooks';
import { sql } from 'kysely';
import type { Logger } from 'pino';
import type { Config } from '../../config.ts';
import type { Keyring } from '../../platform/crypto.ts';
import { newId } from '../../platform/db/ids.ts';
import type { Db } from '../../platform/db/pool.ts';
import { StatementBatch } from '../../platform/db/statement-batch.ts';
import { inTransaction } from '../../platform/db/transaction.ts';
import {
  type Lease,
  LeasedPool,
  type LeasedWork,
  type Recording,
  type Refill,
} from '../../platform/jobs/leased.ts';
import { metrics } from '../../platform/metrics.ts';
import { type OutboundClient, OutboundError } from '../../platform/outbound/client.ts';
import {
  type AttemptRecord,
  type ClaimedDelivery,
  claimDue,
  countFailure,
  type FailureOutcome,
  queueDispatch,
  recordFailure,
  recordSuccesses,
  type Success,
  skipPendingDeliveries,
} from './delivery-store.ts';
import { type AttemptResult, isRetryable, isSuccess, nextDelayMs, parseRetryAfter } from './retry-policy.ts';
import { openSecret, signPayload } from './signing.ts';
import type { AttemptStatus } from './store.ts';

/** Response bytes kept in the delivery log. */
const RESPONSE_BODY_BYTES = 2048;
/** Time past the request time-out a lease allows for recording the outcome. */
const LEASE_MARGIN_MS = 5000;
/** Successes recorded in one statement at most. */
const RECORD_BATCH = 500;
/** A dispatcher hands over to a fresh job after this long, so a stopping worker is never held for long. */
const RUN_BUDGET_MS = 10_000;
/** Wake-ups arriving this close together share one claim query. */
const CLAIM_COALESCE_MS = 3;
/** Every worker process looks for due deliveries this often, whatever woke it or not. */
const SWEEP_MS = 1000;
/**
 * Leases of a delivery in a row that may run out with no attempt recorded (each worker that took it
 * died or stalled) before it is given up as `worker_lost` rather than sent again.
 */
export const LOST_LEASES_MAX = 5;

export interface DispatcherDeps {
  db: Db;
  config: Pick<
    Config,
    'webhookRetrySchedule' | 'webhookTimeoutMs' | 'webhookFailureThreshold' | 'webhookConcurrency'
  >;
  encryptionKey: Keyring;
  client: OutboundClient;
  log: Logger;
}

class LeaseLost extends Error {}

const attempts = metrics.counter(
  'webhook_attempts_total',
  'Webhook delivery attempts by outcome: succeeded, a status class (4xx, 5xx) or an error class (timeout, …).',
  ['outcome'],
);
const deliveryLatency = metrics.histogram(
  'webhook_delivery_latency_seconds',
  'From the event being written to its successful delivery, retries included.',
  [],
  [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 1800, 3600, 14_400, 86_400],
);

/**
 * Sends due deliveries from this process: a pool of up to `WEBHOOK_CONCURRENCY` requests in flight,
 * refilled as they finish, running inside a `webhook_dispatch` job (or the sweep loop) until nothing
 * is due. Woken by the fan-out of this process; `run()` while it runs only wakes it.
 */
export class WebhookDispatcher extends LeasedPool<ClaimedDelivery> {
  constructor(deps: DispatcherDeps) {
    super(deps.db, webhookDeliveries(deps), deps.log);
  }
}

/**
 * The deliveries as leased work: due when pending on an active subscription, claimed by the prepared
 * `claimDue` (joins the subscription and the event). Its attempt is counted when recorded, as the
 * delivery log numbers it; its schedule is `retry-policy.ts`'s, written by the failure's record.
 */
export function webhookDeliveries(deps: DispatcherDeps): LeasedWork<ClaimedDelivery> & { refill: Refill } {
  const leaseMs = deps.config.webhookTimeoutMs + LEASE_MARGIN_MS;
  const successes = new StatementBatch<Success, boolean>(
    (batch) => recordSuccesses(deps.db, batch),
    RECORD_BATCH,
  );
  return {
    name: 'webhook_deliveries',
    intervalMs: SWEEP_MS,
    table: 'webhook_deliveries',
    // What `claimDue` takes, which also joins the subscription (active) and the event.
    due: sql`t.status = 'pending' AND t.next_attempt_at <= now()`,
    leaseMs,
    batch: deps.config.webhookConcurrency,
    concurrency: deps.config.webhookConcurrency,
    attempts: {
      counted: 'by record',
      max: Number.POSITIVE_INFINITY,
      unrecordedMax: LOST_LEASES_MAX,
      backoffMs: () => leaseMs,
    },
    claim: claimDue,
    work: (lease) => attempt(deps, successes, lease),
    exhausted: (lease) => giveUpLostDelivery(deps, lease),
    refill: {
      coalesceMs: CLAIM_COALESCE_MS,
      runBudgetMs: RUN_BUDGET_MS,
      handOver: () => queueDispatch(deps.db),
    },
  };
}

/**
 * One HTTP attempt and its record, a success's handed back still under way. Never throws: an
 * unrecorded attempt is retried when its lease ends.
 */
async function attempt(
  deps: DispatcherDeps,
  successes: StatementBatch<Success, boolean>,
  lease: Lease<ClaimedDelivery>,
): Promise<Recording | undefined> {
  const delivery = lease.row;
  const attemptId = newId();
  const started = performance.now();
  let result: AttemptResult;
  let responseBody: string | null = null;
  let error: string | null = null;
  try {
    const response = await send(deps, delivery, attemptId);
    result = {
      kind: 'response',
      status: response.status,
      retryAfterMs: parseRetryAfter(response.headers['retry-after']),
    };
    responseBody = response.body.toString('utf8').replace(/\0/g, '');
    if (!isSuccess(result)) error = describeStatus(response.status, response.headers.location);
  } catch (failure) {
    const errorClass = failure instanceof OutboundError ? failure.errorClass : 'signing_error';
    result = { kind: 'error', errorClass };
    error = failure instanceof Error ? failure.message : String(failure);
  }
  const record: AttemptRecord = {
    id: attemptId,
    attempt: lease.attempt,
    manual: delivery.manual,
    status: 'succeeded',
    responseStatus: result.kind === 'response' ? result.status : null,
    responseBody,
    errorClass:
      result.kind === 'error' ? result.errorClass : isSuccess(result) ? null : statusClass(result.status),
    error,
    durationMs: Math.round(performance.now() - started),
  };
  attempts.inc({ outcome: isSuccess(result) ? 'succeeded' : (record.errorClass ?? 'failed') });
  if (isSuccess(result)) deliveryLatency.observe((Date.now() - delivery.event_created_at.getTime()) / 1000);
  const notRecorded = (failure: unknown) => {
    if (!(failure instanceof LeaseLost))
      deps.log.error(
        { err: failure, deliveryId: delivery.id, webhookId: delivery.subscription_id },
        'webhook attempt not recorded; it will be retried when its lease ends',
      );
  };
  // A success is recorded with others that finish about now; its request slot is free meanwhile.
  if (isSuccess(result)) {
    const recorded = successes.add({ delivery, leaseId: lease.id, record }).then(() => {}, notRecorded);
    return { recorded };
  }
  await recordAttemptFailure(deps, lease, record, result).catch(notRecorded);
}

/**
 * A delivery whose leases kept running out with no attempt recorded: sent again, it could take its
 * worker down once more (and the deliveries in flight beside it). Recorded as a failed attempt that
 * sent nothing; a person can retry it, or recover it, once the cause is found.
 */
async function giveUpLostDelivery(deps: DispatcherDeps, lease: Lease<ClaimedDelivery>): Promise<void> {
  const delivery = lease.row;
  const result: AttemptResult = { kind: 'error', errorClass: 'worker_lost' };
  const { outcome, status } = afterFailure(delivery, result, deps.config.webhookRetrySchedule, true);
  const record: AttemptRecord = {
    id: newId(),
    attempt: lease.attempt,
    manual: delivery.manual,
    status,
    responseStatus: null,
    responseBody: null,
    errorClass: result.errorClass,
    error: `Not sent again: ${lease.unrecorded} workers in a row took this delivery and none recorded an attempt (each died or stalled past its lease).`,
    durationMs: null,
  };
  attempts.inc({ outcome: result.errorClass });
  await inTransaction(deps.db, (trx) => recordFailure(trx, delivery, lease.id, record, outcome));
}

function send(deps: DispatcherDeps, delivery: ClaimedDelivery, attemptId: string) {
  const secret = openSecret(
    deps.encryptionKey,
    { id: delivery.subscription_id, org_id: delivery.org_id, client_id: delivery.client_id },
    delivery.secret_ciphertext,
  );
  const created = Math.floor(delivery.event_created_at.getTime() / 1000);
  // data and metadata are the stored JSON text: the bytes signed are the bytes sent.
  const body = `{"id":${JSON.stringify(delivery.event_id)},"type":${JSON.stringify(delivery.event_type)},"created":"${created}","data":${delivery.data},"metadata":${delivery.metadata}}`;
  const timestamp = String(Math.floor(Date.now() / 1000));
  return deps.client.request({
    url: delivery.url,
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-service-signature': signPayload(secret, timestamp, body),
      'x-service-timestamp': timestamp,
      'x-service-event': delivery.event_type,
      'x-service-event-id': delivery.event_id,
      'x-service-webhook-id': delivery.subscription_id,
      'x-service-delivery-id': attemptId,
    },
    body,
    maxResponseBytes: RESPONSE_BODY_BYTES,
  });
}

/** Counts the failure against the subscription and records the attempt, fenced by the lease; trips the breaker. */
async function recordAttemptFailure(
  deps: DispatcherDeps,
  lease: Lease<ClaimedDelivery>,
  record: AttemptRecord,
  result: AttemptResult,
): Promise<void> {
  const { config } = deps;
  const delivery = lease.row;
  const health = await inTransaction(deps.db, async (trx) => {
    const counted = await countFailure(
      trx,
      { org_id: delivery.org_id, id: delivery.subscription_id },
      config.webhookFailureThreshold,
    );
    if (!counted) throw new LeaseLost();
    const { outcome, status, note } = afterFailure(
      delivery,
      result,
      config.webhookRetrySchedule,
      counted.active,
    );
    const recorded = await recordFailure(
      trx,
      delivery,
      lease.id,
      { ...record, status, error: note ? `${record.error} ${note}` : record.error },
      outcome,
    );
    // Another worker took the delivery over: its attempt counts, not this one.
    if (!recorded) throw new LeaseLost();
    return counted;
  });
  if (health.just_disabled) {
    deps.log.warn(
      { webhookId: delivery.subscription_id, failures: health.consecutive_failures },
      'webhook subscription disabled by the circuit breaker',
    );
    await inTransaction(deps.db, (trx) =>
      skipPendingDeliveries(
        trx,
        { id: delivery.subscription_id, org_id: delivery.org_id },
        `The subscription was disabled after ${health.consecutive_failures} consecutive failures.`,
      ),
    );
  }
}

/** Where a delivery goes after a failed attempt, and what the log says about the attempt. */
export function afterFailure(
  delivery: Pick<ClaimedDelivery, 'manual' | 'resume_status' | 'resume_at' | 'scheduled_attempts'>,
  result: AttemptResult,
  schedule: number[],
  subscriptionActive: boolean,
): { outcome: FailureOutcome; status: AttemptStatus; note: string | null } {
  const stopped = 'No further attempt: the subscription is disabled.';
  if (delivery.manual) {
    // A manual attempt is outside the schedule: the delivery returns to where it was.
    const back = delivery.resume_status ?? 'failed';
    if (back === 'pending' && !subscriptionActive) {
      const outcome = {
        deliveryStatus: 'skipped' as const,
        scheduledAttempts: delivery.scheduled_attempts,
        delayMs: null,
        resumeAt: null,
      };
      return { outcome, status: 'failed', note: stopped };
    }
    return {
      outcome: {
        deliveryStatus: back,
        scheduledAttempts: delivery.scheduled_attempts,
        delayMs: null,
        resumeAt: back === 'pending' ? (delivery.resume_at ?? new Date()) : null,
      },
      status: 'failed',
      note: null,
    };
  }
  const made = delivery.scheduled_attempts + 1;
  const final = (deliveryStatus: 'failed' | 'dead_letter' | 'skipped') => ({
    deliveryStatus,
    scheduledAttempts: made,
    delayMs: null,
    resumeAt: null,
  });
  if (!isRetryable(result)) return { outcome: final('failed'), status: 'failed', note: null };
  const retryAfterMs = result.kind === 'response' ? result.retryAfterMs : null;
  const delayMs = nextDelayMs(schedule, made, retryAfterMs);
  if (delayMs === null) return { outcome: final('dead_letter'), status: 'dead_letter', note: null };
  if (!subscriptionActive) return { outcome: final('skipped'), status: 'failed', note: stopped };
  return {
    outcome: { deliveryStatus: 'pending', scheduledAttempts: made, delayMs, resumeAt: null },
    status: 'retrying',
    note: null,
  };
}

function statusClass(status: number): string {
  return status >= 300 && status < 400 ? 'redirect' : 'http_error';
}

function describeStatus(status: number, location: string | string[] | undefined): string {
  if (status >= 300 && status < 400)
    return `The receiver answered ${status}${location ? ` to ${location}` : ''}; redirects are not followed.`;
  return `The receiver answered ${status}.`;
}
