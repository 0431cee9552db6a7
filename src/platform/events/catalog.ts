/** The event types of SPEC.md section 6, the names webhook subscriptions may ask for. */
export const EVENT_TYPES = [
  'call.received',
  'call.answered',
  'call.completed',
  'call.voicemail_left',
  'call.failed',
  'sms.received',
  'sms.sent',
  'sms.delivery_failed',
  'contact.created',
  'contact.updated',
  'contact.archived',
  'company.created',
  'company.updated',
  'deal.created',
  'deal.stage_changed',
  'task.due_soon',
  'task.completed',
  'sequence.completed',
  'sequence.contact_unenrolled',
  'sequence.enrollment.created',
  'sequence.enrollment.completed',
  'sequence.enrollment.paused',
  'sdr.outbound.completed',
  'sdr.campaign.started',
  'sdr.campaign.completed',
  'sdr.call.connected',
  'sdr.call.voicemail',
  'sdr.call.booked',
  'ai.precall_brief.completed',
  'ai.lead_enrichment.completed',
  'ai.kb_ingest.completed',
  'ai.job.failed',
  'webhook.test',
] as const;

export type EventType = (typeof EVENT_TYPES)[number];

const KNOWN = new Set<string>(EVENT_TYPES);

export function isEventType(name: string): name is EventType {
  return KNOWN.has(name);
}
