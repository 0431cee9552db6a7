/** The API's error body: `{error, message, details?}`. */
export interface ErrorBody {
  error: string;
  message: string;
  details?: Record<string, unknown>;
}

/** Every failure of a call: the HTTP status, the API's machine code and message, and the request id. */
export class ApiError extends Error {
  override name = 'ApiError';
  /** The HTTP status; 0 when no response arrived (see `ConnectionError`). */
  readonly status: number;
  /** The API's machine-readable code, such as `not_found` or `validation_error`. */
  readonly error: string;
  readonly details: Record<string, unknown> | undefined;
  /** The `X-Request-Id` of the response, to quote to support. */
  readonly requestId: string | null;
  readonly headers: Headers;

  constructor(status: number, body: ErrorBody, headers: Headers = new Headers()) {
    super(body.message);
    this.status = status;
    this.error = body.error;
    this.details = body.details;
    this.headers = headers;
    this.requestId = headers.get('x-request-id');
  }
}

/** 400 and 422: the request was not valid (`validation_error`, `invalid_request`, `idempotency_key_reused`). */
export class ValidationError extends ApiError {
  override name = 'ValidationError';
}
/** 401: the key is missing, unknown, revoked or expired. */
export class AuthenticationError extends ApiError {
  override name = 'AuthenticationError';
}
/** 402: the org's FUEL balance cannot pay for the call. */
export class InsufficientFuelError extends ApiError {
  override name = 'InsufficientFuelError';
}
/** 403: the key may not do this (a client key on SDR, a feature that is off). */
export class PermissionError extends ApiError {
  override name = 'PermissionError';
}
/** 404 and 410: no such record for this tenant, or it is gone. */
export class NotFoundError extends ApiError {
  override name = 'NotFoundError';
}
/** 409: the request conflicts with the record's state (a taken slug, an illegal transition). */
export class ConflictError extends ApiError {
  override name = 'ConflictError';
}
/** 429: the key's rate limit; `retryAfter` is the wait the API asked for, in seconds. */
export class RateLimitError extends ApiError {
  override name = 'RateLimitError';
  readonly retryAfter: number | null;
  constructor(status: number, body: ErrorBody, headers: Headers = new Headers()) {
    super(status, body, headers);
    const wait = retryAfterMs(headers);
    this.retryAfter = wait === null ? null : Math.ceil(wait / 1000);
  }
}
/** 5xx: the service failed or is unavailable. */
export class ServerError extends ApiError {
  override name = 'ServerError';
}
/** No response: the network failed or the time-out passed, on every attempt. */
export class ConnectionError extends ApiError {
  override name = 'ConnectionError';
  constructor(message: string, options?: { cause?: unknown }) {
    super(0, { error: 'connection_error', message });
    if (options?.cause !== undefined) this.cause = options.cause;
  }
}

const BY_STATUS: Record<number, typeof ApiError> = {
  400: ValidationError,
  401: AuthenticationError,
  402: InsufficientFuelError,
  403: PermissionError,
  404: NotFoundError,
  409: ConflictError,
  410: NotFoundError,
  422: ValidationError,
  429: RateLimitError,
};

function isErrorBody(value: unknown): value is ErrorBody {
  const body = value as ErrorBody | null;
  return typeof body?.error === 'string' && typeof body.message === 'string';
}

/** The error a failed response stands for. A body that is not the API's envelope (a proxy's page) still gives one. */
export function errorFromResponse(status: number, body: unknown, headers: Headers): ApiError {
  const envelope = isErrorBody(body) ? body : { error: `http_${status}`, message: `HTTP ${status}` };
  const ErrorClass = BY_STATUS[status] ?? (status >= 500 ? ServerError : ApiError);
  return new ErrorClass(status, envelope, headers);
}

/** `Retry-After` as delay-seconds or an HTTP date, in milliseconds; null when absent or unreadable. */
export function retryAfterMs(headers: Headers): number | null {
  const value = headers.get('retry-after');
  if (value === null || value.trim() === '') return null;
  if (/^\d+(\.\d+)?$/.test(value.trim())) return Number(value) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? null : Math.max(0, date - Date.now());
}
