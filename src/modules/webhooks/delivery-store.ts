import { sql } from 'kysely';
import { newId } from '../../platform/db/ids.ts';
import type { Db, Executor, Trx } from '../../platform/db/pool.ts';
import { prepare } from '../../platform/db/prepared.ts';
import type { EventScope } from '../../platform/events/emit.ts';
import type { AttemptStatus, DeliveryStatus, SubscriptionRow } from './store.ts';

/**
 * The delivery queue. A `webhook_deliveries` row is one event for one subscription; a worker takes
 * due rows with a lease (`lease_id`, `lease_until`), sends them and records the outcome only while
 * its lease holds. graphile-worker jobs only wake dispatchers up: a lost job costs latency, never a
 * delivery.
 *
 * The three statements run for every delivery (fan-out, per batch of events; claim; success) are named prepared
 * statements, one round trip each, committed without waiting for the WAL flush. Losing such a commit
 * in a database crash cannot lose an event: the outbox relay moves its position past the events only
 * after their deliveries are inserted, with a synchronous commit (which flushes them too), and a lost
 * claim or success record only makes the delivery be sent again — at least once, as promised.
 */

export const DISPATCH_TASK = 'webhook_dispatch';
/** Dispatch jobs run before other queued jobs, so deliveries flow while a backlog of other work waits. */
const DISPATCH_PRIORITY = -10;
const ms = (value: unknown) => sql`(${value}::float8 * interval '1 millisecond')`;
/** A CTE that makes the statement's own transaction commit without waiting for the WAL flush. */
const ASYNC_COMMIT = sql`async_commit AS (SELECT set_config('synchronous_commit', 'off', true))`;

/**
 * Wakes a dispatcher somewhere, now (jobs with this key collapse while one waits) or after a delay
 * (keyed by what it is for, so a repeat replaces rather than adds).
 */
export async function queueDispatch(db: Executor, later?: { key: string; delayMs: number }): Promise<void> {
  if (!later) {
    await sql`SELECT graphile_worker.add_job(${DISPATCH_TASK}, job_key => ${DISPATCH_TASK},
      priority => ${DISPATCH_PRIORITY})`.execute(db);
    return;
  }
  await sql`SELECT graphile_worker.add_job(${DISPATCH_TASK}, run_at => now() + ${ms(later.delayMs)},
    job_key => ${later.key}, priority => ${DISPATCH_PRIORITY})`.execute(db);
}

const insertDeliveriesStatement = prepare(
  (
    _db,
    p: {
      orgIds: string[];
      clientIds: string[];
      eventIds: string[];
      eventTypes: string[];
      createdAts: Date[];
      testedSubscriptionIds: (string | null)[];
      firstDelayMs: number;
    },
  ) => sql<{ pending: number }>`
    WITH ${ASYNC_COMMIT},
    batch AS (
      SELECT * FROM unnest(${p.orgIds}::uuid[], ${p.clientIds}::uuid[], ${p.eventIds}::text[],
        ${p.eventTypes}::text[], ${p.createdAts}::timestamptz[], ${p.testedSubscriptionIds}::uuid[])
        AS b(org_id, client_id, event_id, event_type, event_created_at, tested_id)
    ), targets AS (
      SELECT b.org_id, b.event_id, b.event_type, b.event_created_at, s.id AS subscription_id, s.active
      FROM batch b
      JOIN webhook_subscriptions s ON s.org_id = b.org_id AND (s.all_clients OR s.client_id = b.client_id)
        AND CASE WHEN b.tested_id IS NULL THEN s.events && ARRAY[b.event_type, '*']
          ELSE s.id = b.tested_id AND s.client_id = b.client_id END
    ), inserted AS (
      INSERT INTO webhook_deliveries
        (id, org_id, subscription_id, event_id, event_type, event_created_at, status, next_attempt_at)
      SELECT webhook_uuid_v7(), org_id, subscription_id, event_id, event_type, event_created_at,
        CASE WHEN active THEN 'pending' ELSE 'skipped' END,
        CASE WHEN active THEN now() + ${ms(p.firstDelayMs)} END
      FROM targets
      ON CONFLICT (org_id, subscription_id, event_id) DO NOTHING
      RETURNING id, org_id, subscription_id, event_id, event_type, status
    ), skipped AS (
      INSERT INTO webhook_delivery_attempts
        (id, org_id, subscription_id, delivery_id, event_id, event_type, attempt, status, error_class, error)
      SELECT webhook_uuid_v7(), org_id, subscription_id, id, event_id, event_type, 1,
        'skipped', 'subscription_disabled', 'The subscription was disabled when the event arrived.'
      FROM inserted WHERE status = 'skipped'
    )
    SELECT count(*) FILTER (WHERE status = 'pending')::int AS pending,
      (SELECT count(*) FROM async_commit) AS async_commit
    FROM inserted`,
);

