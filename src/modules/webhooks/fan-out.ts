import { isUuid } from '../../platform/db/ids.ts';
import type { EventBatchConsumer } from '../../platform/events/outbox-relay.ts';
import { type FanOutEvent, insertDeliveries, queueDispatch } from './delivery-store.ts';
import type { WebhookDispatcher } from './dispatcher.ts';
import { jittered } from './retry-policy.ts';

export const TEST_EVENT = 'webhook.test';

/**
 * The webhooks' part of the event fan-out: a batch of events becomes its deliveries (one per
 * matching subscription) in one statement, then the dispatcher of this process is woken once for
 * the batch (or a dispatch job queued when none runs here).
 */
export function webhookConsumer(dispatcher: WebhookDispatcher, schedule: number[]): EventBatchConsumer {
  return {
    batch: async (db, events) => {
      const fanOut: FanOutEvent[] = [];
      for (const { event, scope, createdAt } of events) {
        let testedSubscriptionId: string | null = null;
        if (event.type === TEST_EVENT) {
          const tested = event.data.webhook_id;
          if (typeof tested !== 'string' || !isUuid(tested)) continue;
          testedSubscriptionId = tested;
        }
        fanOut.push({ scope, id: event.id, type: event.type, createdAt, testedSubscriptionId });
      }
      // One first delay for the batch: the jitter spreads batches, not the events of one.
      const firstDelayMs = jittered(schedule[0]);
      const pending = await insertDeliveries(db, fanOut, firstDelayMs);
      if (pending === 0) return;
      if (firstDelayMs > 0)
        await queueDispatch(db, { key: `webhook_event:${fanOut[0].id}`, delayMs: firstDelayMs });
      else if (!dispatcher.wake()) await queueDispatch(db);
    },
  };
}
