import { sql } from 'kysely';
import type { Logger } from 'pino';
import type { TenantScope } from '../../platform/auth/tenant.ts';
import type { Db, Trx } from '../../platform/db/pool.ts';
import { inTransaction } from '../../platform/db/transaction.ts';
import { ApiError } from '../../platform/http/errors.ts';
import { type LeasedWork, leasedLoop } from '../../platform/jobs/leased.ts';
import type { Loop } from '../../platform/jobs/runner.ts';
import { type EmailProvider, EmailRejectedError } from '../../providers/email/index.ts';
import { createActivity } from '../activities/service.ts';
import { type ContactRecord, getContact, phoneReach } from '../contacts/service.ts';
import { type MergeValues, renderMergeFields } from './merge.ts';
import { emitEnrollmentEvent } from './service.ts';
import type { SequenceSms } from './sms.ts';
import {
  type ClaimedEnrollment,
  dueSteps,
  type EnrollmentRow,
  isUnsubscribed,
  lockClaimedEnrollment,
  NOTHING_LEFT,
  recordStepSend,
  type Step,
  stopEnrollments,
  UNCLAIMED,
  updateEnrollmentRow,
} from './store.ts';
import { type UnsubscribeKeys, unsubscribeToken } from './unsubscribe.ts';

/**
 * The sequence tick, as leased work (platform/jobs/leased.ts): each worker claims due enrollments of
 * active sequences under a lease and runs each one's current step in its own transaction, which locks the
 * enrollment, checks it still stands where it was claimed, sends, records the send under the (enrollment,
 * step) primary key and advances the enrollment. The step is its own fencing token: a worker whose lease
 * ran out finds the step moved on and does nothing, or, if nobody ran it meanwhile, runs the step that is
 * due, once. A worker killed mid-step rolls back; its claims run out after the lease and another worker
 * takes them. The providers are idempotent by the step's key (`sequence_step:<enrollment>:<step>`): an
 * email sent just before a crash is recognised when the step runs again and is not sent twice; an SMS is
 * a row of the SMS module written in the same transaction. A step that cannot be sent pauses its
 * enrollment with the reason.
 */

export interface TickContext {
  db: Db;
  email: EmailProvider;
  sms: SequenceSms;
  log: Logger;
  /** `SEQUENCE_TICK_MS`: how long an idle worker waits before it looks for due steps again. */
  tickMs: number;
  leaseMs: number;
  minuteMs: number;
  /** Enrollments one worker claims at a time, and runs this many at once. */
  batchSize: number;
  concurrency: number;
  unsubscribeKeys: UnsubscribeKeys;
  /** The public link of an unsubscribe token. */
  unsubscribeUrl: (token: string) => string;
}

/**
 * A step claimed this many times (a deferred email, an unexpected error, a worker that died) pauses with
 * `send_failed`. The back-off grows by `RETRY_STEP_MS` per attempt (capped by the lease), so ten attempts
 * span about 20 minutes: longer than an SMTP send claim of a crashed process stays fresh.
 */
export const MAX_STEP_ATTEMPTS = 10;
const RETRY_STEP_MS = 30_000;

/** A step that cannot be sent for a reason a retry would meet again: its enrollment pauses with the reason. */
export class StepBlocked extends Error {
  constructor(readonly reason: string) {
    super(`step blocked: ${reason}`);
  }
}

/** The tick's declaration: due steps, claimed in batches, run a few at once, retried with a linear back-off. */
export function sequenceTick(context: TickContext): LeasedWork<EnrollmentRow> {
  return {
    name: 'sequence_tick',
    intervalMs: context.tickMs,
    ...dueSteps,
    leaseMs: context.leaseMs,
    batch: context.batchSize,
    concurrency: context.concurrency,
    attempts: {
      max: MAX_STEP_ATTEMPTS,
      backoffMs: (attempt) => Math.min(context.leaseMs, RETRY_STEP_MS) * attempt,
    },
    work: (lease) => runClaimedStep(context, lease.row),
    exhausted: async (lease) => {
      await lease.inTransaction((trx) => pauseBlocked(trx, lease.row, 'send_failed'));
    },
  };
}

