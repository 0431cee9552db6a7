import { type TObject, type TProperties, type TSchema, Type } from '@sinclair/typebox';

/** Schema pieces every module uses, so one field means the same everywhere. */

export const Uuid = (description?: string) =>
  Type.String({ format: 'uuid', ...(description ? { description } : {}) });
/** A date-time in a request. */
export const DateTime = (description?: string) =>
  Type.String({ format: 'date-time', ...(description ? { description } : {}) });
/** A date-time in a response: a Date from the database is serialized as ISO 8601 with `Z`. */
export const Timestamp = (description?: string) =>
  Type.Unsafe<Date | string>({
    type: 'string',
    format: 'date-time',
    ...(description ? { description } : {}),
  });
export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

/** The most `metadata` may hold: its JSON text, in UTF-8 bytes. */
export const METADATA_MAX_BYTES = 16 * 1024;
/** The schema keyword (checked by the request validator, see validation.ts) bounding a value's JSON size. */
export const MAX_JSON_BYTES = 'x-max-json-bytes';

/**
 * `metadata` wherever an action takes it: a JSON object stored as given (at most 16 KB serialized, else
 * 400 `validation_error` naming the field) and echoed in the `metadata` of the events the action causes.
 */
export const Metadata = (echoedIn: string) =>
  Type.Record(Type.String(), Type.Unknown(), {
    description: `Your own JSON object (at most 16 KB serialized), stored as given and echoed in the \`metadata\` of ${echoedIn}.`,
    [MAX_JSON_BYTES]: METADATA_MAX_BYTES,
  });

/** `metadata` in a response. */
export const MetadataOut = () =>
  Type.Record(Type.String(), Type.Unknown(), { description: 'As given when it was started; {} when none.' });

/** A request body object that refuses unknown fields, so a typo is a 400 rather than silently ignored. */
export const Body = <T extends TProperties>(
  properties: T,
  options: { description?: string } = {},
): TObject<T> => Type.Object(properties, { additionalProperties: false, ...options });

/** A query string object that refuses unknown parameters. */
export const Query = Body;

export const IdParams = Type.Object({ id: Uuid() }, { additionalProperties: false });

export const ErrorBody = Type.Object(
  {
    error: Type.String({ description: 'Machine-readable error code.' }),
    message: Type.String(),
    details: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  },
  { $id: 'Error', description: 'The error envelope of every failed request.' },
);

const errorRef = { $ref: 'Error#' };

const STANDARD_ERRORS = {
  400: 'Invalid request or validation error',
  401: 'Missing, invalid, expired or revoked API key',
  429: 'Rate limit exceeded',
} as const;

/** The error responses of an operation, with the standard ones (400, 401, 429) included. */
export function errorResponses(...statuses: number[]): Record<number, TSchema> {
  const responses: Record<number, TSchema> = {};
  for (const status of [...Object.keys(STANDARD_ERRORS).map(Number), ...statuses]) {
    responses[status] = Type.Unsafe({ ...errorRef, description: describe(status) });
  }
  return responses;
}

function describe(status: number): string {
  const known: Record<number, string> = {
    ...STANDARD_ERRORS,
    402: 'FUEL exhausted',
    403: 'Forbidden for this key',
    404: 'Not found in this tenant',
    409: 'Conflict',
    410: 'Gone',
    413: 'Body too large',
    422: 'Idempotency key reused with another request',
    503: 'Unavailable',
  };
  return known[status] ?? 'Error';
}

export const IdempotencyHeaders = Type.Object({
  'idempotency-key': Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 255,
      description: 'Makes the request safe to retry: a repeat within 24 hours replays the first response.',
    }),
  ),
});
