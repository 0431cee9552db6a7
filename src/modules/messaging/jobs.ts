import type { Platform } from '../../platform/context.ts';
import type { Loop } from '../../platform/jobs/runner.ts';
import { statusCallbackUrl } from './provider.ts';
import { reportLoop, type SenderContext, sendLoop } from './sender.ts';

/** The messaging module's background work: the send loop and the delivery-report loop (no job per message). */
export function messagingJobs(platform: Platform): { loops: Loop[] } {
  const { db, config, log } = platform;
  const provider = platform.providers.sms;
  const context: SenderContext = {
    db,
    provider,
    leaseMs: config.smsSendLeaseMs,
    batch: config.smsSendBatch,
    pollMs: config.smsSendPollMs,
    statusCallbackUrl: statusCallbackUrl(platform, provider),
    log,
  };
  return {
    loops: [sendLoop(context), reportLoop(context)],
  };
}
