import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { RouteEntry } from '../platform/http/route-table.ts';
import { buildCatalog } from './catalog.ts';

const shared = {
  Address: {
    $id: 'Address',
    type: 'object',
    properties: { city: { type: 'string', description: 'City name.' } },
  },
  Node: { $id: 'Node', type: 'object', properties: { child: { $ref: 'Node#' } } },
};

const routes: RouteEntry[] = [
  {
    method: 'PATCH',
    url: '/v1/things/:id',
    schema: {
      operationId: 'things.update',
      summary: 'Update a thing',
      params: { type: 'object', properties: { id: { type: 'string', format: 'uuid' } } },
      querystring: {
        type: 'object',
        properties: { dry_run: { type: 'boolean', description: 'Validate only.' } },
      },
      headers: {
        type: 'object',
        properties: { 'idempotency-key': { type: 'string' }, 'x-service-client-id': { type: 'string' } },
      },
      body: {
        type: 'object',
        properties: { name: { type: 'string' }, address: { $ref: 'Address#' } },
        required: ['name'],
      },
    },
  },
  {
    method: 'PUT',
    url: '/v1/things/:id',
    schema: {
      operationId: 'things.replace',
      summary: 'Replace a thing',
      params: { type: 'object', properties: { id: { type: 'string' } } },
      body: { type: 'object', properties: { id: { type: 'string' } } },
    },
  },
  {
    method: 'POST',
    url: '/v1/things/bulk',
    schema: {
      operationId: 'things.bulk',
      summary: 'Add many things.',
      body: { type: 'array', items: { $ref: 'Node#' } },
    },
  },
  {
    method: 'HEAD',
    url: '/v1/docs/pages',
    schema: { operationId: 'docs.list', summary: 'List pages' },
  },
  { method: 'GET', url: '/v1/docs/pages', schema: { operationId: 'docs.list', summary: 'List pages' } },
  { method: 'GET', url: '/v1/hidden', schema: { operationId: 'hidden.get', summary: 'Hidden', hide: true } },
  { method: 'POST', url: '/v1/mcp', schema: { operationId: 'mcp.serve', summary: 'MCP' } },
  { method: 'GET', url: '/v1/openapi.json', schema: { operationId: 'openapi.get', summary: 'Document' } },
  { method: 'GET', url: '/healthz', schema: { operationId: 'health.get', summary: 'Alive' } },
  { method: 'GET', url: '/v1/untitled', schema: { summary: 'No operationId' } },
];

describe('tool catalog from the route table', () => {
  const tools = buildCatalog(routes, shared);
  const byName = new Map(tools.map((tool) => [tool.name, tool]));

  test('one tool per operation with an operationId under /v1, sorted; hidden routes, HEAD, the MCP route and the document excluded', () => {
    assert.deepEqual(
      tools.map((tool) => tool.name),
      ['docs.list', 'things.bulk', 'things.replace', 'things.update'],
    );
  });

  test('a tool is named by its operationId, in the toolset of its first segment', () => {
    const tool = byName.get('docs.list');
    assert.equal(tool?.operationId, 'docs.list');
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
    assert.deepEqual(properties.body.items.properties.child, { $ref: 'Node#' });
    assert.deepEqual(
      tool?.inputSchema.required,
      ['body'],
      'Fastify wants the body of a route with a body schema',
    );
    assert.equal(tool?.title, 'Add many things.');
    assert.match(tool?.description ?? '', /^Add many things\.\n\nREST: POST/);
  });
});
