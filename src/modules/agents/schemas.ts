import { Type } from '@sinclair/typebox';
import { pageQuerySchema } from '../../platform/http/pagination.ts';
import { Body, Nullable, Query, Timestamp, Uuid } from '../../platform/http/schemas.ts';

export const SLUG_PATTERN = '^[a-z0-9][a-z0-9_-]{2,63}$';

const Kind = Type.Union(
  (['inbound_voice', 'outbound_voice', 'sms', 'google_my_business'] as const).map((kind) =>
    Type.Literal(kind),
  ),
  { description: 'inbound_voice, outbound_voice, sms or google_my_business; fixed at creation.' },
);
const State = Type.Union(
  (['active', 'paused', 'archived'] as const).map((state) => Type.Literal(state)),
  { description: 'active, paused or archived; an archived agent answers 410 until it is made active again.' },
);
const Slug = Type.String({
  pattern: SLUG_PATTERN,
  description:
    '3-64 characters: lower-case letters, digits, _ and -, starting with a letter or digit; unique in the org.',
});
const Name = Type.String({ minLength: 1, maxLength: 200 });
const Purpose = Nullable(Type.String({ maxLength: 64 }));
const Labels = Type.Array(Type.String({ minLength: 1, maxLength: 32 }), {
  maxItems: 16,
  description: 'At most 16 labels of at most 32 characters; duplicates are dropped.',
});
const LocationLabel = Nullable(Type.String({ maxLength: 80 }));
const Greeting = Type.String({ maxLength: 4000 });
const VoiceId = Nullable(Type.String({ minLength: 1, maxLength: 200 }));

export const AgentSchema = Type.Object(
  {
    id: Uuid(),
    client_id: Uuid(),
    name: Type.String(),
    slug: Type.String({ description: 'The current slug.' }),
    kind: Type.String(),
    purpose: Nullable(Type.String()),
    labels: Type.Array(Type.String()),
    state: Type.String(),
    location_label: Nullable(Type.String()),
    greeting: Type.String(),
    voice_id: Nullable(Type.String()),
    previous_slugs: Type.Array(Type.String(), {
      description: 'Past slugs that still answer as aliases, the most recent rename first.',
    }),
    created_at: Timestamp(),
    updated_at: Timestamp(),
  },
  { description: 'A voice, SMS or business-listing agent of a client.' },
);

/** The fields a create and an update both take, optional in both. */
const editable = {
  slug: Type.Optional(Slug),
  purpose: Type.Optional(Purpose),
  labels: Type.Optional(Labels),
  state: Type.Optional(State),
  location_label: Type.Optional(LocationLabel),
  greeting: Type.Optional(Greeting),
  voice_id: Type.Optional(VoiceId),
};

export const CreateAgentBody = Body({ name: Name, kind: Kind, ...editable });

export const UpdateAgentBody = Body({
  name: Type.Optional(Name),
  kind: Type.Optional(
    Type.String({ description: 'Immutable: only the current kind is accepted (and changes nothing).' }),
  ),
  ...editable,
});

export const ListAgentsQuery = Query({
  ...pageQuerySchema,
  client_id: Type.Optional(Uuid('Agents of this client (agency keys; a client key sees its own only).')),
  kind: Type.Optional(Kind),
  purpose: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
  label: Type.Optional(
    Type.String({ minLength: 1, maxLength: 32, description: 'Agents carrying this label.' }),
  ),
  state: Type.Optional(State),
  q: Type.Optional(
    Type.String({ minLength: 1, maxLength: 200, description: 'Substring of the name, slug or purpose.' }),
  ),
});

export const AgentParams = Type.Object(
  {
    idOrSlug: Type.String({
      minLength: 1,
      maxLength: 100,
      description: "The agent's id, slug or a past slug.",
    }),
  },
  { additionalProperties: false },
);
