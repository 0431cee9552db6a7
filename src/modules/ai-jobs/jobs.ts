import type { Platform } from '../../platform/context.ts';
import { leasedLoop } from '../../platform/jobs/leased.ts';
import type { Loop } from '../../platform/jobs/runner.ts';
import { aiJobWork } from './run.ts';

/** The AI job loop: pre-call briefs and lead enrichments. */
export function aiJobLoops(platform: Platform): Loop[] {
  const { db, config, log } = platform;
  const work = aiJobWork({
    db,
    llm: platform.providers.llm,
    leaseMs: config.aiJobLeaseMs,
    maxAttempts: config.aiJobMaxAttempts,
    pollMs: config.aiJobPollMs,
  });
  return [leasedLoop(db, work, log)];
}
