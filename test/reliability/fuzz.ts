/**
 * The OpenAPI-driven fuzzer (issue 17). Every operation of `/v1/openapi.json` (built from the route
 * table, so a new route is fuzzed with no test code) gets requests generated from its own schemas
 * with fast-check: valid-shaped ones, and broken ones (wrong types, missing and extra fields, huge
 * and empty strings, Unicode edge cases and NUL bytes, deep nesting, invalid JSON, a wrong
 * Content-Type, bodies past the size limit, bad page tokens, bad UUIDs in paths and headers).
 *
 * What must hold for each: the answer is below 500; a 4xx is the `{error, message, details?}`
 * envelope; a body past the limit is 413 `payload_too_large`.
 */
import fc from 'fast-check';
import type { FastifyInstance } from 'fastify';
import type { TestTenant } from '../helpers.ts';

/** Fastify's bodyLimit in src/app.ts. */
export const BODY_LIMIT = 1_048_576;

type Schema = Record<string, any>;

interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header';
  required?: boolean;
  schema?: Schema;
}

export interface Operation {
  method: string;
  /** The OpenAPI path, with `{param}`. */
  path: string;
  parameters: Parameter[];
  body?: Schema;
}

export interface FuzzRequest {
  operation: string;
  mutation: string;
  method: string;
  url: string;
  headers: Record<string, string>;
  payload?: string;
}

/** The operations of the document, with their `$ref`s resolved. */
export function operationsOf(document: any): Operation[] {
  const resolve = (schema: any, depth = 0): any => {
    if (!schema || typeof schema !== 'object' || depth > 20) return schema;
    if (Array.isArray(schema)) return schema.map((item) => resolve(item, depth + 1));
    if (typeof schema.$ref === 'string' && schema.$ref.startsWith('#/components/schemas/')) {
      return resolve(
        document.components.schemas[schema.$ref.slice('#/components/schemas/'.length)],
        depth + 1,
      );
    }
    return Object.fromEntries(Object.entries(schema).map(([key, value]) => [key, resolve(value, depth + 1)]));
  };
  const operations: Operation[] = [];
  for (const [path, item] of Object.entries<any>(document.paths)) {
    for (const [method, operation] of Object.entries<any>(item)) {
      if (!['get', 'post', 'put', 'patch', 'delete'].includes(method)) continue;
      operations.push({
        method: method.toUpperCase(),
        path,
        parameters: resolve(operation.parameters ?? []),
        body: resolve(operation.requestBody?.content?.['application/json']?.schema),
      });
    }
  }
  return operations;
}

const nasty = fc.constantFrom(
  '',
  '\u0000',
  'a\u0000b',
  '\ud800',
  'x\udfff',
  '\u202e\u2066',
  '😀',
  '\ufeff',
  'é',
  'ﷺ',
  '%00',
  "'; DROP TABLE contacts; --",
  '../../etc/passwd',
  '{{7*7}}',
  '<script>',
  '2024-12-31T23:59:60Z',
  '0000-01-01',
  '2025-02-30',
  '9999-12-31T23:59:59-23:59',
  '-1',
  '1e309',
  'NaN',
  'null',
);
const text = fc.oneof(
  { weight: 3, arbitrary: fc.string({ maxLength: 20 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 20 }) },
  { weight: 2, arbitrary: nasty },
);

/** A value of the schema's shape (within small bounds), now and then a nasty string in a string's place. */
export function shapedValue(schema: Schema | undefined, depth = 0): fc.Arbitrary<unknown> {
  if (!schema || typeof schema !== 'object' || depth > 6) return fc.constant(null);
  if ('const' in schema) return fc.constant(schema.const);
  if (Array.isArray(schema.enum)) return fc.constantFrom(...schema.enum);
  for (const union of ['anyOf', 'oneOf'] as const)
    if (Array.isArray(schema[union]) && schema[union].length > 0)
      return fc.oneof(...schema[union].map((option: Schema) => shapedValue(option, depth + 1)));
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  switch (type) {
    case 'string':
      return fc.oneof({ weight: 4, arbitrary: stringOf(schema) }, { weight: 1, arbitrary: text });
    case 'integer':
      return fc.integer({ min: schema.minimum ?? -1_000_000, max: schema.maximum ?? 1_000_000 });
    case 'number':
      return fc.double({ noNaN: true, noDefaultInfinity: true, min: schema.minimum, max: schema.maximum });
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array':
      return fc.array(shapedValue(schema.items, depth + 1), {
        minLength: Math.min(schema.minItems ?? 0, 3),
        maxLength: Math.min(schema.maxItems ?? 3, 3),
      });
    case 'object':
    case undefined: {
      const properties: Record<string, Schema> = schema.properties ?? {};
      const names = Object.keys(properties);
      if (names.length === 0) return fc.dictionary(fc.string({ maxLength: 8 }), jsonLeaf, { maxKeys: 3 });
      return fc.record(
        Object.fromEntries(names.map((name) => [name, shapedValue(properties[name], depth + 1)])),
        { requiredKeys: (schema.required ?? []).filter((name: string) => name in properties) },
      );
    }
    default:
      return jsonLeaf;
  }
}

