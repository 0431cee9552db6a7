import { Type } from '@sinclair/typebox';
import { pageQuerySchema } from '../../platform/http/pagination.ts';
import { Body, DateTime, Nullable, Query, Timestamp, Uuid } from '../../platform/http/schemas.ts';

const EventName = Type.String({
  minLength: 1,
  maxLength: 100,
  description: 'An event name of the catalog, or * for every event.',
});

export const WebhookSchema = Type.Object(
  {
    id: Uuid(),
    url: Type.String({ format: 'uri' }),
    events: Type.Array(Type.String(), { description: 'Event names, or the single value * for all.' }),
    active: Type.Boolean(),
    description: Nullable(Type.String()),
    client_id: Nullable(
      Uuid('The client whose events it receives; null for an agency-wide subscription (every client).'),
    ),
    secret_last4: Type.String({ description: 'The last four characters of the signing secret.' }),
    consecutive_failures: Type.Integer(),
    disabled_at: Nullable(
      Timestamp('When it was disabled, by the circuit breaker or by PATCH active=false.'),
    ),
    created_at: Timestamp(),
    updated_at: Timestamp(),
  },
  { description: 'A webhook subscription. The signing secret is returned only at creation and rotation.' },
);

/**
 * Null first: with the app's type coercion, a string-first union would turn a null into "" (an
 * empty description then also reads as none).
 */
const Description = Type.Union([Type.Null(), Type.String({ maxLength: 500 })]);

const Secret = Type.String({
  description: 'The signing secret (whsec_…). Shown once: store it now; it cannot be read again.',
});

export const CreateWebhookBody = Body({
  url: Type.String({
    minLength: 1,
    maxLength: 2048,
    description: 'Absolute https URL, without credentials.',
  }),
  events: Type.Array(EventName, { minItems: 1, maxItems: 64 }),
  description: Type.Optional(Description),
});

export const CreatedWebhook = Type.Object({
  webhook: WebhookSchema,
  secret: Secret,
  signing_header: Type.Literal('X-Service-Signature'),
});

export const UpdateWebhookBody = Body({
  url: Type.Optional(Type.String({ minLength: 1, maxLength: 2048 })),
  events: Type.Optional(Type.Array(EventName, { minItems: 1, maxItems: 64 })),
  description: Type.Optional(Description),
  active: Type.Optional(
    Type.Boolean({ description: 'true re-enables a disabled subscription and resets its failure counter.' }),
  ),
  rotate_secret: Type.Optional(
    Type.Boolean({ description: 'true replaces the signing secret; the new one is returned once.' }),
  ),
});

export const UpdatedWebhook = Type.Object({
  webhook: WebhookSchema,
  secret: Type.Optional(Secret),
  signing_header: Type.Optional(Type.Literal('X-Service-Signature')),
});

export const AttemptStatusSchema = Type.Union([
  Type.Literal('succeeded'),
  Type.Literal('failed'),
  Type.Literal('retrying'),
  Type.Literal('dead_letter'),
  Type.Literal('skipped'),
]);

export const DeliveryAttemptSchema = Type.Object(
  {
    id: Uuid('The X-Service-Delivery-Id sent with this attempt.'),
    event_id: Type.String(),
    event_type: Type.String(),
    attempt: Type.Integer({ description: 'The attempt number for this event and subscription, from 1.' }),
    manual: Type.Boolean({ description: 'A manual retry, outside the schedule.' }),
    status: AttemptStatusSchema,
    response_status: Nullable(Type.Integer()),
    response_body: Nullable(Type.String({ description: 'The first 2 KB of the response body.' })),
    error_class: Nullable(
      Type.String({
        description:
          'http_error, redirect, timeout, network_error, blocked_address, invalid_url, signing_error, subscription_disabled or worker_lost.',
      }),
    ),
    error: Nullable(Type.String()),
    duration_ms: Nullable(Type.Integer()),
    next_attempt_at: Nullable(Timestamp('When the next scheduled attempt is due, for a retrying delivery.')),
    created_at: Timestamp(),
  },
  { description: 'One attempt to deliver an event to a subscription (or one event skipped).' },
);

export const DeliveriesQuery = Query({
  ...pageQuerySchema,
  status: Type.Optional(AttemptStatusSchema),
});

export const DeliveryParams = Type.Object(
  { id: Uuid(), deliveryId: Uuid('The id of a delivery log record.') },
  { additionalProperties: false },
);

export const TestEventSchema = Type.Object({
  event: Type.Object({
    id: Type.String(),
    type: Type.String({ description: 'webhook.test' }),
    created: Type.String(),
    data: Type.Record(Type.String(), Type.Unknown()),
    metadata: Type.Record(Type.String(), Type.Unknown()),
  }),
});

export const RetryResponse = Type.Object({
  retry: Type.Object({
    webhook_id: Uuid(),
    delivery_id: Uuid(),
    event_id: Type.String(),
    requested_at: Timestamp(),
  }),
});

export const RecoverBody = Body({
  since: DateTime('Start of the window (event creation time, inclusive).'),
  until: Type.Optional(DateTime('End of the window (exclusive); default now. At most 14 days after since.')),
});

export const RecoverResponse = Type.Object({
  recovery: Type.Object({
    webhook_id: Uuid(),
    since: Timestamp(),
    until: Timestamp(),
    queued: Type.Integer({ description: 'Deliveries put back on a fresh retry schedule.' }),
  }),
});
