import { sql } from 'kysely';
import type { Logger } from 'pino';
import type { Db } from '../../platform/db/pool.ts';
import { type Lease, type LeasedWork, leasedLoop } from '../../platform/jobs/leased.ts';
import type { Loop } from '../../platform/jobs/runner.ts';
import { PlacementPendingError, type VoiceProvider } from '../../providers/voice/index.ts';
import { phoneReach } from '../contacts/service.ts';
import { advanceCall, type CallProgressHook } from './progress.ts';
import { tenantOf } from './record.ts';
import { type CallRow, type Placement, settlePlacement } from './store.ts';

/**
 * Placing the outbound calls `startOutboundCall` queued, as leased work (platform/jobs/leased.ts): a
 * worker claims due calls under a lease and dials each through the provider outside any transaction.
 * A worker killed mid-placement leaves its calls leased; once the lease is over the next claims them
 * and places them again, which the provider makes safe: `placeCall` dials once per call id. After
 * `MAX_ATTEMPTS` failed placements the call fails. A placement whose answer was lost
 * (`PlacementPendingError`) may have dialed: it is "maybe done" (`placement_state = 'unconfirmed'`),
 * never dialed again; its reports end the call, or, past its ring time, its length and a grace, the
 * loop's sweep fails it.
 */

const BATCH = 10;
export const MAX_ATTEMPTS = 3;
/** Beyond its ring time and length, how long a call whose placement is unconfirmed may still report. */
const UNCONFIRMED_GRACE_MS = 30 * 60_000;

export interface PlacementContext {
  db: Db;
  voice: VoiceProvider;
  progressed: CallProgressHook;
  leaseMs: number;
  pollMs: number;
  log: Logger;
}

export function callPlacements(context: PlacementContext): LeasedWork<CallRow> {
  return {
    name: 'call_placements',
    intervalMs: context.pollMs,
    table: 'calls',
    prefix: 'placement_',
    due: sql`t.placement_state = 'pending'`,
    leaseMs: context.leaseMs,
    batch: BATCH,
    // A failed placement is tried again once its lease would have ended.
    attempts: { max: MAX_ATTEMPTS, backoffMs: () => context.leaseMs },
    work: (lease) => placeCall(context, lease),
    exhausted: (lease) => endUnplaced(context.progressed, lease, 'placement_failed', 'abandoned'),
    settleUnconfirmed: (lease) => endUnplaced(context.progressed, lease, 'placement_unconfirmed'),
  };
}

/** The placement loop (a test runs one round with `.run()`). */
export function placementLoop(context: PlacementContext): Loop {
  return leasedLoop(context.db, callPlacements(context), context.log);
}

async function placeCall(context: PlacementContext, lease: Lease<CallRow>): Promise<void> {
  const { db, voice } = context;
  const call = lease.row;
  const placement = call.placement as Placement;
  const { blocked } = await phoneReach(db, tenantOf(call), call.to_number);
  if (blocked) {
    await endUnplaced(
      context.progressed,
      lease,
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
      context: placement.context ?? null,
    });
  } catch (error) {
    if (!(error instanceof PlacementPendingError)) throw error;
    // It may have been dialed: never again. Its reports end it, or the sweep does after this.
    const graceMs =
      (placement.ringTimeoutSeconds + placement.maxDurationSeconds) * 1000 + UNCONFIRMED_GRACE_MS;
    await lease.unconfirmed(graceMs);
    return;
  }
  await lease.inTransaction((trx) => settlePlacement(trx, call, 'placed'));
}

/** Fails a call that was not placed (or whose placement is unknown), unless it has ended already. */
async function endUnplaced(
  progressed: CallProgressHook,
  lease: Lease<CallRow>,
  disposition: string,
  settle?: 'abandoned',
): Promise<void> {
  await lease.inTransaction(async (trx, call) => {
    await lease.complete(trx);
    if (call.ended_at) return;
    if (settle) await settlePlacement(trx, call, settle);
    const now = new Date().toISOString();
    await advanceCall(trx, progressed, call, {
      id: `platform:${call.id}:failed`,
      stage: 'failed',
      occurredAt: now,
      endedAt: now,
      reason: 'failed',
      disposition,
    });
  });
}
