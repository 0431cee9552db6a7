import type { Executor } from '../../platform/db/pool.ts';
import type { Json } from '../../platform/db/schema.ts';
import type { VoiceProviderName } from './types.ts';

export interface VoicePlacementsTable {
  call_id: string;
  provider: VoiceProviderName;
  provider_call_id: string | null;
  placed_at: Date;
  timeline: Json<unknown> | null;
  /** Simulator only: the context the call was placed with (a pre-call brief), as the agent got it. */
  context: string | null;
}

declare module '../../platform/db/schema.ts' {
  interface Database {
    voice_placements: VoicePlacementsTable;
  }
}

export interface Placement {
  callId: string;
  providerCallId: string | null;
  placedAt: Date;
  timeline: unknown;
}

/**
 * Claims a call id for one dial. `created` is false when the id was claimed before, by this or
 * another process: the caller must not dial again, and gets the first claim back.
 */
export async function claimPlacement(
  db: Executor,
  claim: {
    callId: string;
    provider: VoiceProviderName;
    providerCallId: string | null;
    placedAt?: Date;
    timeline?: unknown;
    context?: string | null;
  },
): Promise<{ created: boolean; placement: Placement }> {
  const inserted = await db
    .insertInto('voice_placements')
    .values({
      call_id: claim.callId,
      provider: claim.provider,
      provider_call_id: claim.providerCallId,
      placed_at: claim.placedAt ?? new Date(),
      timeline: claim.timeline === undefined ? null : JSON.stringify(claim.timeline),
      context: claim.context ?? null,
    })
    .onConflict((conflict) => conflict.column('call_id').doNothing())
    .returningAll()
    .executeTakeFirst();
  if (inserted) return { created: true, placement: toPlacement(inserted) };
  const existing = await db
    .selectFrom('voice_placements')
    .selectAll()
    .where('call_id', '=', claim.callId)
    .executeTakeFirstOrThrow();
  return { created: false, placement: toPlacement(existing) };
}

export async function recordProviderCallId(
  db: Executor,
  callId: string,
  providerCallId: string,
): Promise<void> {
  await db
    .updateTable('voice_placements')
    .set({ provider_call_id: providerCallId })
    .where('call_id', '=', callId)
    .execute();
}

/** Gives a call id back after the provider refused the dial, so a retry can place it. */
export async function releasePlacement(db: Executor, callId: string): Promise<void> {
  await db
    .deleteFrom('voice_placements')
    .where('call_id', '=', callId)
    .where('provider_call_id', 'is', null)
    .execute();
}

function toPlacement(row: {
  call_id: string;
  provider_call_id: string | null;
  placed_at: Date;
  timeline: unknown;
}): Placement {
  return {
    callId: row.call_id,
    providerCallId: row.provider_call_id,
    placedAt: row.placed_at,
    timeline: row.timeline,
  };
}
