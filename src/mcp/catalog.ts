import type { RouteEntry } from '../platform/http/route-table.ts';

/**
 * The MCP tool catalog, derived from Fastify's route table: every REST operation becomes a tool
 * named after its `operationId`, with the route's path, query and body schemas merged into one input
 * schema. A route added to the API becomes a tool with no MCP code written. The route table, not the
 * OpenAPI document, is the source, so nothing in the document (its `servers`) can change the tools.
 */

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

type JsonSchema = Record<string, unknown>;

/** Where a tool argument goes in the REST request. */
export type ArgumentTarget =
  | { in: 'path' | 'query'; name: string }
  | { in: 'header'; name: string }
  | { in: 'body-field'; name: string }
  | { in: 'body' };

export interface ToolAnnotations {
  title: string;
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
}

export interface ToolDefinition {
  /** The dotted name, which is the `operationId`. */
  name: string;
  /** The same name with `_` for `.`, for clients that refuse dots. */
  underscoreName: string;
  /** The first segment of the name: `crm`, `docs`, `webhooks`, … */
  toolset: string;
  operationId: string;
  method: HttpMethod;
  /** The OpenAPI path, with `{param}` placeholders. */
  path: string;
  title: string;
  description: string;
  inputSchema: JsonSchema & { type: 'object' };
  annotations: ToolAnnotations;
  arguments: ReadonlyMap<string, ArgumentTarget>;
  /** Whether the operation takes a JSON body, so unknown arguments go there (and fail its validation). */
  hasBody: boolean;
}

export const MAX_TOOL_NAME_LENGTH = 64;
export const IDEMPOTENCY_ARGUMENT = 'idempotency_key';
/** The argument that carries the whole request body when it cannot be merged with the parameters. */
export const BODY_ARGUMENT = 'body';

const METHODS: readonly HttpMethod[] = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];

/** Operations that are not tools: the MCP endpoint itself, the OpenAPI document, anything outside `/v1`. */
export function isExcludedPath(path: string): boolean {
  return !path.startsWith('/v1/') || path === '/v1/mcp' || path === '/v1/openapi.json';
}

/** A request parameter, as the route's schemas give it. */
interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header';
  required: boolean;
  schema: JsonSchema;
}

/** What a tool is made of: one route's method, path and request schemas. */
interface Operation {
  operationId: string;
  summary?: string;
  description?: string;
  parameters: Parameter[];
  body?: JsonSchema;
}

/**
 * Every tool of the API, sorted by name so the order is stable. `sharedSchemas` are those added with
 * `app.addSchema()`, which a route schema may reference as `Name#`.
 */
