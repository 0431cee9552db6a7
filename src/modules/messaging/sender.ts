import type { Logger } from 'pino';
import type { Db } from '../../platform/db/pool.ts';
import { inTransaction } from '../../platform/db/transaction.ts';
import {
  type SmsProvider,
  SmsProviderUnavailableError,
  type SmsStatusUpdate,
} from '../../providers/sms/index.ts';
import { phoneReach } from '../contacts/service.ts';
import { advanceMessage, applyStatus, type StatusChange } from './service.ts';
import {
  claimDueReports,
  claimDueSends,
  clearReport,
  expireUnconfirmedSends,
  lockMessage,
  type MessageRow,
  updateMessage,
} from './store.ts';

/**
 * Sending the messages `sendMessage` accepted. A worker claims due messages with a lease (one
 * statement, committed at once), checks consent again (`phoneReach`: an opt-out or do-not-contact
 * since the accept fails the message and refunds its FUEL) and hands each to the provider outside any
 * transaction, then records the outcome. Two workers never hold the same message: the claim skips
 * locked rows and a claimed message is not due until its lease ends. A worker killed mid-send leaves
 * the message leased; after the lease the next worker sends it again, which the simulator makes safe
 * (one send per message id); for Twilio the gap between the carrier's answer and its record is the
 * one place a crash can send twice. A send that failed in a way that may have reached the carrier is
 * never repeated (`unconfirmed`): its status callback settles it.
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
  statusCallbackUrl: string | null;
  log: Logger;
}

/** One round of the send loop; true when there may be more due right away. */
export async function sendDueMessages(context: SenderContext): Promise<boolean> {
  for (const id of await expireUnconfirmedSends(context.db, context.batch)) {
    // Perhaps sent, never confirmed: failed, and its FUEL kept (the carrier may have billed it).
    await finish(context.db, id, { status: 'failed', errorCode: 'provider_error' }).catch((error) =>
      context.log.error({ err: error, messageId: id }, 'expiring an unconfirmed SMS failed'),
    );
  }
  const rows = await claimDueSends(context.db, context.leaseMs, context.batch);
  await Promise.all(rows.map((row) => sendOne(context, row)));
  return rows.length === context.batch;
}

async function sendOne(context: SenderContext, row: MessageRow): Promise<void> {
  const { db, provider, log } = context;
  try {
    if (row.status !== 'queued' && row.status !== 'sending') {
      // Settled already (a status callback of an earlier attempt): nothing to send.
      await finish(db, row.id, { status: row.status as StatusChange['status'], settleSend: true });
      return;
    }
    const { blocked } = await phoneReach(db, { orgId: row.org_id, clientId: row.client_id }, row.to_number);
    if (blocked) {
      await finish(db, row.id, { status: 'failed', errorCode: blocked, refund: true, settleSend: true });
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
        await updateMessage(db, row.id, {
          send_state: 'unconfirmed',
          send_after: new Date(Date.now() + UNCONFIRMED_GRACE_MS),
        });
        return;
      }
      log.warn({ err: error, messageId: row.id, attempt: row.send_attempts }, 'sending an SMS failed');
      // Otherwise the lease runs out and the message is claimed again, up to MAX_SEND_ATTEMPTS.
      if (row.send_attempts >= MAX_SEND_ATTEMPTS)
        await finish(db, row.id, {
          status: 'failed',
          errorCode: 'provider_error',
          refund: true,
          settleSend: true,
        });
      return;
    }
    if (result.outcome === 'accepted') {
      await finish(db, row.id, {
        status: result.status,
        providerMessageId: result.providerMessageId,
        settleSend: true,
      });
    } else {
      await finish(db, row.id, {
        status: 'failed',
        errorCode: result.errorCode,
        providerErrorCode: result.providerErrorCode,
        providerMessageId: result.providerMessageId,
        refund: true,
        settleSend: true,
      });
    }
  } catch (error) {
    log.error({ err: error, messageId: row.id }, 'recording an SMS send failed');
  }
}

async function finish(db: Db, id: string, change: StatusChange): Promise<void> {
  await inTransaction(db, async (trx) => {
    const row = await lockMessage(trx, id);
    if (row) await advanceMessage(trx, row, change);
  });
}

/** One round of the delivery-report loop: reports held on their messages (the simulator's) that are due. */
export async function applyDueReports(
  context: Pick<SenderContext, 'db' | 'provider' | 'leaseMs' | 'batch' | 'log'>,
) {
  const rows = await claimDueReports(context.db, context.leaseMs, context.batch);
  await Promise.all(
    rows.map((row) =>
      inTransaction(context.db, async (trx) => {
        await applyStatus(trx, row.report as SmsStatusUpdate, context.provider.name);
        await clearReport(trx, row.id, row.report);
      }).catch((error) =>
        context.log.error({ err: error, messageId: row.id }, 'applying an SMS report failed'),
      ),
    ),
  );
  return rows.length === context.batch;
}
