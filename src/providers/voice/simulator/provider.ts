import { newId } from '../../../platform/db/ids.ts';
import type { Db } from '../../../platform/db/pool.ts';
import { claimPlacement } from '../placements.ts';
import {
  type PlaceCallRequest,
  RejectedWebhookError,
  type SimulatedInboundCall,
  type VoiceProgressSink,
  type VoiceProvider,
} from '../types.ts';
import { getNumberScript } from './script-store.ts';
import { simulatedTimeline, type TimelineEntry } from './timeline.ts';

/**
 * The offline voice provider. A call's whole timeline is decided when it is placed and handed to
 * the sink at once (the first report now, the others through `reportLater`), so nothing about a
 * call lives in this process: the worker that placed it can die and the call still ends.
 */
export function createSimulatorProvider(
  options: { callMs: number },
  db: Db,
  sink: VoiceProgressSink,
): VoiceProvider {
  async function play(timeline: TimelineEntry[], startedAt: Date): Promise<void> {
    const [first, ...rest] = timeline;
    await sink.report(first.progress);
    for (const entry of rest) {
      await sink.reportLater(entry.progress, Math.max(0, startedAt.getTime() + entry.afterMs - Date.now()));
    }
  }

  return {
    name: 'simulator',
    simulator: {
      async simulateInbound(call: SimulatedInboundCall) {
        const providerCallId = `sim_${newId()}`;
        const startedAt = new Date();
        const timeline = simulatedTimeline({
          direction: 'inbound',
          callId: null,
          providerCallId,
          from: call.from,
          to: call.to,
          startedAt,
          callMs: options.callMs,
          script: call,
          greeting: null,
          maxDurationSeconds: null,
          voicemailMessage: null,
        });
        await play(timeline, startedAt);
        return { providerCallId };
      },
    },

    // A repeat of a call id replays the first placement's timeline: the sink dedupes by report id,
    // and a placement interrupted before its reports were queued is completed by the repeat.
    async placeCall(request: PlaceCallRequest) {
      const placedAt = new Date();
      const providerCallId = `sim_${newId()}`;
      const script = (await getNumberScript(db, request.to)) ?? { outcome: 'answered' as const };
      const { placement } = await claimPlacement(db, {
        callId: request.callId,
        provider: 'simulator',
        providerCallId,
        placedAt,
        context: request.context ?? null,
        timeline: simulatedTimeline({
          direction: 'outbound',
          callId: request.callId,
          providerCallId,
          from: request.from,
          to: request.to,
          startedAt: placedAt,
          callMs: options.callMs,
          script,
          greeting: request.agent.greeting || `Hi, this is ${request.agent.name}.`,
          maxDurationSeconds: request.maxDurationSeconds,
          voicemailMessage:
            request.voicemail.enabled && request.voicemail.message ? request.voicemail.message : null,
        }),
      });
      await play(placement.timeline as TimelineEntry[], placement.placedAt);
      return { providerCallId: placement.providerCallId! };
    },

    async parseWebhook() {
      throw new RejectedWebhookError('unsigned', 'The voice simulator receives no webhooks.');
    },
  };
}