/** The tick's loop: every `SEQUENCE_TICK_MS` each worker runs the due steps, batch by batch. */
export function sequenceTickLoop(context: TickContext): Loop {
  return leasedLoop(context.db, sequenceTick(context), context.log);
}

/** One round of the tick; true when a full batch was claimed, so more may be due right away. */
export function runDueSteps(context: TickContext): Promise<boolean> {
  return sequenceTickLoop(context).run();
}

/** Runs a claimed step; an error other than a blocked step is the loop's to retry. */
export async function runClaimedStep(context: TickContext, claimed: ClaimedEnrollment): Promise<void> {
  try {
    await inTransaction(context.db, (trx) => runStep(context, trx, claimed));
  } catch (error) {
    if (!(error instanceof StepBlocked)) throw error;
    await inTransaction(context.db, (trx) => pauseBlocked(trx, claimed, error.reason));
  }
}

async function runStep(context: TickContext, trx: Trx, claimed: ClaimedEnrollment): Promise<void> {
  const row = await lockClaimedEnrollment(trx, claimed.id);
  if (!row) return;
  // Run, stopped or advanced by someone else since the claim: nothing to do here.
  if (row.status !== 'active' || row.current_step !== claimed.current_step) return;
  await runLockedStep(context, trx, row);
}

export type LockedEnrollment = NonNullable<Awaited<ReturnType<typeof lockClaimedEnrollment>>>;

/**
 * Runs the current step of an enrollment this transaction has locked and found where it was claimed.
 * Should two runs of one step ever get this far, the step's key lets one commit: the (enrollment, step)
 * key of its send row, and the SMS module's cause key.
 */
export async function runLockedStep(context: TickContext, trx: Trx, row: LockedEnrollment): Promise<void> {
  if (row.sequence_status !== 'active') {
    await updateEnrollmentRow(trx, row.id, UNCLAIMED);
    return;
  }
  const steps = row.steps as Step[];
  if (row.current_step >= steps.length) {
    await complete(trx, row);
    return;
  }
  const step = steps[row.current_step];
  const tenant = { orgId: row.org_id, clientId: row.client_id };
  const contact = await getContact(trx, tenant, row.contact_id);
  if (contact.archived_at !== null) throw new StepBlocked('contact_archived');
  const values = mergeValues(contact);
  const causeKey = `sequence_step:${row.id}:${row.current_step}`;
  const sent =
    step.kind === 'email'
      ? await sendEmailStep(context, trx, tenant, row, step, contact, values, causeKey)
      : await sendSmsStep(context, trx, tenant, row, step, contact, values, causeKey);
  const send = {
    enrollment_id: row.id,
    step_index: row.current_step,
    org_id: row.org_id,
    client_id: row.client_id,
    kind: step.kind,
    cause_key: causeKey,
    message_ref: sent.messageRef,
    to_address: sent.to,
    from_address: sent.from ?? null,
  };
  const nextStep = row.current_step + 1;
  if (nextStep >= steps.length) {
    await complete(trx, row, nextStep, send);
    return;
  }
  const waitMs = steps[nextStep].wait_minutes * context.minuteMs;
  await recordStepSend(trx, send, {
    current_step: nextStep,
    last_step_at: sql<Date>`now()`,
    next_run_at: sql<Date>`now() + ${waitMs} * interval '1 millisecond'`,
    ...UNCLAIMED,
  });
}

interface Sent {
  messageRef: string;
  to: string;
  /** The sender number of an SMS. */
  from?: string;
}

