/**
 * Where an operation of the OpenAPI document sits in the SDK (`@agency-platform/sdk`): the path's nouns are
 * namespaces, the last part of the operationId is the verb, in Stripe's words. One rule, read by the SDK
 * generator (scripts/sdk-generate.ts) and by the reference page's code samples, so both always agree.
 *
 *   GET  /v1/crm/contacts/{id}           crm.contacts.get        → crm.contacts.retrieve(id)
 *   POST /v1/sms/messages                sms.send                → sms.messages.send(body)
 *   POST /v1/webhooks/{id}/test          webhooks.test           → webhooks.test(id)
 *   PUT  /v1/sdr/settings                sdr.settings.put        → sdr.settings.update(body)
 */
export interface SdkOperation {
  operationId: string;
  method: string;
  path: string;
}

export interface SdkName {
  /** The namespaces from the client down, `['crm', 'contacts']`. */
  namespace: string[];
  verb: string;
  /** The path's parameters in order: the method's leading arguments. */
  pathParams: string[];
}

const VERBS: Record<string, string> = { get: 'retrieve', put: 'update' };

/** `api-keys` → `apiKeys`, `contact_unenroll` → `contactUnenroll`. */
export function camelCase(word: string): string {
  return word.replace(/[-_.:]+([a-zA-Z0-9])/g, (_, next: string) => next.toUpperCase());
}

export function sdkName(operation: SdkOperation): SdkName {
  const segments = operation.path
    .replace(/^\/v1\//, '')
    .split('/')
    .filter(Boolean);
  const pathParams = segments.filter((s) => s.startsWith('{')).map((s) => s.slice(1, -1));
  const namespace = segments.filter((s) => !s.startsWith('{')).map(camelCase);
  const last = operation.operationId.split('.').pop() ?? operation.method.toLowerCase();
  const verb = camelCase(VERBS[last] ?? last);
  // An action named after its own path segment (`/webhooks/{id}/test`) is a method, not a namespace.
  if (namespace.at(-1) === verb) namespace.pop();
  return { namespace, verb, pathParams };
}

/** `client.crm.contacts.retrieve` */
export function sdkCallPath(operation: SdkOperation, root = 'client'): string {
  const { namespace, verb } = sdkName(operation);
  return [root, ...namespace, verb].join('.');
}

type Schema = { type?: string; properties?: Record<string, unknown>; required?: string[] };

/** What a method returns, read from the operation's success responses. */
export type SdkResult =
  /** `{data, next_page_token, ...}` with a `page_token` query: a page, iterable over every item of every page */
  | { kind: 'page' }
  /** `{contact: {...}}`: the resource itself */
  | { kind: 'resource'; key: string }
  /** an envelope that carries more than one resource (`{contact, created}`): returned whole */
  | { kind: 'envelope' }
  /** 204, or no success response at all */
  | { kind: 'none' };

export interface OperationObject {
  parameters?: { in: string; name: string; required?: boolean }[];
  responses?: Record<string, { content?: Record<string, { schema?: unknown }> }>;
}

export function sdkResult(operation: OperationObject): SdkResult {
  const schemas = Object.entries(operation.responses ?? {})
    .filter(([status]) => status.startsWith('2'))
    .map(([, response]) => response.content?.['application/json']?.schema as Schema | undefined)
    .filter((schema): schema is Schema => schema !== undefined);
  if (schemas.length === 0) return { kind: 'none' };
  const keys = schemas.map((schema) => Object.keys(schema.properties ?? {}));
  const paged = operation.parameters?.some((p) => p.in === 'query' && p.name === 'page_token');
  if (paged && keys.every((k) => k.includes('data') && k.includes('next_page_token')))
    return { kind: 'page' };
  const [first] = keys;
  const single = first?.length === 1 && keys.every((k) => k.length === 1 && k[0] === first[0]);
  return single && first[0] ? { kind: 'resource', key: first[0] } : { kind: 'envelope' };
}
