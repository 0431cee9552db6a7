export { AgencyPlatform, type ClientOptions } from './client.js';
export {
  ApiError,
  AuthenticationError,
  ConflictError,
  ConnectionError,
  type ErrorBody,
  InsufficientFuelError,
  NotFoundError,
  PermissionError,
  RateLimitError,
  ServerError,
  ValidationError,
} from './errors.js';
export { EVENT_TYPES, type EventType } from './generated/events.js';
export type { components, operations, paths } from './generated/openapi.js';
export type { Resources } from './generated/resources.js';
export type { Body, OperationId, PageItem, Query, Success } from './operation-types.js';
export type { ListEnvelope, Page, PageMethods, PagePromise } from './pagination.js';
export type { RequestOptions } from './request.js';
export {
  type EventData,
  type KnownEventData,
  type TranscriptTurn,
  type VerifyWebhookOptions,
  verifyWebhook,
  type WebhookEvent,
  type WebhookHeaders,
  WebhookVerificationError,
} from './webhooks.js';
