import { sql } from 'kysely';
import type { Logger } from 'pino';
import type { Db } from '../../platform/db/pool.ts';
import { type Lease, type LeasedWork, leasedLoop } from '../../platform/jobs/leased.ts';
import type { Loop } from '../../platform/jobs/runner.ts';
import {
  type SmsProvider,
  SmsProviderUnavailableError,
  type SmsStatusUpdate,
} from '../../providers/sms/index.ts';
import { phoneReach } from '../contacts/service.ts';
import { advanceMessage, applyStatus, type StatusChange } from './service.ts';
import { clearReport, type MessageRow } from './store.ts';

/**
 * Sending the messages `sendMessage` accepted, as leased work (platform/jobs/leased.ts): a worker
 * claims due messages under a lease, checks consent again (`phoneReach`: an opt-out or do-not-contact
 * since the accept fails the message and refunds its FUEL) and hands each to the provider outside any
 * transaction, then records the outcome under its lease. A worker killed mid-send leaves the message
 * leased; after the lease the next worker sends it again, which the simulator makes safe (one send per
 * message id); for Twilio the gap between the carrier's answer and its record is the one place a crash
 * can send twice. A send that failed in a way that may have reached the carrier is never repeated: it
 * is "maybe done" (`send_state = 'unconfirmed'`) until its status callback settles it, or it fails
 * after `UNCONFIRMED_GRACE_MS` with its FUEL kept.
 */

/** A send that failed this many times, certainly without reaching the carrier, fails for good. */
export const MAX_SEND_ATTEMPTS = 5;
/** How long an `unconfirmed` send waits for the status callback that settles it before it fails. */
export const UNCONFIRMED_GRACE_MS = 60 * 60_000;

export interface SenderContext {
  db: Db;
  provider: SmsProvider;
  leaseMs: number;
  batch: number;
  pollMs: number;
  statusCallbackUrl: string | null;
  log: Logger;
}

/** The sends: messages whose `send_state` is pending. */
export function smsSends(context: SenderContext): LeasedWork<MessageRow> {
  return {
    name: 'sms_sends',
    intervalMs: context.pollMs,
    table: 'sms_messages',
    prefix: 'send_',
    due: sql`t.send_state = 'pending'`,
    onClaim: sql`status = CASE WHEN t.status = 'queued' THEN 'sending' ELSE t.status END`,
    leaseMs: context.leaseMs,
    batch: context.batch,
    // A plain failure is tried again once its lease would have ended.
    attempts: { max: MAX_SEND_ATTEMPTS, backoffMs: () => context.leaseMs },
    work: (lease) => sendOne(context, lease),
    exhausted: (lease) =>
      finish(lease, { status: 'failed', errorCode: 'provider_error', refund: true, settleSend: true }),
    // Perhaps sent, never confirmed: failed, and its FUEL kept (the carrier may have billed it).
    settleUnconfirmed: (lease) =>
      finish(lease, { status: 'failed', errorCode: 'provider_error', settleSend: true }),
  };
}

/** The delivery reports held on their messages (the simulator's) once due. */
export function smsReports(
  context: Pick<SenderContext, 'provider' | 'leaseMs' | 'batch' | 'pollMs'>,
): LeasedWork<MessageRow> {
  return {
    name: 'sms_reports',
    intervalMs: context.pollMs,
    table: 'sms_messages',
    prefix: 'report_',
    due: sql`t.report IS NOT NULL`,
    leaseMs: context.leaseMs,
    batch: context.batch,
    // A report that cannot be applied now is tried again, for as long as it takes.
    attempts: { max: Number.POSITIVE_INFINITY, backoffMs: () => context.leaseMs },
    work: async (lease) => {
      await lease.inTransaction(async (trx) => {
        await applyStatus(trx, lease.row.report as unknown as SmsStatusUpdate, context.provider.name);
        await clearReport(trx, lease.row, lease.row.report);
      });
    },
    exhausted: async () => {},
  };
}

/** The send loop (a test runs one round with `.run()`). */
export function sendLoop(context: SenderContext): Loop {
  return leasedLoop(context.db, smsSends(context), context.log);
}

/** The delivery-report loop. */
export function reportLoop(context: SenderContext): Loop {
  return leasedLoop(context.db, smsReports(context), context.log);
}

async function sendOne(context: SenderContext, lease: Lease<MessageRow>): Promise<void> {
  const { db, provider, log } = context;
  const { row } = lease;
  if (row.status !== 'queued' && row.status !== 'sending') {
    // Settled already (a status callback of an earlier attempt): nothing to send.
    await finish(lease, { status: row.status as StatusChange['status'], settleSend: true });
    return;
  }
  const { blocked } = await phoneReach(db, { orgId: row.org_id, clientId: row.client_id }, row.to_number);
  if (blocked) {
    await finish(lease, { status: 'failed', errorCode: blocked, refund: true, settleSend: true });
    return;
  }
  let result: Awaited<ReturnType<SmsProvider['send']>>;
  try {
    result = await provider.send({
      messageId: row.id,
      from: row.from_number,
      to: row.to_number,
      body: row.body,
      mediaUrls: row.media_urls,
      statusCallbackUrl: context.statusCallbackUrl,
    });
  } catch (error) {
    if (error instanceof SmsProviderUnavailableError && error.mayHaveBeenSent) {
      await lease.unconfirmed(UNCONFIRMED_GRACE_MS);
      return;
    }
    // Certainly not sent: tried again, up to MAX_SEND_ATTEMPTS.
    throw error;
  }
  const change: StatusChange =
    result.outcome === 'accepted'
      ? { status: result.status, providerMessageId: result.providerMessageId, settleSend: true }
      : {
          status: 'failed',
          errorCode: result.errorCode,
          providerErrorCode: result.providerErrorCode,
          providerMessageId: result.providerMessageId,
          refund: true,
          settleSend: true,
        };
  // Sent: a failure to record it must not count as a failed send; the lease runs out instead.
  await finish(lease, change).catch((error) =>
    log.error({ err: error, messageId: row.id }, 'recording an SMS send failed'),
  );
}

/** Moves the message on, under its lease (`settleSend` ends the lease). */
async function finish(lease: Lease<MessageRow>, change: StatusChange): Promise<void> {
  await lease.inTransaction((trx, row) => advanceMessage(trx, row, change));
}
