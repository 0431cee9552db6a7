/**
 * Errors that mean "the database cannot be reached right now" rather than "this request is wrong":
 * the server is down, restarting, refusing connections or dropped ours. A request that meets one
 * answers 503 with `Retry-After`; a retry after the outage succeeds.
 */

/** Socket-level failures of reaching the server. */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/** SQLSTATEs of a server going away or turning connections down: shutdown, crash, start-up, too many connections. */
const SERVER_CODES = new Set(['57P01', '57P02', '57P03', '53300']);

/** What `pg` and its pool say when a connection broke or could not be had in time. */
const DRIVER_MESSAGES = [
  /^Connection terminated/,
  /timeout exceeded when trying to connect/,
  /Client has encountered a connection error and is not queryable/,
  /Client was closed and is not queryable/,
  /Cannot use a pool after calling end on the pool/,
];

export function isDatabaseUnavailable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (
    typeof code === 'string' &&
    (NETWORK_CODES.has(code) || SERVER_CODES.has(code) || code.startsWith('08'))
  )
    return true;
  if (DRIVER_MESSAGES.some((pattern) => pattern.test(error.message))) return true;
  // Connecting to a name with several addresses fails with one error per address.
  return error instanceof AggregateError && error.errors.some(isDatabaseUnavailable);
}
