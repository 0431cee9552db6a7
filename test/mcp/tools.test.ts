import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { isExcludedPath } from '../../src/mcp/catalog.ts';
import { createTenant, type TestApp, type TestTenant } from '../helpers.ts';
import { connect, type McpClient, resultBody, rpc, startMcpApp } from './support.ts';

const METHODS = ['get', 'post', 'put', 'patch', 'delete'];

describe('MCP tools: generated from the route table', () => {
  let t: TestApp;
  let endpoint: string;
  let tenant: TestTenant;
  let client: McpClient;
  let tools: any[];

  before(async () => {
    ({ t, endpoint } = await startMcpApp());
    tenant = await createTenant(t.app);
    client = await connect('legacy', endpoint, tenant.agency);
    ({ tools } = await client.listTools());
  });
  after(async () => {
    await client.close();
    await t.close();
  });

  const listed = async (query: string) => {
    const response = await rpc(`${endpoint}${query}`, tenant.agency, {
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/list',
      params: {},
    });
    assert.equal(response.status, 200, await response.clone().text());
    return (await response.json()).result.tools as any[];
  };

  test('every operation of the OpenAPI document but the excluded ones is a tool, and nothing else is', async () => {
    const document = t.app.swagger() as { paths: Record<string, Record<string, any>> };
    const operations: { name: string; method: string; path: string }[] = [];
    for (const [path, item] of Object.entries(document.paths)) {
      for (const method of METHODS) {
        const operation = item[method];
        if (!operation || isExcludedPath(path)) continue;
        assert.ok(operation.operationId, `${method.toUpperCase()} ${path} has an operationId`);
        operations.push({
          name: operation.operationId,
          method: method.toUpperCase(),
          path,
        });
      }
    }
    assert.ok(operations.length >= 8, 'the test routes and the platform routes are in the document');
    assert.deepEqual(
      tools.map((tool) => tool.name).sort(),
      operations.map((operation) => operation.name).sort(),
    );
    for (const operation of operations) {
      const tool = tools.find((candidate) => candidate.name === operation.name);
      assert.match(
        tool.description,
        new RegExp(`REST: ${operation.method} ${operation.path.replaceAll(/[{}]/g, '\\$&')}`),
      );
    }
  });

  test('the excluded operations are the MCP route, the OpenAPI document and anything outside /v1', () => {
    assert.ok(isExcludedPath('/v1/mcp'));
    assert.ok(isExcludedPath('/v1/openapi.json'));
    assert.ok(isExcludedPath('/admin/v1/orgs'));
    assert.ok(isExcludedPath('/healthz'));
    assert.ok(!isExcludedPath('/v1/me'));
    const document = t.app.swagger() as { paths: Record<string, unknown> };
    assert.ok(
      !Object.keys(document.paths).some((path) => path.startsWith('/admin')),
      'admin routes are hidden',
    );
    assert.ok(!tools.some((tool) => tool.name.startsWith('admin') || tool.name.startsWith('mcp')));
  });

  test('every tool name, dotted and underscored, is unique, portable and within 64 characters', async () => {
    const underscored = await listed('?tool_names=underscore');
    assert.equal(underscored.length, tools.length);
    for (const [names, pattern] of [
      [tools.map((tool) => tool.name), /^[a-z0-9_.-]{1,64}$/],
      [underscored.map((tool) => tool.name), /^[a-zA-Z0-9_-]{1,64}$/],
    ] as const) {
      assert.equal(new Set(names).size, names.length, 'unique');
      for (const name of names) assert.match(name, pattern);
    }
    assert.deepEqual(
      underscored.map((tool) => tool.name),
      tools.map((tool) => tool.name.replaceAll('.', '_')),
    );
  });

  test('annotations on every tool: title, readOnlyHint, destructiveHint and idempotentHint spelled out', () => {
    for (const tool of tools) {
      const method = /REST: (\w+) /.exec(tool.description)?.[1];
      assert.equal(typeof tool.title, 'string');
      assert.ok(tool.title.length > 0);
      assert.equal(tool.annotations.title, tool.title);
      assert.equal(tool.annotations.readOnlyHint, method === 'GET', tool.name);
      assert.equal(tool.annotations.destructiveHint, method === 'DELETE', tool.name);
      assert.equal(
        tool.annotations.idempotentHint,
        ['GET', 'PUT', 'DELETE'].includes(method as string),
        tool.name,
      );
    }
    const byName = new Map(tools.map((tool) => [tool.name, tool]));
    assert.equal(byName.get('testkit.widgets.replace').annotations.idempotentHint, true);
    assert.equal(byName.get('testkit.widgets.create').annotations.idempotentHint, false);
    assert.equal(byName.get('testkit.widgets.create').annotations.destructiveHint, false);
    assert.equal(byName.get('testkit.widgets.delete').annotations.destructiveHint, true);
  });

  test('the input schema merges path, query and body parameters, with their descriptions', () => {
    const byName = new Map(tools.map((tool) => [tool.name, tool]));
    const create = byName.get('testkit.widgets.create').inputSchema;
    assert.equal(create.type, 'object');
    assert.deepEqual(Object.keys(create.properties).sort(), ['idempotency_key', 'name', 'size']);
    assert.deepEqual(create.required, ['name']);
    assert.equal(create.additionalProperties, false);
    assert.equal(create.properties.name.description, 'What the widget is called.');
    assert.equal(create.properties.size.maximum, 10);
    assert.match(create.properties.idempotency_key.description, /retry/);

    const replace = byName.get('testkit.widgets.replace').inputSchema;
    assert.deepEqual(Object.keys(replace.properties).sort(), ['id', 'name', 'size']);
    assert.deepEqual([...replace.required].sort(), ['id', 'name', 'size']);
    assert.equal(replace.properties.id.format, 'uuid');

    const list = byName.get('events.list').inputSchema;
    assert.deepEqual(Object.keys(list.properties).sort(), ['limit', 'page_token', 'type']);
    assert.equal(list.properties.limit.maximum, 200);
    assert.match(list.properties.page_token.description, /next_page_token/);
    assert.equal(list.required, undefined);
    assert.match(byName.get('events.list').description, /page_token/);

    const get = byName.get('events.get').inputSchema;
    assert.deepEqual(get.required, ['id']);
    assert.ok(get.properties.id.pattern);

    assert.deepEqual(byName.get('me.get').inputSchema.properties, {});
    for (const tool of tools)
      assert.equal(JSON.stringify(tool.inputSchema).includes('$ref'), false, tool.name);
  });

  test('the order of tools is stable: sorted by name, the same on every request and in both eras', async () => {
    const names = tools.map((tool) => tool.name);
    assert.deepEqual(names, [...names].sort());
    assert.deepEqual(
      (await listed('')).map((tool) => tool.name),
      names,
    );
    const modern = await connect('modern', endpoint, tenant.agency);
    try {
      assert.deepEqual(
        (await modern.listTools()).tools.map((tool) => tool.name),
        names,
      );
    } finally {
      await modern.close();
    }
  });

  test('?tool_names=underscore serves and accepts crm_contacts_list-style names', async () => {
    const underscored = await connect('modern', `${endpoint}?tool_names=underscore`, tenant.agency);
    try {
      const names = (await underscored.listTools()).tools.map((tool) => tool.name);
      assert.ok(names.includes('me_get'));
      assert.ok(names.includes('testkit_widgets_create'));
      assert.ok(!names.some((name) => name.includes('.')));
      const result = await underscored.callTool({ name: 'me_get', arguments: {} });
      assert.equal(resultBody(result).tenant.org_id, tenant.orgId);
      await assert.rejects(underscored.callTool({ name: 'me.get', arguments: {} }), /Unknown tool/);
    } finally {
      await underscored.close();
    }
  });

  test('?toolsets= keeps the named groups by first name segment', async () => {
    assert.deepEqual(
      (await listed('?toolsets=testkit')).map((tool) => tool.name),
      tools.filter((tool) => tool.name.startsWith('testkit.')).map((tool) => tool.name),
    );
    const two = (await listed('?toolsets=me,events')).map((tool) => tool.name);
    assert.deepEqual(two, ['events.get', 'events.list', 'me.get']);
    assert.deepEqual(
      (await listed('?toolsets=events,me&tool_names=underscore')).map((tool) => tool.name),
      ['events_get', 'events_list', 'me_get'],
    );
  });

  test('an unknown toolset is a 400 that lists the known ones', async () => {
    const response = await rpc(`${endpoint}?toolsets=me,nope`, tenant.agency, {
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/list',
      params: {},
    });
    assert.equal(response.status, 400);
    const body = await response.json();
    assert.equal(body.error, 'invalid_request');
    assert.match(body.message, /nope/);
    assert.ok(body.details.known_toolsets.includes('testkit'));
    assert.ok(body.details.known_toolsets.includes('me'));
  });

  test('?read_only=true keeps the read-only tools, and refuses calls to the others', async () => {
    const readOnly = await listed('?read_only=true');
    assert.deepEqual(
      readOnly.map((tool) => tool.name),
      tools.filter((tool) => tool.annotations.readOnlyHint).map((tool) => tool.name),
    );
    assert.ok(readOnly.every((tool) => tool.annotations.readOnlyHint));
    assert.ok(readOnly.some((tool) => tool.name === 'testkit.widgets.list'));

    const combined = await listed('?read_only=true&toolsets=testkit&tool_names=underscore');
    assert.deepEqual(
      combined.map((tool) => tool.name),
      ['testkit_widgets_get', 'testkit_widgets_list'],
    );

    const refused = await rpc(`${endpoint}?read_only=true`, tenant.agency, {
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'testkit.widgets.create', arguments: { name: 'nope' } },
    });
    const body = await refused.json();
    assert.equal(body.error.code, -32602);
    const list = await client.callTool({ name: 'testkit.widgets.list', arguments: {} });
    assert.deepEqual(resultBody(list).data, [], 'the refused call created nothing');
  });
});
