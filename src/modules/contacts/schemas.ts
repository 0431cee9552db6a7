import { Type } from '@sinclair/typebox';
import { Nullable, Timestamp, Uuid } from '../../platform/http/schemas.ts';
import { LIMITS } from './filter.ts';

export const ContactSchema = Type.Object(
  {
    id: Uuid(),
    client_id: Uuid(),
    full_name: Nullable(Type.String()),
    first_name: Nullable(Type.String()),
    last_name: Nullable(Type.String()),
    title: Nullable(Type.String()),
    lifecycle_stage: Nullable(Type.String({ description: 'For example lead, qualified, customer.' })),
    company_id: Nullable(Uuid()),
    company: Nullable(
      Type.Object(
        { id: Uuid(), name: Type.String(), domain: Nullable(Type.String()) },
        { description: 'The linked company.' },
      ),
    ),
    owner_user_id: Nullable(Uuid()),
    tags: Type.Array(Type.String()),
    source: Nullable(Type.String()),
    timezone: Nullable(
      Type.String({ description: "The contact's IANA time zone (SDR calling windows apply in it)." }),
    ),
    email: Nullable(Type.String({ description: 'The primary email, lower-cased.' })),
    phone: Nullable(Type.String({ description: 'The primary phone, E.164.' })),
    archived_at: Nullable(Timestamp()),
    created_at: Timestamp(),
    updated_at: Timestamp(),
  },
  { description: 'A CRM contact.' },
);

export const PersonName = Type.String({ maxLength: 200 });
export const Title = Type.String({ maxLength: 200 });
export const LifecycleStage = Type.String({
  minLength: 1,
  maxLength: 64,
  description: 'Free text; for example lead, qualified, customer.',
});
export const Tags = Type.Array(Type.String({ minLength: 1, maxLength: 100 }), {
  maxItems: 100,
  description: 'Up to 100 tags of up to 100 characters.',
});
export const Email = Type.String({ format: 'email', maxLength: 254 });
export const Phone = Type.String({
  minLength: 1,
  maxLength: 40,
  description: 'E.164 (+14155552671); a number without a country code is read in PHONE_DEFAULT_COUNTRY.',
});
export const Source = Type.String({ maxLength: 200 });

export const PhoneType = Type.Union(
  ['mobile', 'work', 'home', 'other'].map((value) => Type.Literal(value)),
  { description: 'mobile, work, home or other.' },
);
export const PhoneStatus = Type.Union(
  ['unverified', 'verified', 'invalid'].map((value) => Type.Literal(value)),
  { description: 'unverified, verified or invalid.' },
);
export const ConsentStatus = Type.Union(
  ['unknown', 'opt_in', 'opt_out', 'do_not_call'].map((value) => Type.Literal(value)),
  { description: 'unknown, opt_in, opt_out or do_not_call.' },
);
export const DncScope = Type.Union(
  ['individual', 'company', 'global'].map((value) => Type.Literal(value)),
  { description: 'individual, company or global.' },
);
export const EmailStatus = Type.Union(
  ['unverified', 'verified', 'bounced'].map((value) => Type.Literal(value)),
  { description: 'unverified, verified or bounced.' },
);
export const ConsentSource = Type.String({ maxLength: 200 });

export const PhoneSchema = Type.Object(
  {
    id: Uuid(),
    contact_id: Uuid(),
    phone: Type.String({ description: 'E.164.' }),
    phone_type: Type.String(),
    is_primary: Type.Boolean(),
    status: Type.String(),
    consent_status: Type.String(),
    consent_source: Nullable(Type.String()),
    consented_at: Nullable(Timestamp()),
    dnc_scope: Nullable(Type.String()),
    source: Nullable(Type.String()),
    created_at: Timestamp(),
    updated_at: Timestamp(),
  },
  { description: 'A phone number of a contact.' },
);

export const EmailSchema = Type.Object(
  {
    id: Uuid(),
    contact_id: Uuid(),
    email: Type.String({ description: 'Lower-cased.' }),
    is_primary: Type.Boolean(),
    status: Type.String(),
    source: Nullable(Type.String()),
    created_at: Timestamp(),
    updated_at: Timestamp(),
  },
  { description: 'An email address of a contact.' },
);

export const ContactFilterSchema = Type.Object(
  {},
  {
    additionalProperties: true,
    description: `A condition tree: {"and": [...]} or {"or": [...]} groups (up to ${LIMITS.depth} deep) whose leaves are {"field", "operator", "value"} conditions on a contact (up to ${LIMITS.conditions}). See the lists guide for fields and operators.`,
  },
);

export const ContactTimeZone = Type.String({
  minLength: 1,
  maxLength: 64,
  description: 'An IANA time zone such as America/New_York; SDR calling windows apply in it.',
});
