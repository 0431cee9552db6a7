import type { TenantScope } from '../../platform/auth/tenant.ts';
import type { Trx } from '../../platform/db/pool.ts';
import { onInboundMessage, sendMessage } from '../messaging/service.ts';
import { pauseOnReply } from './service.ts';

/**
 * Sequences and the SMS module. An SMS step is `sendMessage` (FUEL, the sender number and the message row
 * in the step's transaction; the carrier send after commit, once per cause key), and a reply pauses the
 * enrollments that texted its phone from the number it replied to, through `onInboundMessage`, in the
 * transaction that stores the reply.
 */
export interface SequenceSms {
  send(
    trx: Trx,
    tenant: TenantScope,
    sms: { to: string; body: string; contactId: string; causeKey: string; metadata: Record<string, unknown> },
  ): Promise<{ messageId: string; from: string; to: string }>;
}

export const messagingSms: SequenceSms = {
  async send(trx, tenant, sms) {
    const { message } = await sendMessage(trx, tenant, sms);
    return { messageId: message.id, from: message.from, to: message.to };
  },
};

let replyHookRegistered = false;

/** Registers the reply hook once per process (the app of every API process calls it). */
export function registerSequenceReplyHook(): void {
  if (replyHookRegistered) return;
  replyHookRegistered = true;
  onInboundMessage(async (trx, message) => {
    await pauseOnReply(trx, message);
  });
}
