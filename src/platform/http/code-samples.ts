import { type OperationObject, sdkCallPath, sdkName, sdkResult } from './sdk-names.ts';

/**
 * Adds `x-codeSamples` (curl, and the TypeScript SDK) to every operation of the OpenAPI document: the
 * reference page (/v1/reference) shows them beside each operation.
 */
interface JsonSchema {
  type?: string | string[];
  format?: string;
  enum?: unknown[];
  const?: unknown;
  default?: unknown;
  examples?: unknown[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  minimum?: number;
}

interface Operation extends OperationObject {
  operationId?: string;
  requestBody?: { content?: Record<string, { schema?: JsonSchema }> };
  parameters?: { in: string; name: string; required?: boolean; schema?: JsonSchema }[];
  'x-codeSamples'?: { lang: string; label: string; source: string }[];
}

interface Document {
  servers?: { url: string }[];
  paths?: Record<string, Record<string, Operation>>;
}

const FORMATS: Record<string, string> = {
  email: 'ana@example.com',
  uri: 'https://example.com/hooks/agency',
  uuid: '0192f1c2-7d4e-7a1b-9c3d-5e6f7a8b9c0d',
  'date-time': '2026-01-31T09:00:00Z',
  date: '2026-01-31',
};

/** A small example value of a schema: its example, const, default or first enum value, else one by type. */
function sample(schema: JsonSchema | undefined, depth = 0): unknown {
  if (!schema) return null;
  const given = schema.examples?.[0] ?? schema.const ?? schema.default ?? schema.enum?.[0];
  if (given !== undefined) return given;
  const variant = schema.anyOf?.[0] ?? schema.oneOf?.[0];
  if (variant) return sample(variant, depth);
  const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== 'null') : schema.type;
  switch (type) {
    case 'string':
      return FORMATS[schema.format ?? ''] ?? 'string';
    case 'integer':
    case 'number':
      return schema.minimum ?? 1;
    case 'boolean':
      return true;
    case 'array':
      return depth > 2 ? [] : [sample(schema.items, depth + 1)];
    case 'object':
      return depth > 2 ? {} : sampleObject(schema, depth + 1);
    default:
      return null;
  }
}

/** The required properties; the first one when none is required, so the example shows the shape. */
function sampleObject(schema: JsonSchema, depth = 0): Record<string, unknown> {
  const properties = schema.properties ?? {};
  const names = schema.required?.length ? schema.required : Object.keys(properties).slice(0, 1);
  return Object.fromEntries(names.map((name) => [name, sample(properties[name], depth)]));
}

function curlSample(baseUrl: string, method: string, path: string, operation: Operation): string {
  const query = (operation.parameters ?? [])
    .filter((p) => p.in === 'query' && p.required)
    .map((p) => `${p.name}=${encodeURIComponent(String(sample(p.schema)))}`)
    .join('&');
  const url = `${baseUrl}${path.replace(/\{(\w+)\}/g, '<$1>')}${query ? `?${query}` : ''}`;
  const lines = [`curl -X ${method.toUpperCase()} '${url}'`, `  -H "Authorization: Bearer $AGENCY_API_KEY"`];
  const body = operation.requestBody?.content?.['application/json']?.schema;
  if (body) {
    lines.push(`  -H 'Content-Type: application/json'`);
    lines.push(`  -d '${JSON.stringify(sampleObject(body))}'`);
  }
  return lines.join(' \\\n');
}

function sdkSample(method: string, path: string, operation: Operation & { operationId: string }): string {
  const { pathParams } = sdkName({ operationId: operation.operationId, method, path });
  const args = pathParams.map((name) => `'<${name}>'`);
  const body = operation.requestBody?.content?.['application/json']?.schema;
  const requiredQuery = (operation.parameters ?? []).filter((p) => p.in === 'query' && p.required);
  if (body) args.push(JSON.stringify(sampleObject(body), null, 2));
  else if (requiredQuery.length)
    args.push(JSON.stringify(Object.fromEntries(requiredQuery.map((p) => [p.name, sample(p.schema)]))));
  const call = `${sdkCallPath({ operationId: operation.operationId, method, path })}(${args.join(', ')})`;
  const result = sdkResult(operation);
  const use =
    result.kind === 'page'
      ? `for await (const item of ${call}) {\n  console.log(item);\n}`
      : result.kind === 'none'
        ? `await ${call};`
        : `const ${result.kind === 'resource' ? camelName(result.key) : 'result'} = await ${call};\nconsole.log(${result.kind === 'resource' ? camelName(result.key) : 'result'});`;
  return [
    `import { AgencyPlatform } from '@agency-platform/sdk';`,
    '',
    `const client = new AgencyPlatform({ apiKey: process.env.AGENCY_API_KEY ?? '' });`,
    use,
  ].join('\n');
}

function camelName(key: string): string {
  return key.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());
}

export function withCodeSamples<T>(document: T): T {
  const doc = document as Document;
  const baseUrl = doc.servers?.[0]?.url ?? '';
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    for (const [method, operation] of Object.entries(item)) {
      if (!operation.operationId || operation['x-codeSamples']) continue;
      const named = operation as Operation & { operationId: string };
      operation['x-codeSamples'] = [
        { lang: 'shell', label: 'curl', source: curlSample(baseUrl, method, path, operation) },
        { lang: 'typescript', label: 'SDK', source: sdkSample(method, path, named) },
      ];
    }
  }
  return document;
}