async function sendEmailStep(
  context: TickContext,
  trx: Trx,
  tenant: TenantScope,
  row: EnrollmentRow,
  step: Step,
  contact: ContactRecord,
  values: MergeValues,
  causeKey: string,
): Promise<Sent> {
  const to = contact.email;
  if (!to) throw new StepBlocked('missing_email');
  if (await isUnsubscribed(trx, tenant, to)) throw new StepBlocked('opted_out');
  const link = context.unsubscribeUrl(unsubscribeToken(context.unsubscribeKeys, row.id, row.current_step));
  const subject = renderMergeFields(step.subject ?? '', values);
  const body = renderMergeFields(step.body, values);
  try {
    // Sent while this transaction holds the enrollment: a reply or a pause waits for it, then sees it.
    const result = await context.email.send({
      key: causeKey,
      to,
      subject,
      text: `${body}\n\n--\nUnsubscribe: ${link}\n`,
      headers: {
        'List-Unsubscribe': `<${link}>`,
        'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
      },
    });
    await createActivity(
      trx,
      tenant,
      { activity_type: 'email', direction: 'outbound', contact_id: contact.id, subject, body },
      { linksRead: true },
    );
    return { messageRef: result.messageId, to };
  } catch (error) {
    if (error instanceof EmailRejectedError) throw new StepBlocked('email_rejected');
    if (error instanceof TypeError) throw new StepBlocked('invalid_email');
    throw error;
  }
}

async function sendSmsStep(
  context: TickContext,
  trx: Trx,
  tenant: TenantScope,
  row: EnrollmentRow,
  step: Step,
  contact: ContactRecord,
  values: MergeValues,
  causeKey: string,
): Promise<Sent> {
  const to = contact.phone;
  if (!to) throw new StepBlocked('missing_phone');
  if ((await phoneReach(trx, tenant, to)).blocked) throw new StepBlocked('opted_out');
  try {
    const sms = await context.sms.send(trx, tenant, {
      to,
      body: renderMergeFields(step.body, values),
      contactId: contact.id,
      causeKey,
      // The message's events echo the enrollment's metadata, as the enrollment's own do.
      metadata: row.metadata,
    });
    return { messageRef: sms.messageId, to: sms.to, from: sms.from };
  } catch (error) {
    if (error instanceof ApiError && error.statusCode < 500) throw new StepBlocked(smsBlockReason(error));
    throw error;
  }
}

/** The pause reason of an SMS the SMS module refused. */
function smsBlockReason(error: ApiError): string {
  const code: string = error.code;
  if (code === 'fuel_exhausted' || code === 'insufficient_fuel') return 'fuel_exhausted';
  if (code === 'contact_opted_out' || code === 'opted_out' || code === 'do_not_contact') return 'opted_out';
  if (code === 'no_sender_number' || code === 'number_not_found') return 'no_sender_number';
  return 'sms_rejected';
}

function mergeValues(contact: ContactRecord): MergeValues {
  return {
    first_name: contact.first_name,
    last_name: contact.last_name,
    full_name: contact.full_name,
    title: contact.title,
    company_name: contact.company?.name ?? null,
    email: contact.email,
  };
}

/**
 * The final step fired (recorded with `send`) or the steps end before the current one: completed, with
 * both events.
 */
async function complete(
  trx: Trx,
  row: EnrollmentRow,
  currentStep = row.current_step,
  send?: Parameters<typeof recordStepSend>[1],
): Promise<void> {
  const changes = {
    status: 'completed' as const,
    current_step: currentStep,
    completed_at: sql<Date>`now()`,
    ...(send ? { last_step_at: sql<Date>`now()` } : {}),
    ...NOTHING_LEFT,
    attempts: 0,
  };
  const done = send
    ? await recordStepSend(trx, send, changes)
    : await updateEnrollmentRow(trx, row.id, changes);
  await emitEnrollmentEvent(trx, 'sequence.enrollment.completed', done);
  await emitEnrollmentEvent(trx, 'sequence.completed', done);
}

/** Pauses an enrollment whose claimed step cannot be sent, unless it moved on meanwhile. */
async function pauseBlocked(trx: Trx, claimed: ClaimedEnrollment, reason: string): Promise<void> {
  const row = await lockClaimedEnrollment(trx, claimed.id);
  if (row?.status !== 'active' || row.current_step !== claimed.current_step) return;
  const [paused] = await stopEnrollments(trx, [row.id], 'paused', reason);
  await emitEnrollmentEvent(trx, 'sequence.enrollment.paused', paused);
}
