import { isUuid } from '../../platform/db/ids.ts';
import type { EventConsumer } from '../../platform/events/outbox-relay.ts';
import { insertDeliveries, queueDispatch } from './delivery-store.ts';
import type { WebhookDispatcher } from './dispatcher.ts';
import { jittered } from './retry-policy.ts';

export const TEST_EVENT = 'webhook.test';

/**
 * The webhooks' part of the event fan-out: one delivery per matching subscription, then the
 * dispatcher of this process is woken (or a dispatch job queued when none runs here).
 */
export function webhookConsumer(dispatcher: WebhookDispatcher, schedule: number[]): EventConsumer {
  return async (db, event, scope) => {
    let only: { testedSubscriptionId: string } | null = null;
    if (event.type === TEST_EVENT) {
      const tested = event.data.webhook_id;
      if (typeof tested !== 'string' || !isUuid(tested)) return;
      only = { testedSubscriptionId: tested };
    }
    const firstDelayMs = jittered(schedule[0]);
    const pending = await insertDeliveries(db, scope, event, only, firstDelayMs);
    if (pending === 0) return;
    if (firstDelayMs > 0)
      await queueDispatch(db, { key: `webhook_event:${event.id}`, delayMs: firstDelayMs });
    else if (!dispatcher.wake()) await queueDispatch(db);
  };
}
