import type { FastifyRequest } from 'fastify';
import type { Redis } from 'ioredis';
import { ApiError } from '../http/errors.ts';
import { limitedAddress } from '../http/rate-limit.ts';
import { slidingWindowCounter } from '../http/sliding-window.ts';
import type { WindowState } from '../http/window-counter.ts';

const MINUTE_MS = 60_000;

/**
 * A per-IP limit on failed authentication: a caller whose requests failed to
 * authenticate `perMinute` times within a minute (a missing, malformed, unknown, revoked or expired
 * key) is answered 429 `rate_limited` with `Retry-After` before its next key is even looked up,
 * until its failures leave the sliding window. Guessing keys from one address is throttled; the
 * counters are shared through Redis when it is configured, like the per-key limits.
 *
 * A valid key from that address is refused too while the address is over the limit: were it
 * answered, a throttled guesser would learn which of its guesses is a key.
 */
export function failedAuthLimit(
  redis: Redis | null,
  perMinute: number,
  options: { prefix?: string; subject?: string } = {},
) {
  const subject = options.subject ?? 'from this address';
  const counter = slidingWindowCounter(redis, options.prefix ?? 'rl:authfail:');
  const refusal = (state: WindowState) => {
    const seconds = Math.max(1, Math.ceil(state.ttl / 1000));
    return new ApiError(
      429,
      'rate_limited',
      `Too many failed authentications ${subject} (limit ${perMinute} per minute); retry in ${seconds} s.`,
      { limit: perMinute, retry_after_seconds: seconds },
      { 'retry-after': String(seconds) },
    );
  };

  /**
   * Addresses over the limit, and until when, as this process learned from its own counting: the
   * check before authentication reads this map, so a request that authenticates costs no round trip
   * to Redis. Another process learns of an address at its next failure from it.
   */
  const blocked = new Map<string, number>();

  /** Runs `authenticate`; counts its 401 against `caller`, and refuses a caller over the limit. */
  async function guardKey<T>(caller: string, authenticate: () => Promise<T>): Promise<T> {
    const until = blocked.get(caller);
    if (until !== undefined) {
      if (until > Date.now()) throw refusal({ current: perMinute + 1, ttl: until - Date.now() });
      blocked.delete(caller);
    }
    try {
      return await authenticate();
    } catch (error) {
      if (error instanceof ApiError && error.statusCode === 401) {
        // A Redis outage leaves the limit unenforced, as for the per-key limits (RATE_LIMIT_FAIL_OPEN).
        const after = await Promise.resolve(counter.count(caller, MINUTE_MS, perMinute)).catch(() => null);
        if (after && after.current > perMinute) {
          if (blocked.size >= MAX_BLOCKED) blocked.delete(blocked.keys().next().value as string);
          blocked.set(caller, Date.now() + after.ttl);
          throw refusal(after);
        }
      }
      throw error;
    }
  }

  return {
    guardKey,
    /** Runs `authenticate`; counts its 401 against the caller's address, and refuses a caller over the limit. */
    guard: <T>(request: FastifyRequest, authenticate: () => Promise<T>): Promise<T> =>
      guardKey(limitedAddress(request.ip), authenticate),
  };
}

/** Addresses remembered as blocked in one process; the oldest is forgotten past it. */
const MAX_BLOCKED = 100_000;
