import type { Platform } from '../../platform/context.ts';
import type { JobHandler } from '../../platform/jobs/runner.ts';
import { deleteExpiredAliases } from './store.ts';

/** The agents' background work: a daily clean-up of expired slug aliases. */
export function agentJobs(platform: Platform): { tasks: Record<string, JobHandler>; crontab: string[] } {
  return {
    tasks: {
      agent_alias_cleanup: async () => {
        await deleteExpiredAliases(platform.db);
      },
    },
    crontab: ['23 3 * * * agent_alias_cleanup'],
  };
}
