import { OPERATIONS, type Resources } from './generated/resources.js';
import { PagePromise } from './pagination.js';
import { type OperationSpec, type RequestOptions, send, type TransportConfig } from './request.js';

export interface ClientOptions {
  /** An agency key (`gc_live_...`) or a client key (`cl_live_...`); required (undefined throws, so `process.env.X` fits). */
  apiKey: string | undefined;
  /** The API's base, ending in `/v1`. Default `http://localhost:3000/v1`. */
  baseUrl?: string | undefined;
  /** Retries of a failed call (network error, time-out, 429, 503, 5xx of an idempotent call). Default 2. */
  maxRetries?: number | undefined;
  /** Time-out of one attempt, in milliseconds. Default 60 000. */
  timeoutMs?: number | undefined;
  /** The `fetch` to use; the platform's by default. */
  fetch?: typeof fetch | undefined;
}

const DEFAULT_BASE_URL = 'http://localhost:3000/v1';
const DEFAULT_MAX_RETRIES = 2;
const DEFAULT_TIMEOUT_MS = 60_000;

type Args = unknown[];
type Params = Record<string, unknown> | undefined;

function pathOf(operation: OperationSpec, args: Args): string {
  let path = operation.path;
  operation.pathParams.forEach((name, i) => {
    const value = args[i];
    if (typeof value !== 'string' || value === '')
      throw new TypeError(
        `${operation.namespace.join('.')}.${operation.verb}: ${name} must be a non-empty string`,
      );
    path = path.replace(`{${name}}`, encodeURIComponent(value));
  });
  return path;
}

function call(config: TransportConfig, operation: OperationSpec, args: Args): unknown {
  const path = pathOf(operation, args);
  const rest = args.slice(operation.pathParams.length);
  const takesParams = operation.body || operation.query;
  const params = (takesParams ? rest[0] : undefined) as Params;
  const options = ((takesParams ? rest[1] : rest[0]) ?? {}) as RequestOptions<Record<string, unknown>>;
  const body = operation.body ? (params ?? {}) : undefined;
  const query = operation.body ? options.query : params;
  if (operation.result === 'page') {
    return new PagePromise(async (pageToken) => {
      const pageQuery = pageToken ? { ...query, page_token: pageToken } : query;
      return (await send(config, operation, path, pageQuery, body, options)).body as never;
    });
  }
  return send(config, operation, path, query, body, options).then((response) => {
    if (operation.result === 'none') return undefined;
    if (operation.result === 'resource' && operation.key)
      return (response.body as Record<string, unknown>)[operation.key];
    return response.body;
  });
}

/** Builds the resource namespaces of a client from the operation table. */
function resources(config: TransportConfig): Resources {
  type Namespace = { [name: string]: Namespace };
  const root: Namespace = {};
  for (const operation of OPERATIONS) {
    let node = root;
    for (const part of operation.namespace) node = node[part] ??= {};
    (node as Record<string, unknown>)[operation.verb] = (...args: Args) => call(config, operation, args);
  }
  return root as unknown as Resources;
}

// The class carries the generated namespaces (crm, sms, webhooks, ...), declared by `Resources`.
export interface AgencyPlatform extends Resources {}

/**
 * The Agency Platform API client.
 *
 *   const client = new AgencyPlatform({ apiKey: process.env.AGENCY_API_KEY });
 *   const contact = await client.crm.contacts.create({ email: 'ana@example.com' });
 */
// biome-ignore lint/suspicious/noUnsafeDeclarationMerging: see the interface above
export class AgencyPlatform {
  readonly #options: ClientOptions;
  readonly #clientId: string | null;

  constructor(options: ClientOptions, clientId: string | null = null) {
    if (!options?.apiKey)
      throw new TypeError('AgencyPlatform: apiKey is required (an agency or client API key)');
    this.#options = options;
    this.#clientId = clientId;
    const config: TransportConfig = {
      apiKey: options.apiKey,
      baseUrl: (options.baseUrl ?? DEFAULT_BASE_URL).replace(/\/+$/, ''),
      maxRetries: options.maxRetries ?? DEFAULT_MAX_RETRIES,
      timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      clientId,
      fetch: options.fetch ?? globalThis.fetch.bind(globalThis),
    };
    Object.assign(this, resources(config));
  }

  /** The client whose calls act as one of the agency's clients (`X-Service-Client-Id`). */
  forClient(clientId: string): AgencyPlatform {
    if (!clientId) throw new TypeError('forClient: clientId is required');
    return new AgencyPlatform(this.#options, clientId);
  }

  /** The client id this client acts as, or null for the key's own tenant. */
  get clientId(): string | null {
    return this.#clientId;
  }
}
