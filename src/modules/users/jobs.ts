import type { Platform } from '../../platform/context.ts';
import { deleteExpired } from './store.ts';

export const PORTAL_ACCOUNTS_CLEANUP = 'portal_accounts_cleanup';

/** Every hour: forgets portal sessions that have ended and links that have expired. */
export function userJobs(platform: Platform) {
  const { db, config } = platform;
  return {
    tasks: {
      [PORTAL_ACCOUNTS_CLEANUP]: async () => {
        await deleteExpired(db, config.portalSessionIdleMs);
      },
    },
    crontab: [`41 * * * * ${PORTAL_ACCOUNTS_CLEANUP}`],
  };
}
