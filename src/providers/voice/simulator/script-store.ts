import { sql } from 'kysely';
import type { Executor } from '../../../platform/db/pool.ts';
import type { Json } from '../../../platform/db/schema.ts';
import type { NumberScript, ScriptedOutcome, TranscriptTurn } from '../types.ts';

export interface VoiceSimulatorNumbersTable {
  number: string;
  outcome: ScriptedOutcome;
  duration_seconds: number | null;
  transcript: Json<TranscriptTurn[]> | null;
  summary: string | null;
  updated_at: Date;
}

declare module '../../../platform/db/schema.ts' {
  interface Database {
    voice_simulator_numbers: VoiceSimulatorNumbersTable;
  }
}

/** Sets what a simulated call to `number` (E.164) does; `created` when the number had no script. */
export async function putNumberScript(
  db: Executor,
  number: string,
  script: NumberScript,
): Promise<{ created: boolean; script: NumberScript }> {
  const row = {
    outcome: script.outcome,
    duration_seconds: script.duration_seconds ?? null,
    transcript: script.transcript ? JSON.stringify(script.transcript) : null,
    summary: script.summary ?? null,
  };
  const saved = await db
    .insertInto('voice_simulator_numbers')
    .values({ number, ...row, updated_at: new Date() })
    .onConflict((conflict) => conflict.column('number').doUpdateSet({ ...row, updated_at: new Date() }))
    // xmax is 0 on a fresh insert, the updating transaction's id on an upsert that updated.
    .returning(['outcome', 'duration_seconds', 'transcript', 'summary', sql<boolean>`xmax = 0`.as('created')])
    .executeTakeFirstOrThrow();
  return { created: saved.created, script: toScript(saved) };
}

/** The script of `number`, or null: an unscripted number is answered (see the simulator). */
export async function getNumberScript(db: Executor, number: string): Promise<NumberScript | null> {
  const row = await db
    .selectFrom('voice_simulator_numbers')
    .select(['outcome', 'duration_seconds', 'transcript', 'summary'])
    .where('number', '=', number)
    .executeTakeFirst();
  return row ? toScript(row) : null;
}

function toScript(row: {
  outcome: ScriptedOutcome;
  duration_seconds: number | null;
  transcript: TranscriptTurn[] | null;
  summary: string | null;
}): NumberScript {
  return {
    outcome: row.outcome,
    ...(row.duration_seconds !== null ? { duration_seconds: row.duration_seconds } : {}),
    ...(row.transcript !== null ? { transcript: row.transcript } : {}),
    ...(row.summary !== null ? { summary: row.summary } : {}),
  };
}