/** An event to fan out, and for a `webhook.test` event the only subscription it goes to. */
export interface FanOutEvent {
  scope: EventScope;
  id: string;
  type: string;
  createdAt: Date;
  testedSubscriptionId: string | null;
}

/**
 * For a batch of events, in one statement: one delivery per subscription each event goes to — its
 * client's, and the org's agency-wide ones, listening for its type or `*`; or, for a `webhook.test`
 * event, only the subscription it tests — due after `firstDelayMs`. A disabled subscription gets a
 * `skipped` one and a log line saying so. Safe to run twice: a pair already recorded is left alone.
 * Returns how many wait to be sent.
 */
export async function insertDeliveries(db: Db, events: FanOutEvent[], firstDelayMs: number): Promise<number> {
  if (events.length === 0) return 0;
  const [row] = await insertDeliveriesStatement.run(db, {
    orgIds: events.map((event) => event.scope.orgId),
    clientIds: events.map((event) => event.scope.clientId),
    eventIds: events.map((event) => event.id),
    eventTypes: events.map((event) => event.type),
    createdAts: events.map((event) => event.createdAt),
    testedSubscriptionIds: events.map((event) => event.testedSubscriptionId),
    firstDelayMs,
  });
  return row?.pending ?? 0;
}

export interface ClaimedDelivery {
  id: string;
  org_id: string;
  subscription_id: string;
  client_id: string;
  url: string;
  secret_ciphertext: Buffer;
  event_id: string;
  event_type: string;
  event_created_at: Date;
  /** The event's data and metadata as JSON text, sent as they are. */
  data: string;
  metadata: string;
  attempts: number;
  /** Claims since the last recorded attempt, this one included (see `LeasedWork`'s attempts). */
  unrecorded_claims: number;
  scheduled_attempts: number;
  manual: boolean;
  resume_status: DeliveryStatus | null;
  resume_at: Date | null;
}

const claimDueStatement = prepare(
  (_db, p: { limit: number; leaseId: string; leaseMs: number }) => sql<ClaimedDelivery>`
    WITH ${ASYNC_COMMIT},
    due AS (
      SELECT d.org_id, d.id FROM webhook_deliveries d
      JOIN webhook_subscriptions s ON s.org_id = d.org_id AND s.id = d.subscription_id AND s.active
      WHERE d.status = 'pending' AND d.next_attempt_at <= now()
        AND (d.lease_until IS NULL OR d.lease_until <= now())
      -- A batch of events fans out in one statement, at one next_attempt_at: their ids (time-ordered)
      -- keep them in the order they happened.
      ORDER BY d.next_attempt_at, d.event_id
      LIMIT ${p.limit}::int
      FOR UPDATE OF d SKIP LOCKED
    ), claimed AS (
      UPDATE webhook_deliveries d SET lease_id = ${p.leaseId}::uuid, lease_until = now() + ${ms(p.leaseMs)},
        unrecorded_claims = d.unrecorded_claims + 1
      FROM due WHERE d.org_id = due.org_id AND d.id = due.id
      RETURNING d.*
    )
    SELECT c.id, c.org_id, c.subscription_id, s.client_id, s.url, s.secret_ciphertext, c.event_id, c.event_type,
      e.created_at AS event_created_at, e.data::text AS data, e.metadata::text AS metadata,
      c.attempts, c.unrecorded_claims, c.scheduled_attempts, c.manual, c.resume_status, c.resume_at
    FROM claimed c
    JOIN webhook_subscriptions s ON s.org_id = c.org_id AND s.id = c.subscription_id
    JOIN event_log e ON e.org_id = c.org_id AND e.id = c.event_id
    CROSS JOIN async_commit
    ORDER BY c.next_attempt_at, c.event_id`,
);

/**
 * Leases up to `limit` due deliveries of active subscriptions, oldest due first. A lease a dead
 * worker left behind runs out, and the next claim after that takes the delivery over.
 */