const jsonLeaf: fc.Arbitrary<unknown> = fc.oneof(
  fc.string({ maxLength: 10 }),
  fc.integer(),
  fc.boolean(),
  fc.constant(null),
);

function stringOf(schema: Schema): fc.Arbitrary<string> {
  const minLength = schema.minLength ?? 0;
  const maxLength = Math.max(minLength, Math.min(schema.maxLength ?? 40, 40));
  switch (schema.format) {
    case 'uuid':
      return fc.uuid();
    case 'date-time':
      return fc
        .date({
          min: new Date('0001-01-01T00:00:00Z'),
          max: new Date('9999-12-31T23:59:59Z'),
          noInvalidDate: true,
        })
        .map((date) => date.toISOString());
    case 'date':
      return fc
        .date({
          min: new Date('0001-01-01T00:00:00Z'),
          max: new Date('9999-12-31T00:00:00Z'),
          noInvalidDate: true,
        })
        .map((date) => date.toISOString().slice(0, 10));
    case 'email':
      return fc.emailAddress();
    case 'uri':
      return fc.webUrl();
  }
  return fc.string({ minLength, maxLength });
}

/** A value of any type but the schema's. */
function wrongType(schema: Schema | undefined): fc.Arbitrary<unknown> {
  const type = Array.isArray(schema?.type) ? schema.type[0] : schema?.type;
  const options: fc.Arbitrary<unknown>[] = [];
  if (type !== 'string') options.push(text);
  if (type !== 'integer' && type !== 'number') options.push(fc.oneof(fc.integer(), fc.double()));
  if (type !== 'boolean') options.push(fc.boolean());
  if (type !== 'array') options.push(fc.array(jsonLeaf, { maxLength: 2 }));
  if (type !== 'object') options.push(fc.dictionary(fc.string({ maxLength: 4 }), jsonLeaf, { maxKeys: 2 }));
  options.push(fc.constant(null));
  return fc.oneof(...options);
}

const DEEP = '\u0001deep\u0001';

/** `{"a":[{"a":[...]}]}` nested `depth` times, as JSON text (JSON.stringify would overflow the stack). */
function deeplyNested(depth: number): string {
  let open = '';
  let close = '';
  for (let i = 0; i < depth; i++) {
    open += i % 2 ? '[' : '{"a":';
    close = (i % 2 ? ']' : '}') + close;
  }
  return `${open}"x"${close}`;
}

const badId = fc.oneof(
  fc.string({ maxLength: 40 }),
  nasty,
  fc.constantFrom(
    '00000000-0000-0000-0000-000000000000',
    'ffffffff-ffff-ffff-ffff-ffffffffffff',
    'a'.repeat(120),
  ),
);
const badPageToken = fc.oneof(
  fc.string({ minLength: 1, maxLength: 60 }),
  fc.base64String({ minLength: 4, maxLength: 200 }),
  fc.constantFrom('eyJ9', 'a.b', '%00', 'x'.repeat(1024), 'x'.repeat(5000)),
);

