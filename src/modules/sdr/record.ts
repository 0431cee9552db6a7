import type { CampaignRow, ProspectRow } from './store.ts';

/**
 * A campaign as the API returns it. `from_number` as stored (null: the settings' number);
 * `effective_from_number` the one a dial would use now, given the SDR settings' `settingsNumber`.
 */
export function toCampaign(row: CampaignRow, totalProspects: number, settingsNumber: string | null) {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    status: row.status,
    paused_reason: row.paused_reason,
    agent_id: row.agent_id,
    opening_message: row.opening_message,
    voicemail_message: row.voicemail_message,
    system_prompt: row.system_prompt,
    voice_id: row.voice_id,
    voice_name: row.voice_name,
    business_name: row.business_name,
    from_number: row.from_number,
    effective_from_number: row.from_number ?? settingsNumber,
    max_concurrent_calls: row.max_concurrent_calls,
    calling_window_start: row.calling_window_start,
    calling_window_end: row.calling_window_end,
    calling_days: row.calling_days,
    respect_timezone: row.respect_timezone,
    timezone: row.timezone,
    max_attempts: row.max_attempts,
    retry_interval_hours: row.retry_interval_hours,
    ring_timeout_seconds: row.ring_timeout_seconds,
    max_duration_seconds: row.max_duration_seconds,
    scheduled_start_at: row.scheduled_start_at,
    voicemail_enabled: row.voicemail_enabled,
    precall_brief: row.precall_brief,
    cal_com_booking_url: row.cal_com_booking_url,
    post_call_email: row.post_call_email,
    metadata: row.metadata,
    total_prospects: totalProspects,
    started_at: row.started_at,
    completed_at: row.completed_at,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

export type Campaign = ReturnType<typeof toCampaign>;

/** A prospect as the API returns it. */
export function toProspect(row: ProspectRow) {
  return {
    id: row.id,
    campaign_id: row.campaign_id,
    contact_id: row.contact_id,
    client_id: row.contact_client_id,
    phone: row.phone,
    timezone: row.timezone,
    timezone_source: row.timezone_source,
    status: row.status,
    skip_reason: row.skip_reason,
    attempts: row.attempts,
    last_outcome: row.last_outcome,
    last_attempt_at: row.last_attempt_at,
    next_attempt_at: row.status === 'pending' ? row.next_attempt_at : null,
    call_ids: row.call_ids,
    metadata: row.metadata,
    created_at: row.created_at,
  };
}

export type Prospect = ReturnType<typeof toProspect>;
