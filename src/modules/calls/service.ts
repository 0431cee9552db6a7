import type { TenantScope } from '../../platform/auth/tenant.ts';
import { newId } from '../../platform/db/ids.ts';
import type { Executor, Trx } from '../../platform/db/pool.ts';
import { errors } from '../../platform/http/errors.ts';
import type { Keyset, PageRequest } from '../../platform/http/pagination.ts';
import { tenantAgent } from '../agents/service.ts';
import { normalizePhone, phoneReach } from '../contacts/service.ts';
import { numberOwner } from '../numbers/service.ts';
import { getOrg } from '../orgs/service.ts';
import { type Call, type CallDetail, toCall } from './record.ts';
import {
  type CallCursor,
  type CallDirection,
  type CallFilter,
  type CallStatus,
  campaignCallsInFlightCount,
  countCalls,
  countCallsFromDay,
  countCampaignCallsInFlight,
  dayRange,
  findCallByCause,
  findCallWithTranscript,
  findProviderCallId,
  insertCall,
  listCalls,
} from './store.ts';

/**
 * Calls, both directions, as the voice provider reports them (see progress.ts), and the one way a
 * call is dialed: `startOutboundCall`, which a worker then places (see placement.ts).
 */

export type { CallProgress, CallProgressHandler, CallProgressHook } from './progress.ts';
export type { Call, CallDetail, ProgressedCall } from './record.ts';
export type { CallDirection, CallStatus };

export const STATUS_NOTE =
  'Starting calls through the API is not available yet: outbound calls are placed by SDR campaigns.';

/** `GET /calls` pages newest first; the cursor is the last call's `created_at` and id. */
export const callKeyset: Keyset<Call, CallCursor> = {
  key: (call) => [call.created_at.toISOString(), call.id],
  cursor: ([createdAt, id]) =>
    typeof createdAt === 'string' && typeof id === 'string' && !Number.isNaN(Date.parse(createdAt))
      ? { createdAt: new Date(createdAt), id }
      : undefined,
};

export interface CallQuery {
  start_date?: string;
  end_date?: string;
  agent_id?: string;
  direction?: CallDirection;
  status?: CallStatus;
  contact_id?: string;
}

/**
 * The filter of `GET /calls`: `start_date` and `end_date` are whole days (both included) in the org's
 * time zone, UTC when it has none; an end before the start is a 400 naming `end_date`.
 */
export async function callFilter(db: Executor, tenant: TenantScope, query: CallQuery): Promise<CallFilter> {
  const { start_date, end_date, ...rest } = query;
  if (start_date && end_date && end_date < start_date) {
    throw errors.invalidField('end_date', `must not be before start_date (${start_date})`);
  }
  if (!start_date && !end_date) return rest;
  const { timezone } = await getOrg(db, tenant.orgId);
  return { ...rest, ...(await dayRange(db, { start: start_date, end: end_date }, timezone ?? 'UTC')) };
}

/** A page of `GET /calls`. */
export async function searchCalls(
  db: Executor,
  tenant: TenantScope,
  filter: CallFilter,
  page: PageRequest<CallCursor>,
): Promise<Call[]> {
  return (await listCalls(db, tenant, filter, page)).map(toCall);
}

/** How many calls match the filter, every page together. */
export function countMatchingCalls(db: Executor, tenant: TenantScope, filter: CallFilter): Promise<number> {
  return countCalls(db, tenant, filter);
}

/** Calls of the last `days` UTC days, today included: one client's, or the whole org's (`clientId` null). */
export function countRecentCalls(
  db: Executor,
  scope: { orgId: string; clientId: string | null },
  days: number,
  now = new Date(),
): Promise<number> {
  const firstDay = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() - (days - 1)));
  return countCallsFromDay(db, scope, firstDay);
}

/** `GET /calls/{id}`: the call and its transcript, turn by turn in order. */
export async function getCall(db: Executor, tenant: TenantScope, id: string): Promise<CallDetail> {
  const row = await findCallWithTranscript(db, tenant, id);
  if (!row) throw errors.notFound('Call', id);
  return { ...toCall(row), transcript: row.transcript };
}

/** `POST /calls`: dialing through the API is not available; SDR campaigns dial. */
export function refuseOutboundDialing(): never {
  throw errors.outboundDialingUnavailable(STATUS_NOTE);
}

/** The platform id of the call a provider knows as `providerCallId`. */
export async function callIdOfProviderCall(
  db: Executor,
  provider: string,
  providerCallId: string,
): Promise<string> {
  const id = await findProviderCallId(db, provider, providerCallId);
  if (!id) throw errors.notFound('Call of provider call', providerCallId);
  return id;
}

