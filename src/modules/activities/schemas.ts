import { Type } from '@sinclair/typebox';
import { pageQuerySchema } from '../../platform/http/pagination.ts';
import { Body, DateTime, Nullable, Query, Timestamp, Uuid } from '../../platform/http/schemas.ts';

export const MAX_BODY_LENGTH = 65_536;

const ActivityType = Type.Union(
  [
    Type.Literal('call'),
    Type.Literal('note'),
    Type.Literal('email'),
    Type.Literal('meeting'),
    Type.Literal('sms'),
    Type.Literal('task'),
  ],
  { description: 'call, note, email, meeting, sms or task.' },
);
const Direction = Type.Union([Type.Literal('inbound'), Type.Literal('outbound'), Type.Literal('internal')]);
const Visibility = Type.Union([Type.Literal('internal'), Type.Literal('public')], {
  description: 'internal (the agency team only, the default) or public (may be shown to the client).',
});

export const ActivitySchema = Type.Object(
  {
    id: Uuid(),
    activity_type: ActivityType,
    direction: Nullable(Direction),
    contact_id: Nullable(Uuid()),
    company_id: Nullable(Uuid()),
    deal_id: Nullable(Uuid()),
    subject: Nullable(Type.String()),
    body: Nullable(Type.String()),
    outcome: Nullable(Type.String()),
    duration_seconds: Nullable(Type.Integer()),
    pinned: Type.Boolean(),
    visibility: Visibility,
    performed_at: Timestamp(),
    created_at: Timestamp(),
    updated_at: Timestamp(),
  },
  { description: 'An entry of the CRM timeline.' },
);

const mutableFields = {
  direction: Type.Optional(Nullable(Direction)),
  contact_id: Type.Optional(Nullable(Uuid('A contact of this client.'))),
  company_id: Type.Optional(Nullable(Uuid('A company of this client.'))),
  deal_id: Type.Optional(Nullable(Uuid('A deal of this client.'))),
  subject: Type.Optional(Nullable(Type.String({ maxLength: 500 }))),
  body: Type.Optional(Nullable(Type.String({ maxLength: MAX_BODY_LENGTH }))),
  outcome: Type.Optional(Nullable(Type.String({ maxLength: 200 }))),
  duration_seconds: Type.Optional(Nullable(Type.Integer({ minimum: 0, maximum: 604_800 }))),
  pinned: Type.Optional(Type.Boolean()),
  visibility: Type.Optional(Visibility),
  performed_at: Type.Optional(DateTime('When it happened; default now. Kept to the millisecond.')),
};

export const CreateActivityBody = Body({ activity_type: ActivityType, ...mutableFields });
export const UpdateActivityBody = Body(mutableFields);

export const TimelineQuery = Query({
  ...pageQuerySchema,
  contact_id: Type.Optional(Uuid()),
  company_id: Type.Optional(Uuid()),
  deal_id: Type.Optional(Uuid()),
  activity_type: Type.Optional(ActivityType),
});
