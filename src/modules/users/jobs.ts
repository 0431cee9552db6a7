import type { Platform } from '../../platform/context.ts';
import { inTransaction } from '../../platform/db/transaction.ts';
import { accounts, PASSWORD_RESET_EMAIL_TASK } from './service.ts';
import { deleteExpired } from './store.ts';

export const PORTAL_ACCOUNTS_CLEANUP = 'portal_accounts_cleanup';

/**
 * Every hour: forgets portal sessions that have ended and links that have expired. On demand: the
 * password reset emails (an email that cannot leave fails the job, which graphile-worker retries).
 */
export function userJobs(platform: Platform) {
  const { db, config } = platform;
  return {
    tasks: {
      [PORTAL_ACCOUNTS_CLEANUP]: async () => {
        await deleteExpired(db, config.portalSessionIdleMs);
      },
      [PASSWORD_RESET_EMAIL_TASK]: async (payload: unknown) => {
        await inTransaction(db, (trx) => accounts(platform).emailPasswordReset(trx, payload));
      },
    },
    crontab: [`41 * * * * ${PORTAL_ACCOUNTS_CLEANUP}`],
  };
}
