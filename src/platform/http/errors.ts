import type { FastifyError, FastifyInstance, FastifyReply } from 'fastify';
import { isDatabaseUnavailable } from '../db/unavailable.ts';

/** How long a client waits before retrying a request the database could not serve. */
export const DATABASE_RETRY_AFTER_SECONDS = 2;

/** The closed list of machine-readable error codes the API answers with. */
export type ErrorCode =
  | 'invalid_request'
  | 'validation_error'
  | 'unauthorized'
  | 'key_expired'
  | 'forbidden'
  | 'feature_disabled'
  | 'outbound_dialing_unavailable'
  | 'not_found'
  | 'gone'
  | 'method_not_allowed'
  | 'conflict'
  | 'identity_conflict'
  | 'phone_in_use'
  | 'email_in_use'
  | 'address_in_use'
  | 'domain_in_use'
  | 'slug_conflict'
  | 'ambiguous_slug'
  | 'invalid_transition'
  | 'idempotency_in_progress'
  | 'idempotency_key_reused'
  | 'fuel_exhausted'
  | 'number_taken'
  | 'number_not_found'
  | 'no_sender_number'
  | 'agent_archived'
  | 'webhook_disabled'
  | 'delivery_in_progress'
  | 'payload_too_large'
  | 'unsupported_media_type'
  | 'rate_limited'
  | 'service_unavailable'
  | 'internal_error'
  | 'sequence_archived'
  // the LLM behind gists failed or timed out
  | 'ai_unavailable'
  | 'agency_key_required'
  // removing or demoting the org's last owner
  | 'last_owner'
  | 'prospect_in_call'
  // an SDR campaign would start dialing with no number on it or in the SDR settings
  | 'from_number_required'
  // a path segment past the router's length limit
  | 'uri_too_long';

export interface ErrorBody {
  error: ErrorCode;
  message: string;
  details?: Record<string, unknown>;
}

export class ApiError extends Error {
  constructor(
    readonly statusCode: number,
    readonly code: ErrorCode,
    message: string,
    readonly details?: Record<string, unknown>,
    readonly headers?: Record<string, string>,
  ) {
    super(message);
  }

  toBody(): ErrorBody {
    return this.details
      ? { error: this.code, message: this.message, details: this.details }
      : { error: this.code, message: this.message };
  }
}

export interface FieldError {
  field: string;
  message: string;
}

/** Small factories so every module says the same thing the same way. */
export const errors = {
  invalidRequest: (message: string, details?: Record<string, unknown>) =>
    new ApiError(400, 'invalid_request', message, details),
  validation: (fields: FieldError[]) =>
    new ApiError(400, 'validation_error', fields.map((f) => `${f.field} ${f.message}`).join('; '), {
      fields,
    }),
  invalidField: (field: string, message: string) => errors.validation([{ field, message }]),
  unauthorized: (message = 'A valid API key is required: send Authorization: Bearer <API_KEY>.') =>
    new ApiError(401, 'unauthorized', message, undefined, { 'www-authenticate': 'Bearer' }),
  keyExpired: () =>
    new ApiError(401, 'key_expired', 'This API key has expired.', undefined, {
      'www-authenticate': 'Bearer error="invalid_token"',
    }),
  forbidden: (message: string) => new ApiError(403, 'forbidden', message),
  notFound: (resource: string, id?: string) =>
    new ApiError(
      404,
      'not_found',
      id === undefined ? `${resource} not found.` : `${resource} ${id} not found.`,
    ),
  conflict: (code: ErrorCode, message: string, details?: Record<string, unknown>) =>
    new ApiError(409, code, message, details),
  invalidTransition: (from: string, to: string) =>
    new ApiError(409, 'invalid_transition', `Cannot move from ${from} to ${to}.`, { from, to }),
  fuelExhausted: (required: number, balance: number) =>
    new ApiError(402, 'fuel_exhausted', `This action needs ${required} FUEL and the balance is ${balance}.`, {
      required,
      balance,
    }),
  numberTaken: (number: string) =>
    new ApiError(409, 'number_taken', `The phone number ${number} is already registered.`, { number }),
  numberNotFound: (number: string) =>
    new ApiError(404, 'number_not_found', `No org holds the phone number ${number}.`, { number }),
  slugConflict: (slug: string) =>
    new ApiError(409, 'slug_conflict', `The slug ${slug} is taken in this org, by an agent or as an alias.`, {
      slug,
    }),
  agentArchived: (id: string, slug: string) =>
    new ApiError(
      410,
      'agent_archived',
      `The agent ${slug} is archived; PATCH it with state active to use it again.`,
      { agent_id: id, slug },
    ),
  outboundDialingUnavailable: (statusNote: string) =>
    new ApiError(403, 'outbound_dialing_unavailable', statusNote, { status_note: statusNote }),
  noSenderNumber: (orgId: string, clientId: string) =>
    new ApiError(
      422,
      'no_sender_number',
      `There is no phone number to send from: neither this client nor the agency's house client has one. ` +
        `An operator adds one with POST /admin/v1/orgs/${orgId}/numbers.`,
      { client_id: clientId },
    ),
  rateLimited: (limit: number, retryAfterSeconds: number) =>
    new ApiError(
      429,
      'rate_limited',
      `Rate limit of ${limit} requests per minute exceeded; retry in ${retryAfterSeconds} s.`,
      {
        limit,
        retry_after_seconds: retryAfterSeconds,
      },
    ),
  idempotencyInProgress: (retryAfterSeconds: number) =>
    new ApiError(
      409,
      'idempotency_in_progress',
      'A request with this Idempotency-Key is still being processed; retry after it finishes.',
      undefined,
      { 'retry-after': String(retryAfterSeconds) },
    ),
  idempotencyKeyReused: () =>
    new ApiError(
      422,
      'idempotency_key_reused',
      'This Idempotency-Key was already used with a different request; use a new key for a new request.',
    ),
  noRoute: (method: string, url: string) =>
    new ApiError(404, 'not_found', `No route for ${method} ${url.split('?')[0]}.`),
  methodNotAllowed: (message: string) => new ApiError(405, 'method_not_allowed', message),
  unavailable: (message: string, retryAfterSeconds: number) =>
    new ApiError(503, 'service_unavailable', message, undefined, {
      'retry-after': String(retryAfterSeconds),
    }),
  aiUnavailable: (message: string) =>
    new ApiError(502, 'ai_unavailable', `The gist could not be written: ${message} No FUEL was spent.`),
  agencyKeyRequired: (what = 'SDR campaigns are') =>
    new ApiError(
      403,
      'agency_key_required',
      `${what} agency-only: use an agency key (gc_live_), not a client key.`,
    ),
  featureDisabled: (feature: string, message: string) =>
    new ApiError(403, 'feature_disabled', message, { feature }),
  fromNumberRequired: (campaignId: string) =>
    new ApiError(
      409,
      'from_number_required',
      'This campaign has no number to dial from: set from_number on the campaign or in PUT /v1/sdr/settings.',
      { campaign_id: campaignId },
    ),
  prospectInCall: (prospectId: string, callId: string) =>
    new ApiError(
      409,
      'prospect_in_call',
      `Prospect ${prospectId} is in a call; remove it once the call ends.`,
      {
        prospect_id: prospectId,
        call_id: callId,
      },
    ),
};

