import { Type } from '@sinclair/typebox';
import { Nullable, Timestamp, Uuid } from '../../platform/http/schemas.ts';
import { CompanySchema } from '../companies/schemas.ts';
import { ContactFilterSchema, ContactSchema } from '../contacts/schemas.ts';
import { DealSchema } from '../deals/schemas.ts';

/** Ids one request may add to a static list. */
export const MAX_IDS_PER_CALL = 10_000;

export const ProcessingType = Type.Union([Type.Literal('static'), Type.Literal('smart')], {
  description: 'static (members added by id) or smart (members are the contacts matching filter_branch).',
});
export const EntityType = Type.Union([
  Type.Literal('contact'),
  Type.Literal('company'),
  Type.Literal('deal'),
]);

export const ListSchema = Type.Object(
  {
    id: Uuid(),
    name: Type.String(),
    description: Nullable(Type.String()),
    processing_type: ProcessingType,
    filter_branch: Nullable(ContactFilterSchema),
    exclude_dnc: Type.Boolean(),
    exclude_unsubscribed: Type.Boolean(),
    exclude_archived: Type.Boolean(),
    emit_flow_triggers: Type.Boolean(),
    created_at: Timestamp(),
    updated_at: Timestamp(),
  },
  { description: 'A CRM list of contacts, companies or deals.' },
);

export const MemberSchema = Type.Object(
  {
    entity_type: EntityType,
    entity_id: Uuid(),
    added_at: Nullable(Timestamp('When it was added; null for a smart list.')),
    contact: Nullable(ContactSchema),
    company: Nullable(CompanySchema),
    deal: Nullable(DealSchema),
  },
  { description: 'A member of a list, with the contact, company or deal it is.' },
);

export const Name = Type.String({ minLength: 1, maxLength: 200 });
const Description = Type.String({ maxLength: 2000 });
export const Ids = Type.Array(Uuid(), { minItems: 1, maxItems: MAX_IDS_PER_CALL });

/** The fields of a list that POST and PATCH both take. */
export const listFields = {
  description: Type.Optional(Nullable(Description)),
  processing_type: Type.Optional(ProcessingType),
  filter_branch: Type.Optional(Nullable(ContactFilterSchema)),
  exclude_dnc: Type.Optional(Type.Boolean()),
  exclude_unsubscribed: Type.Optional(Type.Boolean()),
  exclude_archived: Type.Optional(Type.Boolean()),
  emit_flow_triggers: Type.Optional(Type.Boolean()),
};
