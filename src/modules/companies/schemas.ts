import { Type } from '@sinclair/typebox';
import { Nullable, Timestamp, Uuid } from '../../platform/http/schemas.ts';

export const CompanySchema = Type.Object(
  {
    id: Uuid(),
    name: Type.String(),
    domain: Nullable(Type.String({ description: 'Normalized: lower case, no scheme, no www., no path.' })),
    website: Nullable(Type.String()),
    industry: Nullable(Type.String()),
    business_description: Nullable(Type.String()),
    archived_at: Nullable(Timestamp()),
    created_at: Timestamp(),
    updated_at: Timestamp(),
  },
  { description: 'A company of the CRM.' },
);

export const Name = Type.String({ minLength: 1, maxLength: 200 });
export const Domain = Type.String({
  minLength: 1,
  maxLength: 253,
  description: 'A domain or URL; stored normalized (acme.com).',
});
export const Website = Type.String({ maxLength: 2048 });
export const Industry = Type.String({ maxLength: 200 });
export const Description = Type.String({ maxLength: 5000 });
