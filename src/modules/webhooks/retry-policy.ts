/**
 * What happens after an attempt: success, another attempt on the schedule, or none.
 * `WEBHOOK_RETRY_SCHEDULE` lists the delay before each attempt, counted from the previous one (the
 * first from the event); its length is the number of attempts.
 */

export type AttemptResult =
  | { kind: 'response'; status: number; retryAfterMs: number | null }
  | { kind: 'error'; errorClass: string };

/** 5xx, 408, 429, a time-out or a network error may pass on a later try; any other failure will not. */
export function isRetryable(result: AttemptResult): boolean {
  if (result.kind === 'error')
    return result.errorClass === 'timeout' || result.errorClass === 'network_error';
  return result.status >= 500 || result.status === 408 || result.status === 429;
}

export function isSuccess(result: AttemptResult): boolean {
  return result.kind === 'response' && result.status >= 200 && result.status < 300;
}

const JITTER = 0.1;

/** A schedule delay with up to ±10 % jitter, so retries of many deliveries do not arrive in one burst. */
export function jittered(delayMs: number, random: () => number = Math.random): number {
  return Math.round(delayMs * (1 - JITTER + 2 * JITTER * random()));
}

/**
 * The delay before the next scheduled attempt after `attemptsMade` attempts of the schedule, or null
 * when the schedule is used up. A `Retry-After` shorter than the slot is honoured; the slot is the
 * upper bound, so a receiver cannot push retries past the schedule.
 */
export function nextDelayMs(
  schedule: number[],
  attemptsMade: number,
  retryAfterMs: number | null,
  random: () => number = Math.random,
): number | null {
  if (attemptsMade >= schedule.length) return null;
  const slot = jittered(schedule[attemptsMade], random);
  return retryAfterMs === null ? slot : Math.min(retryAfterMs, slot);
}

/** `Retry-After` as delay-seconds or an HTTP date, in milliseconds from `now`; null when absent or unreadable. */
export function parseRetryAfter(header: string | string[] | undefined, now = Date.now()): number | null {
  const value = Array.isArray(header) ? header[0] : header;
  if (!value) return null;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? null : Math.max(0, date - now);
}
