import { ConnectionError, errorFromResponse, retryAfterMs } from './errors.js';

/** One operation of the API, as the generated table describes it (sdk/src/generated/resources.ts). */
export interface OperationSpec {
  readonly id: string;
  readonly method: string;
  /** The path below the base URL, with `{param}` placeholders. */
  readonly path: string;
  readonly namespace: readonly string[];
  readonly verb: string;
  readonly pathParams: readonly string[];
  readonly body: boolean;
  readonly query: boolean;
  /** The operation takes an `Idempotency-Key`: the client sends one, so retrying it is safe. */
  readonly idempotencyKey: boolean;
  readonly result: 'page' | 'resource' | 'envelope' | 'none';
  readonly key?: string;
}

/** Per-call options, the last argument of every method. */
export interface RequestOptions<Q = never> {
  /** Sent as `Idempotency-Key`; by default a creating POST gets a fresh one, reused across its retries. */
  idempotencyKey?: string | undefined;
  /** Aborts the call, retries included. */
  signal?: AbortSignal | undefined;
  /** Overrides the client's `maxRetries` for this call. */
  maxRetries?: number | undefined;
  /** Overrides the client's `timeoutMs` (per attempt) for this call. */
  timeoutMs?: number | undefined;
  /** The query of an operation that takes a body as well. */
  query?: Q | undefined;
}

export interface TransportConfig {
  apiKey: string;
  baseUrl: string;
  maxRetries: number;
  timeoutMs: number;
  clientId: string | null;
  fetch: typeof fetch;
}

export interface ApiResponse {
  status: number;
  headers: Headers;
  body: unknown;
}

const RETRY_BASE_MS = 500;
const RETRY_CAP_MS = 8_000;
/** A `Retry-After` longer than this is not waited for: the error goes to the caller, who can plan. */
const RETRY_AFTER_CAP_MS = 60_000;
const SAFE_METHODS = new Set(['GET', 'HEAD', 'PUT', 'DELETE', 'OPTIONS']);

/** Capped exponential backoff with jitter: 0.5 s, 1 s, 2 s ... up to 8 s, each less up to a quarter. */
function backoffMs(attempt: number): number {
  const ceiling = Math.min(RETRY_CAP_MS, RETRY_BASE_MS * 2 ** attempt);
  return ceiling * (1 - Math.random() * 0.25);
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

function appendQuery(search: URLSearchParams, query: Record<string, unknown>): void {
  for (const [name, value] of Object.entries(query)) {
    if (value === undefined || value === null) continue;
    for (const one of Array.isArray(value) ? value : [value]) search.append(name, String(one));
  }
}

async function readBody(response: Response): Promise<unknown> {
  if (response.status === 204) return undefined;
  const text = await response.text();
  if (!text) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** Whether a failed response may be sent again: 429 and 503 always, other 5xx when the request is idempotent. */
function retryable(status: number, body: unknown, idempotent: boolean): boolean {
  if (status === 429 || status === 503) return true;
  if (status === 409) return (body as { error?: string } | undefined)?.error === 'idempotency_in_progress';
  return status >= 500 && idempotent;
}

/**
 * Sends one call, retrying network errors, time-outs, 429 and 503 (honouring `Retry-After`), and other
 * 5xx when the request is idempotent. Returns the successful response; throws an `ApiError` otherwise.
 */
export async function send(
  config: TransportConfig,
  operation: Pick<OperationSpec, 'method' | 'idempotencyKey'>,
  path: string,
  query: Record<string, unknown> | undefined,
  body: unknown,
  options: RequestOptions<unknown> = {},
): Promise<ApiResponse> {
  let url = `${config.baseUrl}${path}`;
  if (query) {
    const search = new URLSearchParams();
    appendQuery(search, query);
    const encoded = search.toString();
    if (encoded) url += `?${encoded}`;
  }
  const headers: Record<string, string> = {
    authorization: `Bearer ${config.apiKey}`,
    accept: 'application/json',
  };
  if (config.clientId) headers['x-service-client-id'] = config.clientId;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const idempotencyKey =
    options.idempotencyKey ?? (operation.idempotencyKey ? globalThis.crypto.randomUUID() : undefined);
  if (idempotencyKey !== undefined) headers['idempotency-key'] = idempotencyKey;
  const idempotent = SAFE_METHODS.has(operation.method) || idempotencyKey !== undefined;
  const payload = body === undefined ? undefined : JSON.stringify(body);
  const maxRetries = options.maxRetries ?? config.maxRetries;
  const timeoutMs = options.timeoutMs ?? config.timeoutMs;

  for (let attempt = 0; ; attempt++) {
    if (options.signal?.aborted) throw options.signal.reason;
    // A controller and a timer per attempt: AbortSignal.timeout costs ~30 µs a call in Node 20.
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort(new DOMException(`timed out after ${timeoutMs} ms`, 'TimeoutError'));
    }, timeoutMs);
    const abort = () => controller.abort(options.signal?.reason);
    options.signal?.addEventListener('abort', abort, { once: true });
    let response: Response;
    let parsed: unknown;
    try {
      response = await config.fetch(url, {
        method: operation.method,
        headers,
        ...(payload !== undefined ? { body: payload } : {}),
        signal: controller.signal,
      });
      parsed = await readBody(response);
    } catch (error) {
      if (options.signal?.aborted) throw options.signal.reason;
      if (attempt < maxRetries) {
        await sleep(backoffMs(attempt), options.signal);
        continue;
      }
      const what = timedOut ? `timed out after ${timeoutMs} ms` : 'failed';
      throw new ConnectionError(`${operation.method} ${path} ${what} (${attempt + 1} attempts)`, {
        cause: error,
      });
    } finally {
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', abort);
    }
    if (response.ok) return { status: response.status, headers: response.headers, body: parsed };
    if (attempt < maxRetries && retryable(response.status, parsed, idempotent)) {
      const asked = retryAfterMs(response.headers);
      if (asked === null || asked <= RETRY_AFTER_CAP_MS) {
        await sleep(asked ?? backoffMs(attempt), options.signal);
        continue;
      }
    }
    throw errorFromResponse(response.status, parsed, response.headers);
  }
}