export function claimDue(
  db: Db,
  lease: { id: string; ms: number },
  limit: number,
): Promise<ClaimedDelivery[]> {
  return claimDueStatement.run(db, { limit, leaseId: lease.id, leaseMs: lease.ms });
}

/** What one attempt did, as the log shows it. */
export interface AttemptRecord {
  id: string;
  attempt: number;
  manual: boolean;
  status: AttemptStatus;
  responseStatus: number | null;
  responseBody: string | null;
  errorClass: string | null;
  error: string | null;
  /** Null when no request was made. */
  durationMs: number | null;
}

/** Where the delivery goes after a failed attempt. */
export interface FailureOutcome {
  deliveryStatus: DeliveryStatus;
  scheduledAttempts: number;
  /** Delay before the next attempt when the delivery stays pending on its schedule. */
  delayMs: number | null;
  /** Or a fixed time to return to (after a manual attempt). */
  resumeAt: Date | null;
}

const logColumns = sql`(id, org_id, subscription_id, delivery_id, event_id, event_type, attempt, manual, status,
  response_status, response_body, error_class, error, duration_ms, next_attempt_at)`;

const recordSuccessesStatement = prepare(
  (
    _db,
    p: {
      orgIds: string[];
      deliveryIds: string[];
      leaseIds: string[];
      attemptIds: string[];
      attempts: number[];
      manuals: boolean[];
      responseStatuses: (number | null)[];
      responseBodies: (string | null)[];
      durationsMs: (number | null)[];
    },
  ) => sql<{ delivery_id: string }>`
    WITH ${ASYNC_COMMIT},
    success AS (
      SELECT * FROM unnest(${p.orgIds}::uuid[], ${p.deliveryIds}::uuid[], ${p.leaseIds}::uuid[],
        ${p.attemptIds}::uuid[], ${p.attempts}::int[], ${p.manuals}::boolean[], ${p.responseStatuses}::int[],
        ${p.responseBodies}::text[], ${p.durationsMs}::int[])
        AS r(org_id, delivery_id, lease_id, attempt_id, attempt, manual, response_status, response_body, duration_ms)
    ), leased AS (
      -- Locked in one order, so that two batches sharing a delivery (a lease taken over) cannot deadlock.
      SELECT d.org_id, d.id FROM webhook_deliveries d
      JOIN success r ON r.org_id = d.org_id AND r.delivery_id = d.id AND r.lease_id = d.lease_id
      ORDER BY d.org_id, d.id
      FOR UPDATE OF d
    ), delivery AS (
      UPDATE webhook_deliveries d SET status = 'succeeded', attempts = d.attempts + 1, unrecorded_claims = 0,
        scheduled_attempts = d.scheduled_attempts + CASE WHEN d.manual THEN 0 ELSE 1 END,
        next_attempt_at = NULL, manual = false, resume_status = NULL, resume_at = NULL,
        lease_id = NULL, lease_until = NULL, updated_at = now()
      FROM leased l WHERE d.org_id = l.org_id AND d.id = l.id
      RETURNING d.id, d.org_id, d.subscription_id, d.event_id, d.event_type
    ), log AS (
      INSERT INTO webhook_delivery_attempts (id, org_id, subscription_id, delivery_id, event_id, event_type,
        attempt, manual, status, response_status, response_body, duration_ms)
      SELECT r.attempt_id, d.org_id, d.subscription_id, d.id, d.event_id, d.event_type, r.attempt, r.manual,
        'succeeded', r.response_status, r.response_body, r.duration_ms
      FROM delivery d JOIN success r ON r.org_id = d.org_id AND r.delivery_id = d.id
      RETURNING org_id, subscription_id, delivery_id
    ), failing AS (
      SELECT s.org_id, s.id FROM webhook_subscriptions s
      WHERE (s.org_id, s.id) IN (SELECT org_id, subscription_id FROM log) AND s.consecutive_failures <> 0
      ORDER BY s.org_id, s.id
      FOR UPDATE OF s
    ), reset AS (
      UPDATE webhook_subscriptions s SET consecutive_failures = 0
      FROM failing f WHERE s.org_id = f.org_id AND s.id = f.id
    )
    SELECT log.delivery_id FROM log CROSS JOIN async_commit`,
);

/** A successful attempt, as its delivery's lease holder records it. */
export interface Success {
  delivery: Pick<ClaimedDelivery, 'org_id' | 'id'>;
  leaseId: string;
  record: AttemptRecord;
}

