import type { TenantScope } from '../../platform/auth/tenant.ts';
import { isUuid, newId } from '../../platform/db/ids.ts';
import type { Trx } from '../../platform/db/pool.ts';
import { emit } from '../../platform/events/emit.ts';
import type { Hook } from '../../platform/hooks.ts';
import { errors } from '../../platform/http/errors.ts';
import type { InboundReport, VoiceProgress, VoiceStage } from '../../providers/voice/index.ts';
import { createActivity } from '../activities/service.ts';
import { phoneReach } from '../contacts/service.ts';
import { numberOwner } from '../numbers/service.ts';
import { type ProgressedCall, tenantOf, toCall, toProgressedCall } from './record.ts';
import {
  type CallRow,
  insertCall,
  insertTranscript,
  lockCall,
  lockProviderCall,
  updateCall,
} from './store.ts';
import { type CallEventType, type CallStep, transition } from './transition.ts';

/** What the "call progressed" hook is told, in the transaction that applied the step. */
export interface CallProgress {
  tenant: TenantScope;
  stage: VoiceStage;
  /** Null when the step created the call (an inbound call arriving). */
  before: ProgressedCall | null;
  after: ProgressedCall;
}

export type CallProgressHandler = (trx: Trx, progress: CallProgress) => Promise<void>;

/**
 * The calls' progress hook (`platform.hooks.callProgress`): its handlers run in the transaction of every
 * step applied to a call (repeats excluded), so a higher module (SDR) updates its own rows and emits its
 * events atomically with the call.
 */
export type CallProgressHook = Hook<CallProgress>;

/**
 * Applies a provider's progress report to its call, in the caller's transaction. An `inbound` report
 * creates the call, routed by the number called to its client and agent (404 `number_not_found` for a
 * number no org holds). A report of a call the platform does not know changes nothing (null).
 */
export async function applyProgress(
  trx: Trx,
  progressed: CallProgressHook,
  progress: VoiceProgress,
): Promise<CallRow | null> {
  if (progress.stage === 'inbound') {
    const opened = await openInboundCall(trx, progressed, progress);
    if (opened) return opened;
  }
  const call =
    progress.callId !== null
      ? isUuid(progress.callId)
        ? await lockCall(trx, progress.callId)
        : undefined
      : await lockProviderCall(trx, progress.provider, progress.providerCallId);
  if (!call) return null;
  return advanceCall(trx, progressed, call, progress, progress);
}

async function openInboundCall(
  trx: Trx,
  progressed: CallProgressHook,
  report: InboundReport,
): Promise<CallRow | null> {
  if (await lockProviderCall(trx, report.provider, report.providerCallId)) return null;
  const owner = await numberOwner(trx, report.to);
  if (!owner) throw errors.numberNotFound(report.to);
  const tenant = { orgId: owner.org_id, clientId: owner.client_id };
  const { contact } = await phoneReach(trx, tenant, report.from);
  const now = new Date();
  const row = await insertCall(
    trx,
    {
      id: newId(),
      org_id: tenant.orgId,
      client_id: tenant.clientId,
      direction: 'inbound',
      from_number: report.from,
      to_number: report.to,
      contact_phone: report.from,
      contact_name: contact?.full_name ?? null,
      contact_id: contact?.id ?? null,
      agent_id: owner.agent_id,
      status: 'ringing',
      started_at: new Date(report.occurredAt),
      created_at: now,
      updated_at: now,
      provider: report.provider,
      provider_call_id: report.providerCallId,
      reports: [report.id],
    },
    'provider_call',
  );
  // Null: a concurrent delivery of the same call created it first; this one is a repeat.
  if (!row) return null;
  await emit(trx, tenant, 'call.received', { call_id: row.id, ...toCall(row) });
  await progressed.run(trx, { tenant, stage: 'inbound', before: null, after: toProgressedCall(row) });
  return row;
}

/**
 * Applies one step to a locked call: a step applied before (same id) changes nothing; otherwise the
 * call moves on (see `transition`), its events are emitted in order, a completed call is logged on
 * its contact's timeline, and the `progressed` hook's handlers run. `source` is the provider call the
 * step came from, recorded on a call that has none yet.
 */
export async function advanceCall(
  trx: Trx,
  progressed: CallProgressHook,
  call: CallRow,
  step: CallStep,
  source?: { provider: string; providerCallId: string },
): Promise<CallRow> {
  if (call.reports.includes(step.id)) return call;
  const { changes, events } = transition(call, step);
  changes.reports = [...call.reports, step.id];
  if (source && call.provider_call_id === null) {
    changes.provider = source.provider;
    changes.provider_call_id = source.providerCallId;
  }
  changes.updated_at = new Date();
  const after = await updateCall(trx, call.id, changes);
  const tenant = tenantOf(after);
  if (step.stage === 'completed' && events.includes('call.completed')) {
    await insertTranscript(trx, after, step.transcript);
  }
  for (const type of events) await emit(trx, tenant, type, eventData(type, after, step), after.metadata);
  if (events.includes('call.completed') && after.contact_id) await logOnTimeline(trx, tenant, after);
  await progressed.run(trx, {
    tenant,
    stage: step.stage,
    before: toProgressedCall(call),
    after: toProgressedCall(after),
  });
  return after;
}

function eventData(type: CallEventType, call: CallRow, step: CallStep): Record<string, unknown> {
  if (type === 'call.completed' && step.stage === 'completed') {
    // Exactly the fields of SPEC.md section 6.
    return {
      call_id: call.id,
      direction: call.direction,
      duration_seconds: call.duration_seconds,
      recording_url: call.recording_url,
      transcript: step.transcript,
      summary: call.summary,
      outcome: call.outcome,
      cost_cents: call.cost_cents,
      contact_id: call.contact_id,
    };
  }
  const record = { call_id: call.id, ...toCall(call) };
  return type === 'call.failed' ? { ...record, reason: call.status } : record;
}

async function logOnTimeline(trx: Trx, tenant: TenantScope, call: CallRow): Promise<void> {
  await createActivity(trx, tenant, {
    activity_type: 'call',
    direction: call.direction,
    contact_id: call.contact_id,
    subject:
      call.direction === 'inbound'
        ? `Inbound call from ${call.from_number}`
        : `Outbound call to ${call.to_number}`,
    body: call.summary,
    outcome: call.outcome,
    duration_seconds: call.duration_seconds,
    performed_at: (call.started_at ?? call.ended_at ?? call.created_at).toISOString(),
  });
}
