import type { Logger } from 'pino';
import { isUuid } from '../../platform/db/ids.ts';
import type { Db } from '../../platform/db/pool.ts';
import { inTransaction } from '../../platform/db/transaction.ts';
import { enqueueJob } from '../../platform/jobs/queue.ts';
import { PlacementPendingError, type VoiceProvider } from '../../providers/voice/index.ts';
import { phoneReach } from '../contacts/service.ts';
import { advanceCall, type CallProgressHook } from './progress.ts';
import { tenantOf } from './record.ts';
import { type CallRow, claimDuePlacements, lockCall, type Placement, settlePlacement } from './store.ts';

/**
 * Placing the outbound calls `startOutboundCall` queued. A worker claims due calls with a lease (one
 * statement, committed at once) and dials each through the provider outside any transaction. A worker
 * killed mid-placement leaves its calls leased; once the lease is over the next claims them and
 * places them again, which the provider makes safe: `placeCall` dials once per call id. After
 * `MAX_ATTEMPTS` failed placements the call fails.
 */

export const PLACEMENT_WATCHDOG_TASK = 'call_placement_watchdog';
const BATCH = 10;
export const MAX_ATTEMPTS = 3;
/** Beyond its ring time and length, how long a call whose placement is unconfirmed may still report. */
const UNCONFIRMED_GRACE_MS = 30 * 60_000;

export interface PlacementContext {
  db: Db;
  voice: VoiceProvider;
  progressed: CallProgressHook;
  leaseMs: number;
  log: Logger;
}

/** One round of the placement loop; true when there may be more due right away. */
export async function placeDueCalls(context: PlacementContext): Promise<boolean> {
  const calls = await claimDuePlacements(context.db, context.leaseMs, BATCH);
  await Promise.all(calls.map((call) => placeCall(context, call)));
  return calls.length === BATCH;
}

async function placeCall(context: PlacementContext, call: CallRow): Promise<void> {
  const { db, voice, progressed, log } = context;
  const placement = call.placement as Placement;
  const { blocked } = await phoneReach(db, tenantOf(call), call.to_number);
  if (blocked) {
    await endUnplaced(
      db,
      progressed,
      call.id,
      blocked === 'opted_out' ? 'opted_out' : 'do_not_call',
      'abandoned',
    );
    return;
  }
  try {
    await voice.placeCall({
      callId: call.id,
      from: call.from_number,
      to: call.to_number,
      ringTimeoutSeconds: placement.ringTimeoutSeconds,
      maxDurationSeconds: placement.maxDurationSeconds,
      agent: placement.agent,
      voicemail: placement.voicemail,
      metadata: placement.metadata,
    });
    await settlePlacement(db, call.id, 'placed');
  } catch (error) {
    if (error instanceof PlacementPendingError) {
      // It may have been dialed: never again. Its reports end it, or the watchdog does.
      const deadline =
        (placement.ringTimeoutSeconds + placement.maxDurationSeconds) * 1000 + UNCONFIRMED_GRACE_MS;
      await inTransaction(db, async (trx) => {
        await settlePlacement(trx, call.id, 'unconfirmed');
        await enqueueJob(
          trx,
          PLACEMENT_WATCHDOG_TASK,
          { callId: call.id },
          { runAt: new Date(Date.now() + deadline), jobKey: `${PLACEMENT_WATCHDOG_TASK}:${call.id}` },
        );
      });
      return;
    }
    log.warn({ err: error, callId: call.id, attempt: call.placement_attempts }, 'placing a call failed');
    // Otherwise the lease runs out and the call is claimed again, up to MAX_ATTEMPTS.
    if (call.placement_attempts >= MAX_ATTEMPTS)
      await endUnplaced(db, progressed, call.id, 'placement_failed', 'abandoned');
  }
}

/** `call_placement_watchdog`: fails a call whose placement was never confirmed and that never reported its end. */
export async function expireUnconfirmedPlacement(
  db: Db,
  progressed: CallProgressHook,
  payload: unknown,
): Promise<void> {
  const callId = (payload as { callId?: unknown } | null)?.callId;
  if (typeof callId !== 'string' || !isUuid(callId)) return;
  await endUnplaced(db, progressed, callId, 'placement_unconfirmed');
}

/** Fails a call that was not placed (or whose placement is unknown), unless it has ended already. */
async function endUnplaced(
  db: Db,
  progressed: CallProgressHook,
  callId: string,
  disposition: string,
  settle?: 'abandoned',
): Promise<void> {
  await inTransaction(db, async (trx) => {
    const call = await lockCall(trx, callId);
    if (!call || call.ended_at) return;
    if (settle) await settlePlacement(trx, callId, settle);
    const now = new Date().toISOString();
    await advanceCall(trx, progressed, call, {
      id: `platform:${callId}:failed`,
      stage: 'failed',
      occurredAt: now,
      endedAt: now,
      reason: 'failed',
      disposition,
    });
  });
}