export function buildCatalog(
  routes: readonly RouteEntry[],
  sharedSchemas: Record<string, JsonSchema> = {},
): ToolDefinition[] {
  const resolve = refResolver(sharedSchemas);
  const tools: ToolDefinition[] = [];
  for (const route of routes) {
    const method = route.method as HttpMethod;
    const path = route.url.replace(/:(\w+)/g, '{$1}');
    if (!METHODS.includes(method) || isExcludedPath(path) || route.schema?.hide) continue;
    const operation = operationOf(route);
    if (operation) tools.push(toolOf(path, method, operation, resolve));
  }
  return tools.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

function operationOf(route: RouteEntry): Operation | null {
  const { schema } = route;
  if (!schema?.operationId) return null;
  const parameters = [
    ...parametersOf(schema.params as JsonSchema | undefined, 'path'),
    ...parametersOf(schema.querystring as JsonSchema | undefined, 'query'),
    ...parametersOf(schema.headers as JsonSchema | undefined, 'header'),
  ];
  return {
    operationId: schema.operationId,
    summary: schema.summary,
    description: schema.description,
    parameters,
    body: schema.body as JsonSchema | undefined,
  };
}

function parametersOf(object: JsonSchema | undefined, where: Parameter['in']): Parameter[] {
  const properties = (object?.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set((object?.required as string[] | undefined) ?? []);
  return Object.entries(properties).map(([name, schema]) => ({
    name,
    in: where,
    required: where === 'path' || required.has(name),
    schema,
  }));
}

/** The underscore form of a tool name: `crm.contacts.list` → `crm_contacts_list`. */
export function underscoreName(name: string): string {
  return name.replaceAll('.', '_');
}

function toolOf(
  path: string,
  method: HttpMethod,
  operation: Operation,
  resolve: (schema: JsonSchema | undefined) => JsonSchema,
): ToolDefinition {
  const name = operation.operationId;
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  const targets = new Map<string, ArgumentTarget>();

  for (const parameter of operation.parameters) {
    const argument = parameter.in === 'header' ? headerArgument(parameter.name) : parameter.name;
    if (argument === null) continue;
    properties[argument] = resolve(parameter.schema);
    if (parameter.required) required.push(argument);
    targets.set(
      argument,
      parameter.in === 'header'
        ? { in: 'header', name: parameter.name }
        : { in: parameter.in, name: parameter.name },
    );
  }

  const bodySchema = operation.body;
  if (bodySchema) {
    const body = resolve(bodySchema);
    const fields = mergeableFields(body);
    if (fields && !Object.keys(fields).some((field) => targets.has(field))) {
      for (const [field, schema] of Object.entries(fields)) {
        properties[field] = schema;
        targets.set(field, { in: 'body-field', name: field });
      }
      for (const field of (body.required as string[] | undefined) ?? []) required.push(field);
    } else {
      properties[BODY_ARGUMENT] = { ...body, description: body.description ?? 'The request body.' };
      targets.set(BODY_ARGUMENT, { in: 'body' });
      // Fastify wants a body wherever the route has a body schema.
      required.push(BODY_ARGUMENT);
    }
  }

  if (method === 'POST' && !targets.has(IDEMPOTENCY_ARGUMENT)) {
    properties[IDEMPOTENCY_ARGUMENT] = {
      type: 'string',
      minLength: 1,
      maxLength: 255,
      description:
        'Makes the call safe to retry: a repeat with the same key within 24 hours returns the first result.',
    };
    targets.set(IDEMPOTENCY_ARGUMENT, { in: 'header', name: 'idempotency-key' });
  }

  const title = operation.summary ?? name;
  const inputSchema: JsonSchema & { type: 'object' } = {
    type: 'object',
    properties,
    ...(required.length ? { required: [...new Set(required)] } : {}),
    additionalProperties: false,
  };
  return {
    name,
    underscoreName: underscoreName(name),
    toolset: name.split('.')[0],
    operationId: name,
    method,
    path,
    title,
    description: describe(method, path, operation, targets),
    inputSchema,
    annotations: {
      title,
      readOnlyHint: method === 'GET',
      destructiveHint: method === 'DELETE',
      idempotentHint: method === 'GET' || method === 'PUT' || method === 'DELETE',
    },
    arguments: targets,
    hasBody: bodySchema !== undefined,
  };
}

/** `Idempotency-Key` → `idempotency_key`; headers every call carries from the connection are no arguments. */
function headerArgument(header: string): string | null {
  const lower = header.toLowerCase();
  if (lower === 'authorization' || lower === 'x-service-client-id') return null;
  return lower.replaceAll('-', '_');
}

/** The body's properties when they can sit beside the parameters: a plain object schema. */
function mergeableFields(body: JsonSchema): Record<string, JsonSchema> | null {
  if (body.type !== 'object' || !body.properties) return null;
  if (body.anyOf || body.oneOf || body.allOf || body.not || body.if) return null;
  return body.properties as Record<string, JsonSchema>;
}

function describe(
  method: HttpMethod,
  path: string,
  operation: Operation,
  targets: ReadonlyMap<string, ArgumentTarget>,
): string {
  const lines = [sentence(operation.summary ?? operation.operationId ?? '')];
  if (operation.description) lines.push(operation.description);
  if (targets.has('page_token')) {
    lines.push('Paginated: pass next_page_token from the result as page_token to get the next page.');
  }
  lines.push(`REST: ${method} ${path}`);
  return lines.join('\n\n');
}

function sentence(text: string): string {
  return /[.!?]$/.test(text) ? text : `${text}.`;
}

/**
 * A standalone copy of a route schema: references to shared schemas (`Name#`) inlined, `$id` and
 * TypeBox's symbol keys dropped, so every input schema stands alone and a shared schema used twice
 * does not declare the same id twice.
 */
function refResolver(shared: Record<string, JsonSchema>): (schema: JsonSchema | undefined) => JsonSchema {
  const inline = (value: unknown, seen: readonly string[]): unknown => {
    if (Array.isArray(value)) return value.map((item) => inline(item, seen));
    if (value === null || typeof value !== 'object') return value;
    const object = value as JsonSchema;
    const ref = object.$ref;
    if (typeof ref === 'string') {
      const name = ref.replace(/#$/, '');
      const target = shared[name];
      // A recursive schema keeps its reference rather than unfolding forever.
      if (target && !seen.includes(name)) return inline(target, [...seen, name]);
    }
    const copy: JsonSchema = {};
    for (const [key, item] of Object.entries(object)) {
      if (key !== '$id') copy[key] = inline(item, seen);
    }
    return copy;
  };
  return (schema) => (schema ? (inline(schema, []) as JsonSchema) : {});
}
