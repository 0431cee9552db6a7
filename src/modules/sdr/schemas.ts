import { Type } from '@sinclair/typebox';
import { pageQuerySchema } from '../../platform/http/pagination.ts';
import {
  Body,
  DateTime,
  Metadata,
  MetadataOut,
  Nullable,
  Query,
  Timestamp,
  Uuid,
} from '../../platform/http/schemas.ts';

export const CAMPAIGN_STATUSES = [
  'draft',
  'scheduled',
  'active',
  'paused',
  'completed',
  'cancelled',
  'archived',
] as const;
export const PROSPECT_STATUSES = [
  'pending',
  'queued',
  'dialing',
  'connected',
  'booked',
  'voicemail',
  'exhausted',
  'skipped',
] as const;

const literals = <T extends string>(values: readonly T[], description: string) =>
  Type.Union(
    values.map((value) => Type.Literal(value)),
    { description },
  );

const CampaignStatus = literals(CAMPAIGN_STATUSES, CAMPAIGN_STATUSES.join(', '));
const ProspectStatus = literals(PROSPECT_STATUSES, PROSPECT_STATUSES.join(', '));
const Clock = (description: string) =>
  Type.String({
    pattern: '^([01][0-9]|2[0-3]):[0-5][0-9]$',
    description: `${description} (HH:mm, 24-hour).`,
  });
const E164 = (description: string) =>
  Type.String({ pattern: '^\\+[1-9][0-9]{6,14}$', description: `${description} (E.164).` });
const TimeZone = Type.String({
  minLength: 1,
  maxLength: 64,
  description: 'An IANA time zone such as America/New_York.',
});
const Text = (maxLength: number) => Type.String({ maxLength });
const SETTINGS_DEFAULT = (field: string) =>
  `Default (when omitted or null): the SDR settings' ${field}, read when dialing starts.`;
const FromNumber = Nullable(E164(`One of the org's numbers. ${SETTINGS_DEFAULT('from_number')}`));

/** The settings a create and an update both take. */
const schedule = {
  max_concurrent_calls: Type.Integer({ minimum: 1, maximum: 10, description: '1-10, default 1.' }),
  calling_window_start: Clock('Local time the window opens, default 09:00'),
  calling_window_end: Clock('Local time the window closes (exclusive), default 20:00'),
  calling_days: Type.Array(Type.Integer({ minimum: 1, maximum: 7 }), {
    minItems: 1,
    maxItems: 7,
    description: 'ISO weekdays, 1 = Monday to 7 = Sunday; default [1,2,3,4,5].',
  }),
  max_attempts: Type.Integer({ minimum: 1, maximum: 10, description: '1-10, default 3.' }),
  retry_interval_hours: Type.Integer({ minimum: 0, maximum: 8760, description: 'Default 24.' }),
  ring_timeout_seconds: Type.Integer({ minimum: 15, maximum: 120, description: '15-120, default 60.' }),
  max_duration_seconds: Type.Integer({ minimum: 30, maximum: 1800, description: '30-1800, default 300.' }),
};

const optional = <T extends Record<string, import('@sinclair/typebox').TSchema>>(fields: T) =>
  Object.fromEntries(Object.entries(fields).map(([key, schema]) => [key, Type.Optional(schema)])) as {
    [K in keyof T]: import('@sinclair/typebox').TOptional<T[K]>;
  };

const PrecallBrief = Type.Boolean({
  description:
    'Before the first dial of each prospect, ask for a pre-call brief (1 FUEL) and hand it to the call as its context; default false. A brief that fails or is late does not stop the dial.',
});
const CampaignMetadata = Metadata(
  "the campaign's events and of the events of every call it places (sdr.*, call.*, sdr.outbound.completed), merged with the prospect's",
);

export const CreateCampaignBody = Body({
  name: Type.String({ minLength: 1, maxLength: 200 }),
  description: Type.Optional(Nullable(Text(4000))),
  opening_message: Type.Optional(Nullable(Text(4000))),
  voicemail_message: Type.Optional(Nullable(Text(4000))),
  system_prompt: Type.Optional(Nullable(Text(20_000))),
  voice_id: Type.Optional(
    Nullable(Type.String({ minLength: 1, maxLength: 200, description: SETTINGS_DEFAULT('voice_id') })),
  ),
  voice_name: Type.Optional(
    Nullable(Type.String({ minLength: 1, maxLength: 200, description: SETTINGS_DEFAULT('voice_name') })),
  ),
  business_name: Type.Optional(
    Nullable(Type.String({ minLength: 1, maxLength: 200, description: SETTINGS_DEFAULT('business_name') })),
  ),
  from_number: Type.Optional(FromNumber),
  prospect_ids: Type.Optional(
    Type.Array(Uuid(), { maxItems: 10_000, description: 'Contact ids of any client of the org.' }),
  ),
  ...optional(schedule),
  respect_timezone: Type.Optional(
    Type.Boolean({ description: "Window in each prospect's zone; default true." }),
  ),
  scheduled_start_at: Type.Optional(Nullable(DateTime('When dialing starts; the campaign is scheduled.'))),
  voicemail_enabled: Type.Optional(Type.Boolean({ description: 'Default true.' })),
  precall_brief: Type.Optional(PrecallBrief),
  cal_com_booking_url: Type.Optional(
    Nullable(
      Type.String({ format: 'uri', pattern: '^https://', maxLength: 2000, description: 'An https URL.' }),
    ),
  ),
  post_call_email: Type.Optional(Nullable(Type.String({ format: 'email', maxLength: 320 }))),
  metadata: Type.Optional(CampaignMetadata),
});

