import { blockedHost } from './address-policy.ts';
import { OutboundClient, type OutboundClientOptions, OutboundError } from './client.ts';

/**
 * Fetches a document a user named by URL (knowledge-base ingestion), through the SSRF-guarded client:
 * every hop of a redirect chain is a new request whose resolved address is checked at connect time,
 * at most `MAX_REDIRECTS` redirects are followed, the body stops at `maxBytes`, and the whole chain
 * shares one time-out. Only a 2xx answer is a document; everything else is a `DocumentFetchError`.
 */

export const MAX_REDIRECTS = 5;
const USER_AGENT = 'AgencyPlatform-KnowledgeBase/1.0';
const ACCEPT =
  'text/html, application/xhtml+xml, application/pdf, text/markdown, text/plain;q=0.9, */*;q=0.1';
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

export interface DocumentFetchOptions {
  /** `KB_FETCH_MAX_BYTES`. */
  maxBytes: number;
  /** `KB_FETCH_TIMEOUT_MS`, for the whole redirect chain. */
  timeoutMs: number;
  /** `OUTBOUND_ALLOW_PRIVATE`. */
  allowPrivate: boolean;
  /** Tests only: simulated DNS answers, and their own server let through the guard. */
  resolve?: OutboundClientOptions['resolve'];
  exemptAddresses?: string[];
}

export interface FetchedDocument {
  /** The URL the document was found at, after redirects. */
  finalUrl: string;
  /** Always 2xx. */
  status: number;
  /** As the server sent it, parameters included; null when it sent none. */
  contentType: string | null;
  body: Buffer;
}

export type DocumentFetchFailure =
  | 'invalid_url'
  | 'blocked_address'
  | 'too_many_redirects'
  | 'too_large'
  | 'timeout'
  | 'http_status'
  | 'network_error';

/** Why a document could not be fetched, in words fit for the document's `error`. */
export class DocumentFetchError extends Error {
  constructor(
    readonly reason: DocumentFetchFailure,
    message: string,
    readonly status: number | null = null,
  ) {
    super(message);
    this.name = 'DocumentFetchError';
  }
}

export async function fetchDocument(url: string, options: DocumentFetchOptions): Promise<FetchedDocument> {
  const client = new OutboundClient({
    allowPrivate: options.allowPrivate,
    timeoutMs: options.timeoutMs,
    userAgent: USER_AGENT,
    resolve: options.resolve,
    exemptAddresses: options.exemptAddresses,
  });
  const deadline = Date.now() + options.timeoutMs;
  try {
    let current = checkedUrl(url, options);
    for (let redirects = 0; ; redirects++) {
      const remaining = deadline - Date.now();
      if (remaining <= 0) throw timedOut(options.timeoutMs);
      const response = await client
        .request({
          url: current.href,
          headers: { accept: ACCEPT },
          maxResponseBytes: options.maxBytes,
          timeoutMs: remaining,
        })
        .catch((error: unknown) => {
          throw fromOutbound(error, current, options.timeoutMs);
        });
      if (REDIRECT_STATUSES.has(response.status)) {
        const location = single(response.headers.location);
        if (!location)
          throw new DocumentFetchError(
            'http_status',
            `${current.href} answered ${response.status} without a Location.`,
            response.status,
          );
        if (redirects === MAX_REDIRECTS)
          throw new DocumentFetchError(
            'too_many_redirects',
            `More than ${MAX_REDIRECTS} redirects; the last one, from ${current.href}, was not followed.`,
          );
        current = checkedUrl(new URL(location, current).href, options);
        continue;
      }
      if (response.status < 200 || response.status > 299)
        throw new DocumentFetchError(
          'http_status',
          `${current.href} answered HTTP ${response.status}.`,
          response.status,
        );
      if (response.truncated)
        throw new DocumentFetchError(
          'too_large',
          `The document is larger than the limit of ${options.maxBytes} bytes.`,
        );
      return {
        finalUrl: current.href,
        status: response.status,
        contentType: single(response.headers['content-type']) ?? null,
        body: response.body,
      };
    }
  } finally {
    await client.close();
  }
}

/**
 * An absolute http(s) URL without credentials; with the guard on, not a private address or a local name
 * (an early, readable refusal: the check that matters is the client's, on the address a name resolves to).
 */
function checkedUrl(value: string, options: DocumentFetchOptions): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new DocumentFetchError('invalid_url', `${value} is not an absolute URL.`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new DocumentFetchError(
      'invalid_url',
      `Only http and https URLs can be fetched, not ${url.protocol} (${url.href}).`,
    );
  if (url.username || url.password)
    throw new DocumentFetchError('invalid_url', 'URLs with credentials are not fetched.');
  const exempt = options.exemptAddresses?.includes(url.hostname.replace(/^\[|\]$/g, ''));
  const range = options.allowPrivate || exempt ? null : blockedHost(url.hostname);
  if (range)
    throw new DocumentFetchError(
      'blocked_address',
      `${url.href} points to a ${range} address; the service does not connect to it.`,
    );
  return url;
}

function fromOutbound(error: unknown, url: URL, timeoutMs: number): DocumentFetchError {
  if (!(error instanceof OutboundError))
    return new DocumentFetchError('network_error', `${url.href}: ${String(error)}`);
  if (error.errorClass === 'timeout') return timedOut(timeoutMs);
  if (error.errorClass === 'blocked_address')
    return new DocumentFetchError('blocked_address', `${url.href}: ${error.message}`);
  if (error.errorClass === 'invalid_url') return new DocumentFetchError('invalid_url', error.message);
  return new DocumentFetchError('network_error', `${url.href} could not be reached (${error.message}).`);
}

function timedOut(timeoutMs: number): DocumentFetchError {
  return new DocumentFetchError('timeout', `No complete answer within ${timeoutMs} ms.`);
}

function single(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
