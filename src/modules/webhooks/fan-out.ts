import type { EventConsumer } from '../../platform/events/fan-out.ts';
import {
  insertDeliveries,
  matchingSubscriptions,
  queueDispatch,
  testedSubscription,
} from './delivery-store.ts';
import type { WebhookDispatcher } from './dispatcher.ts';
import { jittered } from './retry-policy.ts';

export const TEST_EVENT = 'webhook.test';

/**
 * The webhooks' part of the event fan-out: one delivery per matching subscription, then the
 * dispatcher of this process is woken (or a dispatch job queued when none runs here).
 */
export function webhookConsumer(dispatcher: WebhookDispatcher, schedule: number[]): EventConsumer {
  return async (db, event, scope) => {
    const subscriptions =
      event.type === TEST_EVENT
        ? await testedSubscription(db, scope, event.data.webhook_id)
        : await matchingSubscriptions(db, scope, event.type);
    if (!subscriptions.length) return;
    const firstDelayMs = jittered(schedule[0]);
    const pending = await insertDeliveries(db, scope, event, subscriptions, firstDelayMs);
    if (pending === 0) return;
    if (firstDelayMs > 0)
      await queueDispatch(db, { key: `webhook_event:${event.id}`, delayMs: firstDelayMs });
    else if (!dispatcher.wake()) await queueDispatch(db);
  };
}