/** Builds the request arbitrary: an operation, a mutation, and the parts. */
export function requestsOf(
  operations: Operation[],
  tenant: TestTenant,
  realIds: (operation: Operation) => Record<string, string>,
): fc.Arbitrary<FuzzRequest> {
  const auth = fc.constantFrom<Record<string, string>>(tenant.client, tenant.agency, tenant.agencyAsClient);
  return fc.constantFrom(...operations).chain((operation) => {
    const paramsOf = (where: Parameter['in']) => operation.parameters.filter((p) => p.in === where);
    const record = (params: Parameter[]) =>
      fc.record(Object.fromEntries(params.map((p) => [p.name, shapedValue(p.schema)])), {
        requiredKeys: params.filter((p) => p.required).map((p) => p.name),
      });
    const real = realIds(operation);
    const pathValues = fc.record(
      Object.fromEntries(
        paramsOf('path').map((p) => [
          p.name,
          fc.oneof(
            { weight: 4, arbitrary: fc.constant(real[p.name] ?? '00000000-0000-4000-8000-000000000000') },
            { weight: 1, arbitrary: fc.uuid() },
          ),
        ]),
      ),
    );
    const query = record(paramsOf('query'));
    const headers = record(paramsOf('header').filter((p) => p.name.toLowerCase() !== 'authorization'));
    const body = operation.body ? shapedValue(operation.body) : fc.constant(undefined);
    const field = (schema: Schema | undefined) =>
      fc.constantFrom(...Object.keys(schema?.properties ?? { body: 1 }));

    const mutations: Record<string, fc.Arbitrary<Partial<FuzzRequest> & { parts?: any }>> = {
      valid: fc.constant({}),
      'wrong type': field(operation.body).chain((name) =>
        wrongType(operation.body?.properties?.[name]).map((value) => ({
          parts: { bodyField: [name, value] },
        })),
      ),
      'missing field': field(operation.body).map((name) => ({ parts: { drop: name } })),
      'extra field': fc.string({ maxLength: 10 }).map((name) => ({ parts: { bodyField: [`x_${name}`, 1] } })),
      'huge string': field(operation.body).map((name) => ({
        parts: { bodyField: [name, 'x'.repeat(200_000)] },
      })),
      'empty string': field(operation.body).map((name) => ({ parts: { bodyField: [name, ''] } })),
      'nasty string': fc
        .tuple(field(operation.body), nasty)
        .map(([name, value]) => ({ parts: { bodyField: [name, value] } })),
      'deep nesting': fc
        .tuple(field(operation.body), fc.constantFrom(50, 1_000, 20_000))
        .map(([name, depth]) => ({ parts: { bodyField: [name, DEEP], deep: depth } })),
      'invalid JSON': fc
        .constantFrom(
          '{',
          '{"a":',
          '[1,]',
          'nul',
          '{"a":1}{',
          '\u0000',
          '"\\ud800"',
          '{"__proto__":{"x":1}}',
          '',
        )
        .map((payload) => ({ payload, headers: { 'content-type': 'application/json' } })),
      'wrong content type': fc
        .constantFrom(
          'text/plain',
          'application/xml',
          'multipart/form-data; boundary=x',
          'application/x-www-form-urlencoded',
          'application/json; charset=utf-16',
          'garbage',
        )
        .map((type) => ({ payload: 'a=1', headers: { 'content-type': type } })),
      'too large': fc.constant({ parts: { tooLarge: true } }),
      'bad path id': fc.constant({ parts: { badPath: true } }),
      'bad query': fc
        .tuple(
          fc.constantFrom('page_token', 'limit', 'q', 'since', 'due_before', 'type', 'x'),
          fc.oneof(badPageToken, nasty, text),
        )
        .map(([name, value]) => ({ parts: { query: [name, value] } })),
      'bad header': fc
        .tuple(
          fc.constantFrom(
            'idempotency-key',
            'x-service-client-id',
            'authorization',
            'x-request-id',
            'content-length',
          ),
          fc.oneof(
            fc.string({ maxLength: 300 }).map((s) => s.replace(/[^\x20-\x7e]/g, '')),
            fc.constantFrom(
              '',
              'x'.repeat(300),
              'Bearer ',
              'Bearer sk_live_unknown',
              '00000000-0000-0000-0000-000000000000',
            ),
          ),
        )
        .map(([name, value]) => ({ parts: { header: [name, value] } })),
    };
    const names = Object.keys(mutations).filter((name) =>
      operation.method !== 'GET' && operation.method !== 'DELETE'
        ? true
        : ![
            'wrong type',
            'missing field',
            'extra field',
            'huge string',
            'empty string',
            'nasty string',
            'deep nesting',
            'invalid JSON',
            'wrong content type',
            'too large',
          ].includes(name),
    );

    return fc
      .record({
        mutation: fc.constantFrom(...names),
        auth,
        pathValues,
        query,
        headers,
        body,
        badId,
      })
      .chain((base) => mutations[base.mutation].map((change) => build(operation, base, change)));
  });
}

