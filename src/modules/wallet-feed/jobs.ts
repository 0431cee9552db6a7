import type { Platform } from '../../platform/context.ts';
import { refreshHoldingsIndex, refreshIfDue } from './refresh.ts';

export const WALLET_INDEX_REFRESH_TASK = 'wallet_index_refresh';
export const WALLET_INDEX_TICK_TASK = 'wallet_index_tick';

/**
 * The holding index is rebuilt once when a worker starts (`wallet_index_refresh`) and then every
 * `WALLET_INDEX_REFRESH_MS`: cron only ticks each minute, so a minute tick checks whether it is due.
 * Payloads are ignored; both tasks are safe to run twice (one refresh at a time, by advisory lock).
 */
export function walletIndexJobs(platform: Platform) {
  return {
    tasks: {
      [WALLET_INDEX_REFRESH_TASK]: async () => {
        await refreshHoldingsIndex(platform);
      },
      [WALLET_INDEX_TICK_TASK]: async () => {
        await refreshIfDue(platform);
      },
    },
    crontab: [`* * * * * ${WALLET_INDEX_TICK_TASK}`],
    startup: [WALLET_INDEX_REFRESH_TASK],
  };
}