export interface OutboundCallRequest {
  /** The cause of the call, unique in the org (`sdr:<prospect>:<attempt>`): one call per cause, ever. */
  causeKey: string;
  /** An `outbound_voice` agent of the tenant's client that is not archived. */
  agentId: string;
  /** E.164, one of the org's numbers. */
  from: string;
  /** E.164. */
  to: string;
  ringTimeoutSeconds: number;
  maxDurationSeconds: number;
  voicemail: { enabled: boolean; message: string | null };
  /** What the agent is told to do on this call; the agent's greeting and voice unless given. */
  systemPrompt: string;
  greeting?: string;
  voiceId?: string | null;
  voiceName?: string | null;
  sdrCampaignId?: string | null;
  prospectId?: string | null;
  /** Kept with the call at the provider, for the operator's own look-ups. */
  metadata?: Record<string, string>;
  /** What the agent should know before it speaks (a pre-call brief), handed to the voice provider. */
  context?: string | null;
  /** The metadata of the action that placed the call, echoed in the metadata of the call's events. */
  eventMetadata?: Record<string, unknown>;
}

/**
 * Asks for an outbound call, in the caller's transaction: the call is created `queued` and a worker
 * places it through the voice provider once the transaction has committed (placement.ts). The same
 * `causeKey` again returns the first call (`created: false`) and places nothing more. Whether the
 * number may be called (`phoneReach`) is asked when the call is placed, not now.
 */
export async function startOutboundCall(
  trx: Trx,
  tenant: TenantScope,
  request: OutboundCallRequest,
): Promise<{ call: Call; created: boolean }> {
  const existing = await findCallByCause(trx, tenant, request.causeKey);
  if (existing) return { call: toCall(existing), created: false };

  const agent = await tenantAgent(trx, tenant, request.agentId);
  if (agent?.kind !== 'outbound_voice' || agent.state === 'archived') {
    throw errors.invalidField('agent_id', 'is not an active outbound_voice agent of this client');
  }
  const from = e164(request.from, 'from');
  const owner = await numberOwner(trx, from);
  if (owner?.org_id !== tenant.orgId) throw errors.invalidField('from', "is not one of this org's numbers");
  const to = e164(request.to, 'to');
  for (const [field, value] of [
    ['ring_timeout_seconds', request.ringTimeoutSeconds],
    ['max_duration_seconds', request.maxDurationSeconds],
  ] as const) {
    if (!Number.isInteger(value) || value < 1) throw errors.invalidField(field, 'must be a positive integer');
  }

  const { contact } = await phoneReach(trx, tenant, to);
  const now = new Date();
  const inserted = await insertCall(
    trx,
    {
      id: newId(),
      org_id: tenant.orgId,
      client_id: tenant.clientId,
      direction: 'outbound',
      from_number: from,
      to_number: to,
      contact_phone: to,
      contact_name: contact?.full_name ?? null,
      contact_id: contact?.id ?? null,
      agent_id: agent.id,
      status: 'queued',
      created_at: now,
      updated_at: now,
      cause_key: request.causeKey,
      placement: JSON.stringify({
        ringTimeoutSeconds: request.ringTimeoutSeconds,
        maxDurationSeconds: request.maxDurationSeconds,
        voicemail: request.voicemail,
        agent: {
          name: agent.name,
          greeting: request.greeting ?? agent.greeting,
          systemPrompt: request.systemPrompt,
          voiceId: request.voiceId ?? agent.voice_id,
          voiceName: request.voiceName ?? null,
        },
        metadata: request.metadata ?? {},
        context: request.context ?? null,
      }),
      placement_state: 'pending',
      placement_lease_until: now,
      sdr_campaign_id: request.sdrCampaignId ?? null,
      prospect_id: request.prospectId ?? null,
      metadata: JSON.stringify(request.eventMetadata ?? {}),
    },
    'cause',
  );
  // A concurrent request with the same cause committed first: its call is the one.
  const row = inserted ?? (await findCallByCause(trx, tenant, request.causeKey));
  return { call: toCall(row!), created: inserted !== undefined };
}

/** How many calls of an SDR campaign have not ended yet (queued, ringing or connected): its concurrency. */
export { campaignCallsInFlightCount };

export function campaignCallsInFlight(
  db: Executor,
  tenant: TenantScope,
  campaignId: string,
): Promise<number> {
  return countCampaignCallsInFlight(db, tenant, campaignId);
}

function e164(value: string, field: string): string {
  if (!value.startsWith('+'))
    throw errors.invalidField(field, 'must be an E.164 number such as +14155550123');
  return normalizePhone(value, 'US', field);
}
