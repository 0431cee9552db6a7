import { publicUrl } from '../../config.ts';
import type { Platform } from '../../platform/context.ts';
import type { Loop } from '../../platform/jobs/runner.ts';
import { followLists } from './list-follow.ts';
import { messagingSms, type SequenceSms } from './sms.ts';
import { sequenceTickLoop, type TickContext } from './tick.ts';
import { unsubscribeKeys } from './unsubscribe-routes.ts';

/** Enrollments one worker claims per round, and how many of them it runs at once at most. */
const BATCH = 200;
const CONCURRENCY = 6;

/**
 * Steps run at once in a process whose pool holds `poolMax` connections. An email step holds its
 * transaction's connection while the provider records the send on a second one. Three others hold one
 * while they run: graphile-worker's LISTEN, the outbox relay's batch (whose consumers write on the
 * pool) and the wallet-index refresh (its advisory lock). Were every connection held so, each step
 * would wait for a second one until the connect time-out: the steps leave one spare.
 */
export function stepConcurrency(poolMax: number): number {
  return Math.max(1, Math.min(CONCURRENCY, poolMax - 4));
}

export function sequenceTickContext(
  platform: Platform,
  sms: SequenceSms = messagingSms(platform.providers.sms.name),
): TickContext {
  const { config, db, log } = platform;
  return {
    db,
    email: platform.providers.email,
    sms,
    log,
    tickMs: config.sequenceTickMs,
    leaseMs: config.sequenceLeaseMs,
    minuteMs: config.sequenceMinuteMs,
    batchSize: BATCH,
    concurrency: stepConcurrency(config.databasePoolMax),
    unsubscribeKeys: unsubscribeKeys(platform),
    unsubscribeUrl: (token) => publicUrl(config, `/unsubscribe/${token}`),
  };
}

/** Marked contacts one transaction of the list pass looks at. */
const LIST_BATCH = 1000;

/**
 * The sequence tick: every `SEQUENCE_TICK_MS`, each worker runs the due steps (all of them, batch by
 * batch); on the same beat, the list pass enrolls and unenrolls the members of the lists sequences follow.
 */
export function sequenceJobs(platform: Platform): { loops: Loop[] } {
  const context = sequenceTickContext(platform);
  const { db, config } = platform;
  const lists = {
    db,
    minuteMs: config.sequenceMinuteMs,
    batchSize: LIST_BATCH,
    resyncMs: config.sequenceListResyncMs,
  };
  return {
    loops: [
      sequenceTickLoop(context),
      { name: 'sequence_lists', intervalMs: config.sequenceTickMs, run: () => followLists(lists) },
    ],
  };
}
