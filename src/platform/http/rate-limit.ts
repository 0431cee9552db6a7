import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Redis } from 'ioredis';
import { errors } from './errors.ts';
import { slidingWindowStore } from './sliding-window.ts';

const MINUTE_MS = 60_000;

interface LimitOptions {
  /** Shared counters across processes; in process when null. */
  redis: Redis | null;
  /** Separates this limit's counters from others in the same Redis. */
  nameSpace: string;
  /** The bucket a request counts against. */
  keyOf: (request: FastifyRequest) => string;
  /** Requests allowed per window for that bucket. */
  maxOf: (request: FastifyRequest) => number;
  windowMs?: number;
  /** Count a sliding window (see sliding-window.ts) instead of the plugin's fixed windows. */
  sliding?: boolean;
}

/**
 * Rate limits for every route in `scope`: `X-RateLimit-Limit/Remaining/Reset` on every response,
 * 429 `rate_limited` with `Retry-After` past the limit. Used for API keys, the docs API and the feed.
 */
export async function installRateLimit(scope: FastifyInstance, options: LimitOptions): Promise<void> {
  await scope.register(rateLimit, {
    global: true,
    hook: 'onRequest',
    timeWindow: options.windowMs ?? MINUTE_MS,
    max: (request) => options.maxOf(request),
    keyGenerator: (request) => options.keyOf(request),
    nameSpace: options.nameSpace,
    redis: options.redis ?? undefined,
    store: options.sliding ? slidingWindowStore(options.redis, options.nameSpace) : undefined,
    // A Redis outage must not take the API down with it: the limit fails open and the error is logged.
    skipOnError: true,
    errorResponseBuilder: (_request, context) =>
      errors.rateLimited(context.max, Math.max(1, Math.ceil(context.ttl / 1000))),
  });
}

/** The per-key limit of authenticated routes. */
export function installKeyRateLimit(scope: FastifyInstance, redis: Redis | null): Promise<void> {
  return installRateLimit(scope, {
    redis,
    nameSpace: 'rl:key:',
    keyOf: (request) => request.tenant.key.id,
    maxOf: (request) => request.tenant.key.rate_limit_per_minute,
  });
}
