import type { TenantScope } from '../../platform/auth/tenant.ts';
import type { TranscriptTurn } from '../../providers/voice/index.ts';
import type { CallRow } from './store.ts';

/** A call as the API returns it. */
export interface Call {
  id: string;
  direction: CallRow['direction'];
  from: string;
  to: string;
  contact_phone: string | null;
  contact_name: string | null;
  contact_id: string | null;
  agent_id: string | null;
  sdr_campaign_id: string | null;
  status: CallRow['status'];
  disposition: string | null;
  outcome: string | null;
  summary: string | null;
  recording_url: string | null;
  recording_duration_seconds: number | null;
  duration_seconds: number | null;
  cost_cents: number | null;
  started_at: Date | null;
  answered_at: Date | null;
  ended_at: Date | null;
  created_at: Date;
}

export type CallDetail = Call & { transcript: TranscriptTurn[] };

type ShownColumns = Omit<Call, 'from' | 'to'> & { from_number: string; to_number: string };

export function toCall<Row extends ShownColumns>(row: Row): Call {
  return {
    id: row.id,
    direction: row.direction,
    from: row.from_number,
    to: row.to_number,
    contact_phone: row.contact_phone,
    contact_name: row.contact_name,
    contact_id: row.contact_id,
    agent_id: row.agent_id,
    sdr_campaign_id: row.sdr_campaign_id,
    status: row.status,
    disposition: row.disposition,
    outcome: row.outcome,
    summary: row.summary,
    recording_url: row.recording_url,
    recording_duration_seconds: row.recording_duration_seconds,
    duration_seconds: row.duration_seconds,
    cost_cents: row.cost_cents,
    started_at: row.started_at,
    answered_at: row.answered_at,
    ended_at: row.ended_at,
    created_at: row.created_at,
  };
}

/** A call as the in-process hook sees it: the API's record and what the platform keeps beside it. */
export type ProgressedCall = Call & {
  tenant: TenantScope;
  prospect_id: string | null;
  cause_key: string | null;
  voicemail_left: boolean;
  /** Echoed in the metadata of the call's events (and of the `sdr.*` events of a campaign's call). */
  metadata: Record<string, unknown>;
};

export function toProgressedCall(row: CallRow): ProgressedCall {
  return {
    ...toCall(row),
    tenant: tenantOf(row),
    prospect_id: row.prospect_id,
    cause_key: row.cause_key,
    voicemail_left: row.voicemail_left,
    metadata: row.metadata,
  };
}

export function tenantOf(row: Pick<CallRow, 'org_id' | 'client_id'>): TenantScope {
  return { orgId: row.org_id, clientId: row.client_id };
}
