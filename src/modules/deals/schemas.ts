import { Type } from '@sinclair/typebox';
import { pageQuerySchema } from '../../platform/http/pagination.ts';
import { Body, Nullable, Query, Timestamp, Uuid } from '../../platform/http/schemas.ts';

const Status = Type.Union([Type.Literal('open'), Type.Literal('won'), Type.Literal('lost')], {
  description: 'open, won or lost.',
});
const Tags = Type.Array(Type.String({ minLength: 1, maxLength: 100 }), {
  maxItems: 100,
  description: 'Replaces the whole array on update; duplicates are dropped.',
});
const CalendarDate = Type.String({ format: 'date', description: 'YYYY-MM-DD.' });

export const DealSchema = Type.Object(
  {
    id: Uuid(),
    name: Type.String(),
    amount: Nullable(Type.Number()),
    currency: Type.String({ description: 'ISO 4217 code, upper case.' }),
    pipeline_id: Uuid(),
    stage_id: Uuid(),
    status: Status,
    owner_user_id: Nullable(Uuid()),
    primary_contact_id: Nullable(Uuid()),
    company_id: Nullable(Uuid()),
    expected_close_date: Nullable(CalendarDate),
    tags: Type.Array(Type.String()),
    custom_fields: Type.Record(Type.String(), Type.Unknown()),
    archived_at: Nullable(Timestamp('Set when the deal was archived (DELETE); archived deals are kept.')),
    created_at: Timestamp(),
    updated_at: Timestamp(),
  },
  { description: 'A deal (opportunity) in a pipeline stage.' },
);

const dealFields = {
  name: Type.String({ minLength: 1, maxLength: 200 }),
  amount: Type.Optional(Nullable(Type.Number({ minimum: 0, maximum: 1e15 }))),
  currency: Type.Optional(
    Type.String({ pattern: '^[A-Za-z]{3}$', description: 'ISO 4217 code; default USD.' }),
  ),
  pipeline_id: Type.Optional(Uuid('A pipeline of this client; default: the default pipeline.')),
  stage_id: Type.Optional(Uuid("A stage of the deal's pipeline; default: its first stage.")),
  status: Type.Optional(Status),
  owner_user_id: Type.Optional(Nullable(Uuid())),
  primary_contact_id: Type.Optional(Nullable(Uuid('A contact of this client.'))),
  company_id: Type.Optional(Nullable(Uuid('A company of this client.'))),
  expected_close_date: Type.Optional(Nullable(CalendarDate)),
  tags: Type.Optional(Tags),
};

export const CreateDealBody = Body({
  ...dealFields,
  custom_fields: Type.Optional(
    Type.Record(Type.String({ minLength: 1, maxLength: 100 }), Type.Unknown(), {
      maxProperties: 100,
      description: 'Free-form; at most 100 keys and 16 KB.',
    }),
  ),
});

export const UpdateDealBody = Body({
  ...dealFields,
  name: Type.Optional(dealFields.name),
  custom_fields: Type.Optional(
    Type.Record(Type.String({ minLength: 1, maxLength: 100 }), Type.Unknown(), {
      maxProperties: 100,
      description: 'Merged into the stored fields; a key set to null is removed.',
    }),
  ),
  archived: Type.Optional(Type.Boolean({ description: 'true archives the deal, false restores it.' })),
});

export const ListDealsQuery = Query({
  ...pageQuerySchema,
  pipeline_id: Type.Optional(Uuid()),
  stage_id: Type.Optional(Uuid()),
  status: Type.Optional(Status),
  company_id: Type.Optional(Uuid()),
  contact_id: Type.Optional(Uuid('Deals whose primary contact this is.')),
  owner_user_id: Type.Optional(Uuid()),
  include_archived: Type.Optional(Type.Boolean({ description: 'Include archived deals (default false).' })),
});