/** One error handler and one not-found handler for the whole app: every failure leaves as the envelope. */
export function installErrorHandling(app: FastifyInstance): void {
  app.setNotFoundHandler((request, reply) => {
    reply
      .code(404)
      .send({ error: 'not_found', message: `No route for ${request.method} ${request.url.split('?')[0]}.` });
  });

  app.setErrorHandler((error: FastifyError | ApiError, request, reply) => {
    const apiError = toApiError(error);
    if (apiError.code === 'service_unavailable') {
      request.log.warn({ reqId: request.id, reason: error.message }, 'request answered 503');
    } else if (apiError.statusCode >= 500) {
      request.log.error({ err: error, reqId: request.id }, 'request failed');
    }
    if (apiError.headers) reply.headers(apiError.headers);
    reply.code(apiError.statusCode).send(apiError.toBody());
  });
}

/**
 * Fastify's `frameworkErrors`: what the router refuses before any route or hook runs (a path
 * parameter past its length limit, a malformed percent-encoding) leaves as the envelope too,
 * without echoing the URL.
 */
export function frameworkErrors(error: FastifyError, _request: unknown, reply: FastifyReply): void {
  const apiError =
    error.code === 'FST_ERR_MAX_PARAM_LENGTH'
      ? new ApiError(414, 'uri_too_long', 'A path segment of this URL is too long.')
      : error.code === 'FST_ERR_BAD_URL'
        ? errors.invalidRequest('The URL is not valid: a path segment has a malformed percent-encoding.')
        : toApiError(error);
  reply.code(apiError.statusCode).send(apiError.toBody());
}

export function toApiError(error: FastifyError | ApiError | Error): ApiError {
  if (error instanceof ApiError) return error;
  const fastifyError = error as FastifyError;
  if (fastifyError.validation) {
    const fields = fastifyError.validation.map((issue) => ({
      field: fieldName(fastifyError.validationContext, issue.instancePath, issue.params),
      message: issue.message ?? 'is invalid',
    }));
    return errors.validation(fields);
  }
  switch (fastifyError.code) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return errors.invalidRequest('The request body is not valid JSON.');
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new ApiError(413, 'payload_too_large', 'The request body is too large.');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new ApiError(415, 'unsupported_media_type', 'Send the request body as application/json.');
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return errors.invalidRequest('The Content-Length header does not match the body.');
  }
  if (error instanceof SyntaxError && fastifyError.statusCode === 400) {
    return errors.invalidRequest('The request body is not valid JSON.');
  }
  if (isDatabaseUnavailable(error)) {
    return errors.unavailable(
      'The database is unavailable for a moment; retry after the Retry-After seconds.',
      DATABASE_RETRY_AFTER_SECONDS,
    );
  }
  const status = fastifyError.statusCode;
  if (status && status >= 400 && status < 500) {
    return new ApiError(status, status === 404 ? 'not_found' : 'invalid_request', fastifyError.message);
  }
  return new ApiError(
    500,
    'internal_error',
    'An unexpected error occurred. It has been logged; retry later.',
  );
}

function fieldName(
  context: string | undefined,
  instancePath: string,
  params: Record<string, unknown>,
): string {
  const segments = instancePath.split('/').filter(Boolean);
  if (typeof params.missingProperty === 'string') segments.push(params.missingProperty);
  if (typeof params.additionalProperty === 'string') segments.push(params.additionalProperty);
  const name = segments.join('.');
  if (context === 'body' || !context) return name || 'body';
  return name || context;
}
