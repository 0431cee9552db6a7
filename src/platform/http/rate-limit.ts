import { normalizeIP } from '@fastify/rate-limit';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Config } from '../../config.ts';
import { type ApiError, errors } from './errors.ts';
import { fixedWindowCounter } from './fixed-window.ts';
import { slidingWindowCounter } from './sliding-window.ts';
import type { WindowState } from './window-counter.ts';

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
  /** Count a sliding window (see sliding-window.ts) instead of fixed windows (fixed-window.ts). */
  sliding?: boolean;
}

/**
 * Rate limits for every route in `scope`: `X-RateLimit-Limit/Remaining/Reset` on every response,
 * 429 `rate_limited` with `Retry-After` past the limit. Used for API keys, the docs API and the feed.
 *
 * One callback-style hook, answered in the same tick when the counters are in this process: it runs
 * on every request of the API, so it allocates no promise there.
 */
export function installRateLimit(scope: FastifyInstance, options: LimitOptions): void {
  const { redis, keyOf, maxOf } = options;
  const windowMs = options.windowMs ?? MINUTE_MS;
  const counter = (options.sliding ? slidingWindowCounter : fixedWindowCounter)(redis, options.nameSpace);
  // RATE_LIMIT_FAIL_OPEN=false: no request goes unlimited while the shared counters are out of reach.
  const refuseWithoutRedis = redis !== null && !scope.platform.config.rateLimitFailOpen;

  scope.addHook('onRequest', (request, reply, done) => {
    if (refuseWithoutRedis && redis?.status !== 'ready') {
      done(
        errors.unavailable(
          'Rate limits cannot be checked right now; retry shortly.',
          REDIS_RETRY_AFTER_SECONDS,
        ),
      );
      return;
    }
    const max = maxOf(request);
    const counted = counter.count(keyOf(request), windowMs, max);
    if (!(counted instanceof Promise)) {
      done(answer(reply, max, counted));
      return;
    }
    counted.then(
      (state) => done(answer(reply, max, state)),
      // A Redis outage fails open (unless refused above): runtime.ts logs it and /readyz reports it.
      () => done(),
    );
  });
}

/** Sets the headers of the caller's window; the 429 to answer when it is past the limit. */
function answer(reply: FastifyReply, max: number, state: WindowState): ApiError | undefined {
  const seconds = Math.ceil(state.ttl / 1000);
  const refused = state.current > max;
  reply.header('x-ratelimit-limit', max);
  reply.header('x-ratelimit-remaining', refused ? 0 : max - state.current);
  reply.header('x-ratelimit-reset', seconds);
  if (!refused) return undefined;
  const retryAfter = Math.max(1, seconds);
  reply.header('retry-after', retryAfter);
  return errors.rateLimited(max, retryAfter);
}

/**
 * The caller's address as per-address limits count it: an IPv6 address stands for its /64 (one
 * household or server usually holds a whole /64, and could otherwise take a fresh budget per address).
 */
export function limitedAddress(ip: string): string {
  return normalizeIP(ip);
}

/** The per-key limit of authenticated routes. */
export function installKeyRateLimit(scope: FastifyInstance, redis: Redis | null): void {
  installRateLimit(scope, {
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
