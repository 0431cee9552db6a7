import dns, { type LookupAddress } from 'node:dns';
import net from 'node:net';
import { Agent, buildConnector, type Dispatcher } from 'undici';
import { blockedRange } from './address-policy.ts';

/**
 * The one HTTP client for requests the service makes on a user's behalf (webhook deliveries, URL
 * ingestion). It refuses private and internal addresses at connect time, on the address the name
 * actually resolved to, so a DNS answer that changes after validation (rebinding) cannot reach an
 * internal service. Redirects are never followed: a 3xx is returned as it is.
 */

export type OutboundErrorClass = 'blocked_address' | 'timeout' | 'network_error' | 'invalid_url';

export class OutboundError extends Error {
  constructor(
    readonly errorClass: OutboundErrorClass,
    message: string,
  ) {
    super(message);
    this.name = 'OutboundError';
  }
}

type LookupCallback = (error: Error | null, address: string | LookupAddress[], family?: number) => void;
export type LookupFunction = (
  hostname: string,
  options: dns.LookupOptions,
  callback: (error: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void,
) => void;

export interface OutboundClientOptions {
  /** Connect to private and loopback addresses too (OUTBOUND_ALLOW_PRIVATE, for tests and closed networks). */
  allowPrivate: boolean;
  /** Whole-request time-out: connect, headers and body. */
  timeoutMs: number;
  userAgent: string;
  /** Resolves names to every address (`all: true`); tests replace it to simulate DNS answers. */
  resolve?: LookupFunction;
  /** Addresses connected to though private: a test's own server, while every other private address stays refused. */
  exemptAddresses?: string[];
}

export interface OutboundRequest {
  url: string;
  method?: Dispatcher.HttpMethod;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** Response bytes kept; the rest is drained (to keep the connection) or the connection is dropped. */
  maxResponseBytes?: number;
  timeoutMs?: number;
}

export interface OutboundResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
  truncated: boolean;
}

/** Bytes read past `maxResponseBytes` to keep a keep-alive connection reusable before giving up on it. */
const DRAIN_BYTES = 64 * 1024;

const systemResolve: LookupFunction = (hostname, options, callback) =>
  dns.lookup(hostname, { ...options, all: true }, callback);

export class OutboundClient {
  private readonly agent: Agent;

  constructor(private readonly options: OutboundClientOptions) {
    const exempt = new Set(options.exemptAddresses);
    const refused = (address: string) =>
      options.allowPrivate || exempt.has(address) ? null : blockedRange(address);
    const connect = buildConnector({
      timeout: options.timeoutMs,
      lookup: guardedLookup(options.resolve ?? systemResolve, refused),
    });
    this.agent = new Agent({
      // Names are checked in the lookup; an IP literal never goes through it, so it is checked here.
      connect: (connectOptions, callback) => {
        const host = connectOptions.hostname.replace(/^\[|\]$/g, '');
        const range = net.isIP(host) ? refused(host) : null;
        if (range) return callback(blockedError(host, host, range), null);
        connect(connectOptions, callback);
      },
      keepAliveTimeout: 10_000,
    });
  }

  async request(request: OutboundRequest): Promise<OutboundResponse> {
    const url = parseUrl(request.url);
    const timeoutMs = request.timeoutMs ?? this.options.timeoutMs;
    try {
      const response = await this.agent.request({
        origin: url.origin,
        path: `${url.pathname}${url.search}`,
        method: request.method ?? 'GET',
        headers: { 'user-agent': this.options.userAgent, ...request.headers },
        body: request.body,
        signal: AbortSignal.timeout(timeoutMs),
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
      });
      const { body, truncated } = await readLimited(response.body, request.maxResponseBytes ?? 1_048_576);
      return { status: response.statusCode, headers: response.headers, body, truncated };
    } catch (error) {
      throw withoutResolvedAddresses(toOutboundError(error, timeoutMs), url.hostname);
    }
  }

  close(): Promise<void> {
    return this.agent.close();
  }
}

function parseUrl(value: string): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new OutboundError('invalid_url', `${value} is not an absolute URL.`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    throw new OutboundError('invalid_url', `Only http and https URLs can be fetched, not ${url.protocol}`);
  return url;
}

/** A lookup for net/tls.connect that fails when any resolved address is refused. */
function guardedLookup(resolve: LookupFunction, refused: (address: string) => string | null) {
  return (hostname: string, options: dns.LookupOptions, callback: LookupCallback): void => {
    resolve(hostname, options, (error, addresses) => {
      if (error) return callback(error, []);
      if (!addresses.length) return callback(Object.assign(new Error(`${hostname} has no address`)), []);
      for (const { address } of addresses) {
        const range = refused(address);
        if (range) return callback(blockedError(hostname, address, range), []);
      }
      if (options.all) callback(null, addresses);
      else callback(null, addresses[0].address, addresses[0].family);
    });
  };
}

/**
 * The message names what the user wrote (the host of their URL), never the address a name resolved
 * to: it is stored in logs a tenant reads (the webhook delivery log), and an internal address is
 * the network's, not theirs to map.
 */
function blockedError(host: string, address: string, range: string): OutboundError {
  return new OutboundError(
    'blocked_address',
    host === address
      ? `${address} is a ${range} address; the service does not connect to it.`
      : `${host} resolves to a ${range} address; the service does not connect to it.`,
  );
}

/**
 * An error whose message carries an IP address the URL did not (`connect ECONNREFUSED 10.0.0.5:443`,
 * a resolved address in a TLS or socket error) has it replaced: the message stays useful (the code,
 * the reason), the internal address stays out of anything a tenant reads.
 */
export function withoutResolvedAddresses(error: OutboundError, hostname: string): OutboundError {
  const own = hostname.replace(/^\[|\]$/g, '');
  const message = error.message.replace(/\[?[0-9a-fA-F:.]*[.:][0-9a-fA-F:.]*\]?(?::\d+)?/g, (token) => {
    const address = [token, token.replace(/:\d+$/, '')]
      .map((candidate) => candidate.replace(/^\[|\]$/g, ''))
      .find((candidate) => net.isIP(candidate));
    return address && address !== own ? 'the resolved address' : token;
  });
  return message === error.message ? error : new OutboundError(error.errorClass, message);
}

async function readLimited(
  body: AsyncIterable<Buffer> & { destroy(): unknown },
  maxBytes: number,
): Promise<{ body: Buffer; truncated: boolean }> {
  const chunks: Buffer[] = [];
  let kept = 0;
  let seen = 0;
  for await (const chunk of body) {
    seen += chunk.length;
    if (kept < maxBytes) {
      const part = chunk.subarray(0, maxBytes - kept);
      chunks.push(part);
      kept += part.length;
    }
    if (seen > maxBytes + DRAIN_BYTES) {
      body.destroy();
      break;
    }
  }
  return { body: Buffer.concat(chunks), truncated: seen > kept };
}

const TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

function toOutboundError(error: unknown, timeoutMs: number): OutboundError {
  if (error instanceof OutboundError) return error;
  const { name, code, message } = error as { name?: string; code?: string; message?: string };
  if (name === 'TimeoutError' || (code && TIMEOUT_CODES.has(code)))
    return new OutboundError('timeout', `No complete response within ${timeoutMs} ms.`);
  return new OutboundError('network_error', code ? `${code}: ${message}` : (message ?? String(error)));
}
