import type { Platform } from '../../platform/context.ts';
import type { Loop } from '../../platform/jobs/runner.ts';
import { refreshHoldingsIndex, refreshIfDue } from './refresh.ts';

export const WALLET_INDEX_REFRESH_TASK = 'wallet_index_refresh';

/**
 * The holding index is rebuilt once when a worker starts (`wallet_index_refresh`) and then every
 * `WALLET_INDEX_REFRESH_MS`: a worker loop checks whether a refresh is due a tenth of the interval
 * apart (at most each minute), so an interval below a minute is honoured too. Safe with several
 * workers: one refresh at a time, by advisory lock, and a refresh is due only once per interval.
 */
export function walletIndexJobs(platform: Platform) {
  const interval = platform.config.walletIndexRefreshMs;
  const loop: Loop = {
    name: 'wallet_index_refresh',
    intervalMs: Math.min(60_000, Math.max(100, Math.floor(interval / 10))),
    run: async () => {
      await refreshIfDue(platform);
      return false;
    },
  };
  return {
    tasks: {
      [WALLET_INDEX_REFRESH_TASK]: async () => {
        await refreshHoldingsIndex(platform);
      },
    },
    loops: [loop],
    startup: [WALLET_INDEX_REFRESH_TASK],
  };
}