function build(operation: Operation, base: any, change: any): FuzzRequest {
  const parts = change.parts ?? {};
  const pathValues = { ...base.pathValues };
  if (parts.badPath) {
    const names = Object.keys(pathValues);
    if (names.length) pathValues[names[0]] = base.badId;
  }
  const path = operation.path.replace(/\{(\w+)\}/g, (_, name: string) =>
    encodePath(String(pathValues[name] ?? 'x')),
  );
  const query: Record<string, unknown> = { ...base.query };
  if (parts.query) query[parts.query[0]] = parts.query[1];
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (value === undefined) continue;
    for (const item of Array.isArray(value) ? value : [value])
      search.append(name, typeof item === 'string' ? item : JSON.stringify(item));
  }
  const headers: Record<string, string> = { ...base.auth };
  for (const [name, value] of Object.entries(base.headers ?? {})) {
    if (typeof value === 'string') headers[name] = value.replace(/[^\x20-\x7e]/g, '');
  }
  if (parts.header) headers[parts.header[0]] = parts.header[1];

  let payload: string | undefined;
  if (change.payload !== undefined) {
    payload = change.payload;
    Object.assign(headers, change.headers);
  } else if (operation.body || parts.tooLarge) {
    let body = base.body;
    if (body && typeof body === 'object' && !Array.isArray(body)) {
      body = { ...body };
      if (parts.drop) delete body[parts.drop];
      if (parts.bodyField) body[parts.bodyField[0]] = parts.bodyField[1];
    } else if (parts.bodyField) body = parts.bodyField[1];
    if (parts.tooLarge) body = { ...(body ?? {}), padding: 'x'.repeat(BODY_LIMIT + 10) };
    payload = JSON.stringify(body ?? {});
    if (parts.deep) payload = payload.replace(JSON.stringify(DEEP), deeplyNested(parts.deep));
    headers['content-type'] = 'application/json';
  }
  return {
    operation: `${operation.method} ${operation.path}`,
    mutation: base.mutation,
    method: operation.method,
    url: `${path}${search.size ? `?${search}` : ''}`,
    headers,
    payload,
  };
}

/** Percent-encodes a path segment; a lone surrogate goes as its raw (invalid UTF-8) bytes. */
function encodePath(value: string): string {
  return Array.from(value, (char) => {
    try {
      return encodeURIComponent(char);
    } catch {
      return Array.from(
        Buffer.from(
          new Uint8Array([
            0xed,
            0xa0 | ((char.charCodeAt(0) >> 6) & 0x1f),
            0x80 | (char.charCodeAt(0) & 0x3f),
          ]),
        ),
      )
        .map((byte) => `%${byte.toString(16).toUpperCase()}`)
        .join('');
    }
  }).join('');
}

/** The answer's faults, empty when it holds. */
export async function check(app: FastifyInstance, request: FuzzRequest): Promise<string[]> {
  const response = await app.inject({
    method: request.method as 'GET',
    url: request.url,
    headers: request.headers,
    ...(request.payload !== undefined ? { payload: request.payload } : {}),
  });
  const faults: string[] = [];
  const status = response.statusCode;
  if (status >= 500) faults.push(`answered ${status}`);
  if (status >= 400) {
    let body: any;
    try {
      body = response.json();
    } catch {
      faults.push(`a ${status} that is not JSON: ${response.body.slice(0, 200)}`);
    }
    if (body !== undefined) {
      const keys = body && typeof body === 'object' ? Object.keys(body) : [];
      if (typeof body?.error !== 'string' || typeof body?.message !== 'string')
        faults.push(`a ${status} without the envelope: ${response.body.slice(0, 200)}`);
      if (keys.some((key) => !['error', 'message', 'details'].includes(key)))
        faults.push(`a ${status} with fields beyond the envelope: ${keys.join(', ')}`);
    }
  }
  if (request.mutation === 'too large' && (status !== 413 || !response.body.includes('payload_too_large')))
    faults.push(`a body past the limit answered ${status}, not 413 payload_too_large`);
  return faults.map((fault) => `${request.operation} (${request.mutation}): ${fault}`);
}
