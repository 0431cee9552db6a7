import type { Call, OutboundCallRequest } from '../../src/modules/calls/service.ts';
import { startOutboundCall } from '../../src/modules/calls/service.ts';
import { inTransaction } from '../../src/platform/db/transaction.ts';
import {
  reportId,
  type TranscriptTurn,
  type VoiceProgress,
  type VoiceProviderName,
} from '../../src/providers/voice/index.ts';
import { caller } from '../crm/crm-client.ts';
import { adminCall, type TestApp, type TestTenant } from '../helpers.ts';

/** An org number and an outbound agent of the tenant's client, to place calls from. */
export async function outboundSetup(t: TestApp, tenant: TestTenant, from: string) {
  const client = caller(t, tenant.client);
  const agent = (
    await client('POST', '/agents', {
      name: 'Ava',
      kind: 'outbound_voice',
      greeting: 'Hi, this is Ava from Acme Dental.',
      voice_id: '11labs-Adrian',
    })
  ).body.agent;
  await adminCall(t.app, 'POST', `/orgs/${tenant.orgId}/numbers`, {
    number: from,
    client_id: tenant.clientId,
  });
  return { agentId: agent.id as string };
}

export function dialRequest(
  overrides: Partial<OutboundCallRequest> & Pick<OutboundCallRequest, 'agentId' | 'from' | 'to'>,
): OutboundCallRequest {
  return {
    causeKey: `test:${Math.random().toString(36).slice(2)}`,
    ringTimeoutSeconds: 45,
    maxDurationSeconds: 300,
    voicemail: { enabled: true, message: 'Sorry we missed you, call us back.' },
    systemPrompt: 'Book a check-up.',
    ...overrides,
  };
}

export function startCall(t: TestApp, tenant: TestTenant, request: OutboundCallRequest) {
  return inTransaction(t.platform.db, (trx) =>
    startOutboundCall(trx, { orgId: tenant.orgId, clientId: tenant.clientId }, request),
  );
}

/** Reports of one provider call, the way a provider shapes them. */
export function reportsOf(
  call: Pick<Call, 'id' | 'direction'> | { id: null; direction: 'inbound' },
  providerCallId: string,
  provider: VoiceProviderName = 'simulator',
) {
  const base = (stage: VoiceProgress['stage'], at: string) => ({
    id: reportId(provider, providerCallId, stage),
    provider,
    providerCallId,
    direction: call.direction,
    callId: call.id,
    occurredAt: at,
  });
  return {
    inbound: (from: string, to: string, at = new Date().toISOString()): VoiceProgress => ({
      ...base('inbound', at),
      stage: 'inbound',
      from,
      to,
    }),
    ringing: (at = new Date().toISOString()): VoiceProgress => ({ ...base('ringing', at), stage: 'ringing' }),
    answered: (at = new Date().toISOString()): VoiceProgress => ({
      ...base('answered', at),
      stage: 'answered',
      answeredAt: at,
    }),
    voicemail: (messageLeft: boolean, at = new Date().toISOString()): VoiceProgress => ({
      ...base('voicemail', at),
      stage: 'voicemail',
      messageLeft,
    }),
    completed: (
      fields: Partial<{
        outcome: 'answered' | 'voicemail' | 'booked';
        durationSeconds: number;
        summary: string | null;
        transcript: TranscriptTurn[];
      }> = {},
      at = new Date().toISOString(),
    ): VoiceProgress => ({
      ...base('completed', at),
      stage: 'completed',
      endedAt: at,
      durationSeconds: fields.durationSeconds ?? 60,
      transcript: fields.transcript ?? [{ speaker: 'agent', content: 'Hello.', start_time_seconds: 0 }],
      summary: fields.summary === undefined ? 'A short call.' : fields.summary,
      recordingUrl: 'https://recordings.example/call.wav',
      recordingDurationSeconds: fields.durationSeconds ?? 60,
      costCents: 12,
      outcome: fields.outcome ?? 'answered',
      disposition: 'user_hangup',
    }),
    failed: (reason: 'no_answer' | 'busy' | 'failed', at = new Date().toISOString()): VoiceProgress => ({
      ...base('failed', at),
      stage: 'failed',
      endedAt: at,
      reason,
      disposition: `dial_${reason}`,
    }),
  };
}

/** The `call.*` events of a call, oldest first, straight from the outbox. */
export async function callEventsOf(t: TestApp, callId: string) {
  const rows = await t.platform.db
    .selectFrom('events')
    .select(['type', 'data'])
    .where('type', 'like', 'call.%')
    .orderBy('id')
    .execute();
  return rows.filter((row) => (row.data.call_id ?? row.data.id) === callId);
}
