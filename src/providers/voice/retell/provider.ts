import Retell, { APIError } from 'retell-sdk';
import type { Db } from '../../../platform/db/pool.ts';
import { claimPlacement, recordProviderCallId, releasePlacement } from '../placements.ts';
import {
  type FailedReport,
  type PlaceCallRequest,
  PlacementPendingError,
  RejectedWebhookError,
  type RingingReport,
  reportId,
  type VoiceProgressSink,
  type VoiceProvider,
  type WebhookRequest,
} from '../types.ts';
import { mapRetellWebhook, type PlatformMetadata, type RetellWebhook } from './mapping.ts';
import { RETELL_WEBHOOK_PATH } from './webhook-path.ts';

export interface RetellOptions {
  apiKey: string;
  /** Retell's API, or a stand-in or proxy speaking it. */
  baseUrl: string;
  /** The agent to dial with; null uses the outbound agent bound to the `from` number in Retell. */
  agentId: string | null;
  /** Public address of this service: Retell posts the call's webhooks to it plus `RETELL_WEBHOOK_PATH`. */
  publicBaseUrl: string;
  /** How long after `call_ended` to wait for `call_analyzed` before completing the call without a summary. */
  analysisWaitMs: number;
}

// Retell refuses a max_call_duration_ms under one minute.
const MIN_CALL_DURATION_MS = 60_000;

/** Voice calls through Retell AI (`retell-sdk`): createPhoneCall out, signed call webhooks back. */
export function createRetellProvider(options: RetellOptions, db: Db, sink: VoiceProgressSink): VoiceProvider {
  // No SDK retries: a timed-out create may have dialed, and a retry would dial twice.
  const client = new Retell({
    apiKey: options.apiKey,
    baseURL: options.baseUrl,
    maxRetries: 0,
    timeout: 30_000,
  });

  /** `ringing` now, and a `failed` at the latest moment the call could still be going, in case Retell never reports. */
  async function track(request: PlaceCallRequest, providerCallId: string, placedAt: Date): Promise<void> {
    const base = {
      provider: 'retell' as const,
      providerCallId,
      direction: 'outbound' as const,
      callId: request.callId,
    };
    const ringing: RingingReport = {
      ...base,
      id: reportId('retell', providerCallId, 'ringing'),
      stage: 'ringing',
      occurredAt: placedAt.toISOString(),
    };
    const deadlineMs =
      (request.ringTimeoutSeconds + Math.max(request.maxDurationSeconds, MIN_CALL_DURATION_MS / 1000)) *
        1000 +
      2 * options.analysisWaitMs;
    const deadline = new Date(placedAt.getTime() + deadlineMs).toISOString();
    const silence: FailedReport = {
      ...base,
      id: reportId('retell', providerCallId, 'failed'),
      stage: 'failed',
      occurredAt: deadline,
      endedAt: deadline,
      reason: 'failed',
      disposition: 'no_final_report',
    };
    await sink.report(ringing);
    await sink.reportLater(silence, Math.max(0, placedAt.getTime() + deadlineMs - Date.now()));
  }

  return {
    name: 'retell',
    simulator: null,

    async placeCall(request) {
      const { created, placement } = await claimPlacement(db, {
        callId: request.callId,
        provider: 'retell',
        providerCallId: null,
      });
      if (!created) {
        if (placement.providerCallId === null) throw new PlacementPendingError(request.callId);
        // A repeat after an interruption: queue the tracking reports again (the sink dedupes them).
        await track(request, placement.providerCallId, placement.placedAt);
        return { providerCallId: placement.providerCallId };
      }

      let providerCallId: string;
      try {
        ({ call_id: providerCallId } = await client.call.createPhoneCall(phoneCall(request, options)));
      } catch (error) {
        // Retell answered with an error: nothing was dialed, so a retry may place the call.
        // No answer at all (connection lost, time-out): it may have dialed, so the claim stays.
        if (error instanceof APIError && error.status !== undefined)
          await releasePlacement(db, request.callId);
        throw error;
      }
      await recordProviderCallId(db, request.callId, providerCallId);
      await track(request, providerCallId, placement.placedAt);
      return { providerCallId };
    },

    async parseWebhook(request: WebhookRequest) {
      const signature = header(request.headers, 'x-retell-signature');
      if (!signature) throw new RejectedWebhookError('unsigned', 'The x-retell-signature header is missing.');
      if (!(await Retell.verify(request.rawBody, options.apiKey, signature))) {
        throw new RejectedWebhookError('forged', 'The x-retell-signature does not match the body.');
      }
      let webhook: RetellWebhook;
      try {
        webhook = JSON.parse(request.rawBody);
      } catch {
        throw new RejectedWebhookError('malformed', 'The webhook body is not JSON.');
      }
      if (!webhook || typeof webhook.event !== 'string') {
        throw new RejectedWebhookError('malformed', 'The webhook body has no event.');
      }
      const { reports, completionFallback } = mapRetellWebhook(webhook);
      if (completionFallback) await sink.reportLater(completionFallback, options.analysisWaitMs);
      return reports;
    },
  };
}

function phoneCall(request: PlaceCallRequest, options: RetellOptions): Retell.CallCreatePhoneCallParams {
  const metadata: PlatformMetadata & Record<string, unknown> = {
    ...request.metadata,
    platform_call_id: request.callId,
    voicemail_drop: request.voicemail.enabled && Boolean(request.voicemail.message),
  };
  return {
    from_number: request.from,
    to_number: request.to,
    ...(options.agentId ? { override_agent_id: options.agentId } : {}),
    metadata,
    // The Retell agent's prompt reads these as {{greeting}}, {{system_prompt}} and so on.
    retell_llm_dynamic_variables: {
      agent_name: request.agent.name,
      greeting: request.agent.greeting,
      system_prompt: request.agent.systemPrompt,
      voice_name: request.agent.voiceName ?? '',
      precall_brief: request.context ?? '',
    },
    agent_override: {
      agent: {
        agent_name: request.agent.name,
        ...(request.agent.voiceId ? { voice_id: request.agent.voiceId } : {}),
        ring_duration_ms: request.ringTimeoutSeconds * 1000,
        max_call_duration_ms: Math.max(MIN_CALL_DURATION_MS, request.maxDurationSeconds * 1000),
        voicemail_option: {
          action:
            request.voicemail.enabled && request.voicemail.message
              ? { type: 'static_text', text: request.voicemail.message }
              : { type: 'hangup' },
        },
        webhook_url: `${options.publicBaseUrl}${RETELL_WEBHOOK_PATH}`,
        webhook_events: ['call_started', 'call_ended', 'call_analyzed'],
      },
    },
  };
}

function header(headers: WebhookRequest['headers'], name: string): string | null {
  const value = headers[name] ?? headers[name.toLowerCase()];
  const first = Array.isArray(value) ? value[0] : value;
  return first ? first : null;
}
