import { Type } from '@sinclair/typebox';
import { pageQuerySchema, pageSchema } from '../../platform/http/pagination.ts';
import { Nullable, Query, Timestamp, Uuid } from '../../platform/http/schemas.ts';

const Direction = Type.Union([Type.Literal('inbound'), Type.Literal('outbound')]);
const Status = Type.Union(
  (
    ['queued', 'ringing', 'in_progress', 'completed', 'voicemail', 'no_answer', 'busy', 'failed'] as const
  ).map((status) => Type.Literal(status)),
);
const CalendarDate = (description: string) => Type.String({ format: 'date', description });

export const CallSchema = Type.Object(
  {
    id: Uuid(),
    direction: Direction,
    from: Type.String({ description: 'E.164: the caller.' }),
    to: Type.String({ description: 'E.164: the number called.' }),
    contact_phone: Nullable(Type.String({ description: "The other party's number." })),
    contact_name: Nullable(Type.String()),
    contact_id: Nullable(Uuid("The client's contact with that phone number, if any.")),
    agent_id: Nullable(Uuid()),
    sdr_campaign_id: Nullable(Uuid('The SDR campaign that placed the call.')),
    status: Type.String({
      description: 'queued, ringing, in_progress, completed, voicemail, no_answer, busy or failed.',
    }),
    disposition: Nullable(Type.String({ description: "How the call ended, in the provider's words." })),
    outcome: Nullable(Type.String({ description: 'answered, voicemail or booked, once the call ended.' })),
    summary: Nullable(Type.String()),
    recording_url: Nullable(Type.String()),
    recording_duration_seconds: Nullable(Type.Integer()),
    duration_seconds: Nullable(Type.Integer()),
    cost_cents: Nullable(Type.Integer()),
    started_at: Nullable(Timestamp()),
    answered_at: Nullable(Timestamp()),
    ended_at: Nullable(Timestamp()),
    created_at: Timestamp(),
  },
  { description: 'A phone call, inbound or outbound.' },
);

export const TranscriptTurnSchema = Type.Object({
  speaker: Type.String({ description: 'agent, contact or transfer_target.' }),
  content: Type.String(),
  start_time_seconds: Type.Number(),
});

export const CallDetailSchema = Type.Composite([
  CallSchema,
  Type.Object({ transcript: Type.Array(TranscriptTurnSchema, { description: 'The turns, in order.' }) }),
]);

export const ListCallsQuery = Query({
  ...pageQuerySchema,
  start_date: Type.Optional(
    CalendarDate("Calls from this day on (yyyy-MM-dd, in the org's time zone, UTC when it has none)."),
  ),
  end_date: Type.Optional(CalendarDate('Calls up to the end of this day (yyyy-MM-dd, inclusive).')),
  agent_id: Type.Optional(Uuid()),
  direction: Type.Optional(Direction),
  status: Type.Optional(Status),
  contact_id: Type.Optional(Uuid()),
});

export const CallPage = Type.Composite([
  pageSchema(CallSchema),
  Type.Object({ count: Type.Integer({ description: 'Calls matching the filters, every page together.' }) }),
]);
