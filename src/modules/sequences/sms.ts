import type { TenantScope } from '../../platform/auth/tenant.ts';
import type { Trx } from '../../platform/db/pool.ts';
import type { SmsProviderName } from '../../providers/sms/index.ts';
import { sendMessage } from '../messaging/service.ts';

/**
 * Sequences and the SMS module. An SMS step is `sendMessage` (FUEL, the sender number and the message row
 * in the step's transaction; the carrier send after commit, once per cause key). A reply pauses the
 * enrollments that texted its phone from the number it replied to (`pauseOnReply`, a handler of the
 * messaging module's `inboundMessage` hook, registered in `src/wiring.ts`), in the transaction that
 * stores the reply.
 */
export interface SequenceSms {
  send(
    trx: Trx,
    tenant: TenantScope,
    sms: { to: string; body: string; contactId: string; causeKey: string; metadata: Record<string, unknown> },
  ): Promise<{ messageId: string; from: string; to: string }>;
}

/** SMS steps through the messaging module, recorded with the process's SMS provider. */
export function messagingSms(provider: SmsProviderName): SequenceSms {
  return {
    async send(trx, tenant, sms) {
      const { message } = await sendMessage(trx, tenant, sms, provider);
      return { messageId: message.id, from: message.from, to: message.to };
    },
  };
}
