import { Type } from '@sinclair/typebox';
import { pageQuerySchema } from '../../platform/http/pagination.ts';
import { Body, DateTime, Nullable, Query, Timestamp, Uuid } from '../../platform/http/schemas.ts';
import { ApiKeySchema } from '../me/schemas.ts';

const Name = Type.String({ minLength: 1, maxLength: 200, pattern: '\\S' });

export const ClientSchema = Type.Object(
  {
    id: Uuid(),
    org_id: Uuid(),
    name: Type.String(),
    is_house: Type.Boolean({
      description: "The agency's own client, which an agency key acts on by default.",
    }),
    created_at: Timestamp(),
  },
  { description: 'A client of the agency.' },
);

export const ClientsQuery = Query({
  ...pageQuerySchema,
  q: Type.Optional(
    Type.String({ minLength: 1, maxLength: 200, description: 'Part of the name, in any case.' }),
  ),
});

export const CreateClientBody = Body({ name: Name });
export const UpdateClientBody = Body({ name: Type.Optional(Name) });

export const ManagedApiKeySchema = Type.Object(
  {
    ...ApiKeySchema.properties,
    client_id: Nullable(Uuid('The client of a client key; null for an agency key.')),
    last4: Type.String({ description: 'The last four characters of the key.' }),
    created_at: Timestamp(),
    last_used_at: Nullable(Timestamp('Noted at most once a minute.')),
    revoked_at: Nullable(Timestamp()),
  },
  { description: 'An API key of the org, without its secret.' },
);

export const ApiKeysQuery = Query({
  ...pageQuerySchema,
  client_id: Type.Optional(Uuid('Only the keys of this client.')),
});

export const CreateApiKeyBody = Body({
  name: Name,
  kind: Type.Union([Type.Literal('agency'), Type.Literal('client')], {
    description: 'agency (gc_live_, org-wide) or client (cl_live_, bound to client_id).',
  }),
  client_id: Type.Optional(Uuid('Required for a client key: the client it acts on.')),
  rate_limit_per_minute: Type.Optional(
    Type.Integer({ minimum: 1, maximum: 10_000_000, description: 'Requests per minute (default 60).' }),
  ),
  expires_at: Type.Optional(DateTime('When the key stops working; never when absent.')),
  tag: Type.Optional(Type.String({ maxLength: 100 })),
});

export const CreatedApiKey = Type.Object({
  api_key: ManagedApiKeySchema,
  key: Type.String({ description: 'The key itself: shown in this response only.' }),
});