export const UpdateCampaignBody = Body({
  precall_brief: Type.Optional(PrecallBrief),
  status: Type.Optional(CampaignStatus),
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  description: Type.Optional(Nullable(Text(4000))),
  scheduled_start_at: Type.Optional(Nullable(DateTime())),
  from_number: Type.Optional(FromNumber),
  ...optional(schedule),
  metadata: Type.Optional(CampaignMetadata),
});

export const CampaignSchema = Type.Object(
  {
    id: Uuid(),
    name: Type.String(),
    description: Nullable(Type.String()),
    status: Type.String(),
    paused_reason: Nullable(
      Type.String({
        description:
          'Why the dialer paused the campaign: from_number_required (its start came with no number to dial ' +
          'from; PATCH status active once one is set). Null otherwise, and when paused by PATCH.',
      }),
    ),
    agent_id: Uuid(),
    opening_message: Nullable(Type.String()),
    voicemail_message: Nullable(Type.String()),
    system_prompt: Nullable(Type.String()),
    voice_id: Nullable(Type.String()),
    voice_name: Nullable(Type.String()),
    business_name: Nullable(Type.String()),
    from_number: Nullable(
      Type.String({ description: "As stored; null when the SDR settings' from_number is used." }),
    ),
    effective_from_number: Nullable(
      Type.String({
        description: "The number a dial would use now: from_number, else the SDR settings' (null: neither).",
      }),
    ),
    max_concurrent_calls: Type.Integer(),
    calling_window_start: Type.String(),
    calling_window_end: Type.String(),
    calling_days: Type.Array(Type.Integer()),
    respect_timezone: Type.Boolean(),
    timezone: Type.String({ description: 'The zone of the window when respect_timezone is false.' }),
    max_attempts: Type.Integer(),
    retry_interval_hours: Type.Integer(),
    ring_timeout_seconds: Type.Integer(),
    max_duration_seconds: Type.Integer(),
    scheduled_start_at: Nullable(Timestamp()),
    voicemail_enabled: Type.Boolean(),
    precall_brief: Type.Boolean(),
    cal_com_booking_url: Nullable(Type.String()),
    post_call_email: Nullable(Type.String()),
    metadata: MetadataOut(),
    total_prospects: Type.Integer(),
    started_at: Nullable(Timestamp()),
    completed_at: Nullable(Timestamp()),
    created_at: Timestamp(),
    updated_at: Timestamp(),
    stats: Type.Optional(
      Type.Object({
        total_prospects: Type.Integer(),
        by_status: Type.Record(Type.String(), Type.Integer()),
        attempts: Type.Integer(),
        in_flight: Type.Integer(),
        connected: Type.Integer(),
        voicemails: Type.Integer(),
        booked: Type.Integer(),
      }),
    ),
  },
  { description: 'An outbound voice campaign of the agency.' },
);

export const ProspectSchema = Type.Object({
  id: Uuid(),
  campaign_id: Uuid(),
  contact_id: Uuid(),
  client_id: Uuid("The contact's client."),
  phone: Nullable(Type.String()),
  timezone: Type.String(),
  timezone_source: Type.String({ description: 'explicit, contact, phone, settings, org or default (UTC).' }),
  status: Type.String(),
  skip_reason: Nullable(Type.String()),
  attempts: Type.Integer(),
  last_outcome: Nullable(Type.String()),
  last_attempt_at: Nullable(Timestamp()),
  next_attempt_at: Nullable(Timestamp()),
  call_ids: Type.Array(Uuid()),
  metadata: MetadataOut(),
  created_at: Timestamp(),
});

export const AddProspectsBody = Body({
  contact_ids: Type.Optional(Type.Array(Uuid(), { maxItems: 10_000 })),
  prospects: Type.Optional(
    Type.Array(
      Body({
        contact_id: Uuid(),
        timezone: Type.Optional(TimeZone),
        metadata: Type.Optional(
          Metadata(
            "the events of this prospect's calls, merged over the campaign's (this one wins a key both have)",
          ),
        ),
      }),
      { maxItems: 10_000 },
    ),
  ),
});

export const SettingsSchema = Type.Object({
  from_number: Nullable(Type.String()),
  voice_id: Nullable(Type.String()),
  voice_name: Nullable(Type.String()),
  business_name: Nullable(Type.String()),
  timezone: Nullable(Type.String()),
  updated_at: Nullable(Timestamp()),
});

export const PutSettingsBody = Body({
  from_number: Type.Optional(Nullable(E164("One of the org's numbers"))),
  voice_id: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 200 }))),
  voice_name: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 200 }))),
  business_name: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 200 }))),
  timezone: Type.Optional(Nullable(TimeZone)),
});

export const ListCampaignsQuery = Query({ ...pageQuerySchema, status: Type.Optional(CampaignStatus) });
export const ListProspectsQuery = Query({ ...pageQuerySchema, status: Type.Optional(ProspectStatus) });
export const ProspectParams = Type.Object(
  { id: Uuid(), prospectId: Uuid() },
  { additionalProperties: false },
);