/**
 * The hot path: one statement records many successes (each fenced by its lease: false where another
 * worker took the delivery over) and resets their subscriptions' failure counters.
 */
export async function recordSuccesses(db: Db, successes: Success[]): Promise<boolean[]> {
  const rows = await recordSuccessesStatement.run(db, {
    orgIds: successes.map((success) => success.delivery.org_id),
    deliveryIds: successes.map((success) => success.delivery.id),
    leaseIds: successes.map((success) => success.leaseId),
    attemptIds: successes.map((success) => success.record.id),
    attempts: successes.map((success) => success.record.attempt),
    manuals: successes.map((success) => success.record.manual),
    responseStatuses: successes.map((success) => success.record.responseStatus),
    responseBodies: successes.map((success) => success.record.responseBody),
    durationsMs: successes.map((success) => success.record.durationMs),
  });
  const recorded = new Set(rows.map((row) => row.delivery_id));
  return successes.map((success) => recorded.has(success.delivery.id));
}

export interface SubscriptionHealth {
  active: boolean;
  consecutive_failures: number;
  just_disabled: boolean;
}

/** Counts a failure against the subscription; at the threshold the circuit breaker disables it. */
export async function countFailure(
  trx: Trx,
  subscription: { org_id: string; id: string },
  threshold: number,
): Promise<SubscriptionHealth | undefined> {
  const { rows } = await sql<SubscriptionHealth>`
    UPDATE webhook_subscriptions s SET
      consecutive_failures = s.consecutive_failures + 1,
      active = s.active AND s.consecutive_failures + 1 < ${threshold},
      disabled_at = CASE WHEN s.active AND s.consecutive_failures + 1 >= ${threshold} THEN now() ELSE s.disabled_at END
    WHERE s.org_id = ${subscription.org_id} AND s.id = ${subscription.id}
    -- The counter moves one at a time under the row lock: exactly one failure reaches the threshold.
    RETURNING s.active, s.consecutive_failures, (s.consecutive_failures = ${threshold} AND NOT s.active) AS just_disabled`.execute(
    trx,
  );
  return rows[0];
}

/** Records a failed attempt and, when the delivery stays on its schedule, the job that wakes its retry. */
export async function recordFailure(
  trx: Trx,
  delivery: ClaimedDelivery,
  leaseId: string,
  record: AttemptRecord,
  outcome: FailureOutcome,
): Promise<boolean> {
  const { rows } = await sql<{ recorded: number }>`
    WITH delivery AS (
      UPDATE webhook_deliveries SET status = ${outcome.deliveryStatus}, attempts = attempts + 1,
        unrecorded_claims = 0, scheduled_attempts = ${outcome.scheduledAttempts},
        next_attempt_at = CASE WHEN ${outcome.deliveryStatus} <> 'pending' THEN NULL
          WHEN ${outcome.delayMs}::float8 IS NOT NULL THEN now() + ${ms(outcome.delayMs ?? 0)}
          ELSE ${outcome.resumeAt}::timestamptz END,
        manual = false, resume_status = NULL, resume_at = NULL,
        lease_id = NULL, lease_until = NULL, updated_at = now()
      WHERE org_id = ${delivery.org_id} AND id = ${delivery.id} AND lease_id = ${leaseId}
      RETURNING id, status, next_attempt_at
    ), log AS (
      INSERT INTO webhook_delivery_attempts ${logColumns}
      SELECT ${record.id}, ${delivery.org_id}, ${delivery.subscription_id}, delivery.id, ${delivery.event_id},
        ${delivery.event_type}, ${record.attempt}, ${record.manual}, ${record.status}, ${record.responseStatus},
        ${record.responseBody}, ${record.errorClass}, ${record.error}, ${record.durationMs}, delivery.next_attempt_at
      FROM delivery
      RETURNING id
    ), wake AS (
      SELECT graphile_worker.add_job(${DISPATCH_TASK}, run_at => delivery.next_attempt_at,
        job_key => 'webhook_delivery:' || delivery.id, priority => ${DISPATCH_PRIORITY})
      FROM delivery WHERE delivery.status = 'pending'
    )
    SELECT (SELECT count(*)::int FROM log) AS recorded, (SELECT count(*) FROM wake) AS woken`.execute(trx);
  return rows[0].recorded > 0;
}

