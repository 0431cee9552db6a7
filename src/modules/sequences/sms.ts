import type { TenantScope } from '../../platform/auth/tenant.ts';
import type { Trx } from '../../platform/db/pool.ts';

/**
 * What the tick needs of the SMS module: `sendMessage` of `src/modules/messaging/service.ts` (consent,
 * FUEL, the sender number, the message row in `trx`; the carrier send after commit, once per cause key).
 */
export interface SequenceSms {
  send(
    trx: Trx,
    tenant: TenantScope,
    sms: { to: string; body: string; contactId: string; causeKey: string },
  ): Promise<{ messageId: string }>;
}
