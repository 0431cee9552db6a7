import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { buildCatalog, type OpenApiDocument } from './catalog.ts';

const ok = { 200: { description: 'ok' } };

const document: OpenApiDocument = {
  components: {
    schemas: {
      Address: {
        $id: 'Address',
        type: 'object',
        properties: { city: { type: 'string', description: 'City name.' } },
      },
      Node: { type: 'object', properties: { child: { $ref: '#/components/schemas/Node' } } },
    },
  },
  paths: {
    '/v1/things/{id}': {
      patch: {
        operationId: 'things.update',
        summary: 'Update a thing',
        parameters: [
          { name: 'id', in: 'path', required: true, schema: { type: 'string', format: 'uuid' } },
          { name: 'dry_run', in: 'query', description: 'Validate only.', schema: { type: 'boolean' } },
          { name: 'idempotency-key', in: 'header', schema: { type: 'string' } },
          { name: 'x-service-client-id', in: 'header', schema: { type: 'string' } },
        ],
        requestBody: {
          required: true,
          content: {
            'application/json': {
              schema: {
                type: 'object',
                properties: { name: { type: 'string' }, address: { $ref: '#/components/schemas/Address' } },
                required: ['name'],
              },
            },
          },
        },
        responses: ok,
      } as never,
      put: {
        operationId: 'things.replace',
        summary: 'Replace a thing',
        parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
        requestBody: {
          required: true,
          content: {
            'application/json': { schema: { type: 'object', properties: { id: { type: 'string' } } } },
          },
        },
      },
    },
    '/v1/things/bulk': {
      post: {
        operationId: 'things.bulk',
        summary: 'Add many things.',
        requestBody: {
          content: {
            'application/json': { schema: { type: 'array', items: { $ref: '#/components/schemas/Node' } } },
          },
        },
      },
    },
    '/v1/docs/pages': { get: { operationId: 'docs.pages.list', summary: 'List pages' } },
    '/v1/mcp': { post: { operationId: 'mcp.serve', summary: 'MCP' } },
    '/v1/openapi.json': { get: { operationId: 'openapi.get', summary: 'Document' } },
    '/healthz': { get: { operationId: 'health.get', summary: 'Alive' } },
    '/v1/untitled': { get: { summary: 'No operationId' } },
  },
};

describe('tool catalog from an OpenAPI document', () => {
  const tools = buildCatalog(document);
  const byName = new Map(tools.map((tool) => [tool.name, tool]));

  test('one tool per operation with an operationId under /v1, sorted, the MCP route and the document excluded', () => {
    assert.deepEqual(
      tools.map((tool) => tool.name),
      ['docs.list', 'things.bulk', 'things.replace', 'things.update'],
    );
  });

  test('the alias map gives docs.pages.list the spec name docs.list, in its toolset', () => {
    const tool = byName.get('docs.list');
    assert.equal(tool?.operationId, 'docs.pages.list');
    assert.equal(tool?.underscoreName, 'docs_list');
    assert.equal(tool?.toolset, 'docs');
  });

  test('path, query, header and body parameters merge into one object schema with inlined references', () => {
    const tool = byName.get('things.update');
    assert.ok(tool);
    assert.deepEqual(tool.inputSchema, {
      type: 'object',
      properties: {
        id: { type: 'string', format: 'uuid' },
        dry_run: { type: 'boolean', description: 'Validate only.' },
        idempotency_key: { type: 'string' },
        name: { type: 'string' },
        address: { type: 'object', properties: { city: { type: 'string', description: 'City name.' } } },
      },
      required: ['id', 'name'],
      additionalProperties: false,
    });
    assert.deepEqual(Object.fromEntries(tool.arguments), {
      id: { in: 'path', name: 'id' },
      dry_run: { in: 'query', name: 'dry_run' },
      idempotency_key: { in: 'header', name: 'idempotency-key' },
      name: { in: 'body-field', name: 'name' },
      address: { in: 'body-field', name: 'address' },
    });
    assert.deepEqual(tool.annotations, {
      title: 'Update a thing',
      readOnlyHint: false,
      destructiveHint: false,
      idempotentHint: false,
    });
    assert.equal(tool.description, 'Update a thing.\n\nREST: PATCH /v1/things/{id}');
  });

  test('a body field named like a parameter keeps the body whole under `body`', () => {
    const tool = byName.get('things.replace');
    assert.deepEqual(Object.keys(tool?.inputSchema.properties as object), ['id', 'body']);
    assert.deepEqual(tool?.inputSchema.required, ['id', 'body']);
    assert.deepEqual(tool?.arguments.get('body'), { in: 'body' });
    assert.equal(tool?.annotations.idempotentHint, true);
  });

  test('a non-object body goes under `body`; POST tools get idempotency_key; recursion stops', () => {
    const tool = byName.get('things.bulk');
    const properties = tool?.inputSchema.properties as Record<string, any>;
    assert.deepEqual(Object.keys(properties), ['body', 'idempotency_key']);
    assert.equal(properties.body.type, 'array');
    assert.deepEqual(properties.body.items.properties.child, { $ref: '#/components/schemas/Node' });
    assert.equal(tool?.inputSchema.required, undefined, 'an optional body is not required');
    assert.equal(tool?.title, 'Add many things.');
    assert.match(tool?.description ?? '', /^Add many things\.\n\nREST: POST/);
  });
});