/**
 * Stops the pending deliveries of a disabled subscription: each becomes `skipped` with a log line.
 * Deliveries in flight are left to finish; they see the subscription disabled when they record.
 */
export async function skipPendingDeliveries(
  trx: Trx,
  subscription: { id: string; org_id: string },
  reason: string,
): Promise<number> {
  const pending = await trx
    .selectFrom('webhook_deliveries')
    .select(['id', 'event_id', 'event_type', 'attempts'])
    .where('org_id', '=', subscription.org_id)
    .where('subscription_id', '=', subscription.id)
    .where('status', '=', 'pending')
    .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<=', sql<Date>`now()`)]))
    .forUpdate()
    .skipLocked()
    .execute();
  if (!pending.length) return 0;
  await trx
    .updateTable('webhook_deliveries')
    .set({
      status: 'skipped',
      next_attempt_at: null,
      manual: false,
      resume_status: null,
      resume_at: null,
      updated_at: sql`now()`,
    })
    .where('org_id', '=', subscription.org_id)
    .where(
      'id',
      'in',
      pending.map((row) => row.id),
    )
    .execute();
  await trx
    .insertInto('webhook_delivery_attempts')
    .values(
      pending.map((row) => ({
        id: newId(),
        org_id: subscription.org_id,
        subscription_id: subscription.id,
        delivery_id: row.id,
        event_id: row.event_id,
        event_type: row.event_type,
        attempt: row.attempts + 1,
        status: 'skipped' as const,
        response_status: null,
        response_body: null,
        error_class: 'subscription_disabled',
        error: reason,
        duration_ms: null,
        next_attempt_at: null,
      })),
    )
    .execute();
  return pending.length;
}

/**
 * Asks for one attempt now, outside the schedule; afterwards the delivery returns to where it was
 * unless the attempt succeeds. False when an attempt of it is in flight.
 */
export async function requestManualAttempt(
  trx: Trx,
  subscription: SubscriptionRow,
  deliveryId: string,
): Promise<boolean> {
  const result = await sql`
    UPDATE webhook_deliveries SET
      resume_status = CASE WHEN manual THEN resume_status ELSE status END,
      resume_at = CASE WHEN manual THEN resume_at ELSE next_attempt_at END,
      manual = true, status = 'pending', next_attempt_at = now(), unrecorded_claims = 0, updated_at = now()
    WHERE id = ${deliveryId} AND org_id = ${subscription.org_id} AND subscription_id = ${subscription.id}
      AND (lease_until IS NULL OR lease_until <= now())`.execute(trx);
  return Number(result.numAffectedRows ?? 0) > 0;
}

/**
 * Puts every delivery of the window that did not succeed (failed, dead letter, skipped) back on a
 * fresh schedule, in event order. Deliveries pending or in flight are left alone.
 */
export async function requeueWindow(
  trx: Trx,
  subscription: SubscriptionRow,
  window: { since: Date; until: Date },
): Promise<number> {
  const result = await sql`
    UPDATE webhook_deliveries d SET status = 'pending', scheduled_attempts = 0,
      next_attempt_at = now() - interval '1 second' + ordered.position * interval '1 microsecond',
      manual = false, resume_status = NULL, resume_at = NULL, unrecorded_claims = 0, updated_at = now()
    FROM (
      SELECT id, row_number() OVER (ORDER BY event_created_at, event_id) AS position
      FROM webhook_deliveries
      WHERE org_id = ${subscription.org_id} AND subscription_id = ${subscription.id}
        AND event_created_at >= ${window.since} AND event_created_at < ${window.until}
        AND status IN ('failed', 'dead_letter', 'skipped')
    ) ordered
    WHERE d.org_id = ${subscription.org_id} AND d.id = ordered.id`.execute(trx);
  return Number(result.numAffectedRows ?? 0);
}

/** Drops finished deliveries (and their log) older than the retention, a slice at a time. */
export async function deleteOldDeliveries(db: Db, retentionDays: number): Promise<number> {
  let total = 0;
  for (;;) {
    const result = await sql`
      DELETE FROM webhook_deliveries WHERE (org_id, id) IN (
        SELECT org_id, id FROM webhook_deliveries
        WHERE created_at < now() - ${retentionDays}::int * interval '1 day' AND status <> 'pending'
        LIMIT 5000)`.execute(db);
    const deleted = Number(result.numAffectedRows ?? 0);
    total += deleted;
    if (deleted < 5000) return total;
  }
}
