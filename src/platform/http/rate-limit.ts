import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Config } from '../../config.ts';
import { errors } from './errors.ts';
import { slidingWindowStore } from './sliding-window.ts';

const MINUTE_MS = 60_000;
const REDIS_RETRY_AFTER_SECONDS = 2;
/** How long a start waits for Redis before it goes on without it. */
const CONNECT_WAIT_MS = 2000;

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
  const { redis } = options;
  if (redis && !scope.platform.config.rateLimitFailOpen) {
    // RATE_LIMIT_FAIL_OPEN=false: no request goes unlimited while the shared counters are out of reach.
    scope.addHook('onRequest', async () => {
      if (redis.status !== 'ready')
        throw errors.unavailable(
          'Rate limits cannot be checked right now; retry shortly.',
          REDIS_RETRY_AFTER_SECONDS,
        );
    });
  }
  await scope.register(rateLimit, {
    global: true,
    hook: 'onRequest',
    timeWindow: options.windowMs ?? MINUTE_MS,
    max: (request) => options.maxOf(request),
    keyGenerator: (request) => options.keyOf(request),
    nameSpace: options.nameSpace,
    redis: options.redis ?? undefined,
    store: options.sliding ? slidingWindowStore(options.redis, options.nameSpace) : undefined,
    // A Redis outage fails open (unless refused above): runtime.ts logs it and /readyz reports it.
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

/**
 * The Redis of shared rate-limit counters, or null for counters in the process. A command fails at
 * once while Redis is unreachable (no offline queue, one retry), so a request never waits on it; and
 * the log says when limits stop being enforced (or, with `RATE_LIMIT_FAIL_OPEN=false`, when limited
 * requests are refused) and when they are back.
 */
export async function connectRateLimitStore(
  config: Pick<Config, 'redisUrl' | 'rateLimitFailOpen'>,
  log: Logger,
): Promise<Redis | null> {
  if (!config.redisUrl) return null;
  const redis = new Redis(config.redisUrl, {
    maxRetriesPerRequest: 1,
    enableOfflineQueue: false,
    connectTimeout: 2000,
  });
  let reachable = true;
  const lost = (error?: Error) => {
    if (!reachable) return;
    reachable = false;
    log.warn(
      { err: error },
      config.rateLimitFailOpen
        ? 'Redis is unreachable: rate limits are NOT enforced until it is back (RATE_LIMIT_FAIL_OPEN=true)'
        : 'Redis is unreachable: rate-limited requests are answered 503 until it is back (RATE_LIMIT_FAIL_OPEN=false)',
    );
  };
  redis.on('error', lost);
  redis.on('close', () => lost());
  redis.on('ready', () => {
    if (!reachable) log.info('Redis is reachable again: rate limits are enforced');
    reachable = true;
  });
  // The first requests are limited too, unless Redis is not there at start (then the log says so).
  await new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, CONNECT_WAIT_MS);
    redis.once('ready', () => {
      clearTimeout(timer);
      resolve();
    });
  });
  return redis;
}
