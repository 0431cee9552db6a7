import type { Platform } from '../../platform/context.ts';
import type { Loop } from '../../platform/jobs/runner.ts';
import { runDueJobs } from './run.ts';

/** The AI job loop: pre-call briefs and lead enrichments. */
export function aiJobLoops(platform: Platform): Loop[] {
  const { db, llm, config, log } = platform;
  return [
    {
      name: 'ai_jobs',
      intervalMs: config.aiJobPollMs,
      run: () =>
        runDueJobs({ db, llm, leaseMs: config.aiJobLeaseMs, maxAttempts: config.aiJobMaxAttempts, log }),
    },
  ];
}
