import { publicUrl } from '../../config.ts';
import type { Platform } from '../../platform/context.ts';
import type { Db } from '../../platform/db/pool.ts';
import type { SmsProvider, SmsStatusSink } from '../../providers/sms/index.ts';
import { holdReport } from './store.ts';

/**
 * Where the provider reports later (the simulator's delivery reports): the report is held on its
 * message row with the time it is due, and the reports loop (sender.ts) applies it then. Durable
 * across restarts, one row per message, no job per message.
 */
export function heldReportSink(db: Db): SmsStatusSink {
  return {
    reportLater: async (update, afterMs) => {
      if (update.messageId) await holdReport(db, update.messageId, update, afterMs);
    },
  };
}

/** Where Twilio posts status callbacks; none for the simulator, which reports through the sink. */
export function statusCallbackUrl(platform: Platform, provider: SmsProvider): string | null {
  return provider.name === 'twilio' ? publicUrl(platform.config, '/hooks/twilio/status') : null;
}
