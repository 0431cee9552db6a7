/**
 * The MCP tool catalog, derived from the OpenAPI document: every REST operation becomes a tool named
 * after its `operationId`, with the operation's path, query and body parameters merged into one
 * input schema. A route added to the API becomes a tool with no MCP code written.
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
  /** The dotted name, which is the `operationId` (or its alias). */
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

/**
 * Tool names that differ from the operationId. SPEC.md names the docs tools `docs.list` and
 * `docs.get`; the docs API's operations for those are `docs.pages.list` and `docs.pages.get`.
 */
export const TOOL_NAME_ALIASES: Readonly<Record<string, string>> = {
  'docs.pages.list': 'docs.list',
  'docs.pages.get': 'docs.get',
};

export const MAX_TOOL_NAME_LENGTH = 64;
export const IDEMPOTENCY_ARGUMENT = 'idempotency_key';
/** The argument that carries the whole request body when it cannot be merged with the parameters. */
export const BODY_ARGUMENT = 'body';

const METHODS: readonly HttpMethod[] = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];

/** Operations that are not tools: the MCP endpoint itself, the OpenAPI document, anything outside `/v1`. */
export function isExcludedPath(path: string): boolean {
  return !path.startsWith('/v1/') || path === '/v1/mcp' || path === '/v1/openapi.json';
}

interface OpenApiParameter {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  required?: boolean;
  description?: string;
  schema?: JsonSchema;
}

interface OpenApiOperation {
  operationId?: string;
  summary?: string;
  description?: string;
  parameters?: OpenApiParameter[];
  requestBody?: { required?: boolean; content?: Record<string, { schema?: JsonSchema }> };
}

export interface OpenApiDocument {
  info?: { version?: string };
  paths?: Record<string, Record<string, OpenApiOperation>>;
  components?: { schemas?: Record<string, JsonSchema> };
}

/** Every tool of the API, sorted by name so the order is stable. */
export function buildCatalog(document: OpenApiDocument): ToolDefinition[] {
  const resolve = refResolver(document.components?.schemas ?? {});
  const tools: ToolDefinition[] = [];
  for (const [path, item] of Object.entries(document.paths ?? {})) {
    if (isExcludedPath(path)) continue;
    for (const method of METHODS) {
      const operation = item[method.toLowerCase()];
      if (!operation?.operationId) continue;
      tools.push(toolOf(path, method, operation, resolve));
    }
  }
  return tools.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** The underscore form of a tool name: `crm.contacts.list` → `crm_contacts_list`. */
export function underscoreName(name: string): string {
  return name.replaceAll('.', '_');
}

function toolOf(
  path: string,
  method: HttpMethod,
  operation: OpenApiOperation,
  resolve: (schema: JsonSchema | undefined) => JsonSchema,
): ToolDefinition {
  const operationId = operation.operationId as string;
  const name = TOOL_NAME_ALIASES[operationId] ?? operationId;
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  const targets = new Map<string, ArgumentTarget>();

  for (const parameter of operation.parameters ?? []) {
    if (parameter.in === 'cookie') continue;
    const argument = parameter.in === 'header' ? headerArgument(parameter.name) : parameter.name;
    if (argument === null) continue;
    const schema = resolve(parameter.schema);
    const description = parameter.description ?? (schema.description as string | undefined);
    properties[argument] = description ? { ...schema, description } : schema;
    if (parameter.required || parameter.in === 'path') required.push(argument);
    targets.set(
      argument,
      parameter.in === 'header'
        ? { in: 'header', name: parameter.name }
        : { in: parameter.in, name: parameter.name },
    );
  }

  const bodySchema = operation.requestBody?.content?.['application/json']?.schema;
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
      if (operation.requestBody?.required) required.push(BODY_ARGUMENT);
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
    operationId,
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
  operation: OpenApiOperation,
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
 * Inlines `#/components/schemas/...` references, so every input schema stands alone, and drops `$id`
 * so a component used twice does not declare the same id twice.
 */
function refResolver(components: Record<string, JsonSchema>): (schema: JsonSchema | undefined) => JsonSchema {
  const inline = (value: unknown, seen: readonly string[]): unknown => {
    if (Array.isArray(value)) return value.map((item) => inline(item, seen));
    if (value === null || typeof value !== 'object') return value;
    const object = value as JsonSchema;
    const ref = object.$ref;
    if (typeof ref === 'string' && ref.startsWith('#/components/schemas/')) {
      const componentName = ref.slice('#/components/schemas/'.length);
      const target = components[componentName];
      // A recursive schema keeps its reference rather than unfolding forever.
      if (target && !seen.includes(componentName)) return inline(target, [...seen, componentName]);
    }
    const copy: JsonSchema = {};
    for (const [key, item] of Object.entries(object)) {
      if (key !== '$id') copy[key] = inline(item, seen);
    }
    return copy;
  };
  return (schema) => (schema ? (inline(schema, []) as JsonSchema) : {});
}
