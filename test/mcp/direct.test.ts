import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { answerDirectly } from '../../src/mcp/direct.ts';
import { createToolHandler, type Exchange, type ServerInfo, type ToolHandler } from '../../src/mcp/server.ts';
import { CatalogViews, catalogSource, viewOptions } from '../../src/mcp/views.ts';
import { createTenant, type TestApp, type TestTenant } from '../helpers.ts';
import { startMcpApp } from './support.ts';

const SERVER_INFO: ServerInfo = { name: 'agency-platform', title: 'Agency Platform API', version: '1.0.0' };
const MODERN_META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': {},
};
const ACCEPT = { accept: 'application/json, text/event-stream', 'content-type': 'application/json' };

interface Case {
  name: string;
  body: Record<string, unknown> | unknown[];
  headers?: Record<string, string>;
  query?: { tool_names?: string; toolsets?: string; read_only?: boolean };
}

const legacy = (method: string, params: unknown, id: unknown = 1) => ({ jsonrpc: '2.0', id, method, params });
const modern = (method: string, params: Record<string, unknown>) => ({
  jsonrpc: '2.0',
  id: 9,
  method,
  params: { ...params, _meta: MODERN_META },
});
const modernHeaders = (method: string, name?: string) => ({
  'mcp-protocol-version': '2026-07-28',
  'mcp-method': method,
  ...(name ? { 'mcp-name': name } : {}),
});

/** Shapes the direct path answers: each must get exactly the SDK's answer. */
const DIRECT: Case[] = [
  { name: 'legacy tools/list', body: legacy('tools/list', {}) },
  {
    name: 'legacy tools/list, underscore names',
    body: legacy('tools/list', {}),
    query: { tool_names: 'underscore' },
  },
  {
    name: 'legacy tools/list, read-only toolset',
    body: legacy('tools/list', {}),
    query: { toolsets: 'events', read_only: true },
  },
  { name: 'legacy tools/call', body: legacy('tools/call', { name: 'me.get', arguments: {} }) },
  {
    name: 'legacy tools/call, no arguments, string id',
    body: legacy('tools/call', { name: 'me.get' }, 'call-1'),
  },
  {
    name: 'legacy tools/call with a negotiated version header',
    body: legacy('tools/call', { name: 'me.get', arguments: {} }),
    headers: { 'mcp-protocol-version': '2025-06-18' },
  },
  {
    name: 'legacy tools/call, isError',
    body: legacy('tools/call', { name: 'events.get', arguments: { id: 'bad' } }),
  },
  {
    name: 'legacy tools/call with a query argument',
    body: legacy('tools/call', { name: 'events.list', arguments: { limit: 1, type: 'x' } }),
  },
  { name: 'modern tools/list', body: modern('tools/list', {}), headers: modernHeaders('tools/list') },
  {
    name: 'modern tools/call',
    body: modern('tools/call', { name: 'me.get', arguments: {} }),
    headers: modernHeaders('tools/call', 'me.get'),
  },
  {
    name: 'modern tools/call, isError, underscore names',
    body: modern('tools/call', { name: 'events_get', arguments: { id: 'bad' } }),
    headers: modernHeaders('tools/call', 'events_get'),
    query: { tool_names: 'underscore' },
  },
];

/** Shapes the direct path leaves to the SDK. */
const SDK_ONLY: Case[] = [
  {
    name: 'initialize',
    body: legacy('initialize', {
      protocolVersion: '2025-06-18',
      capabilities: {},
      clientInfo: { name: 'x', version: '1' },
    }),
  },
  { name: 'ping', body: legacy('ping', {}) },
  { name: 'a notification', body: { jsonrpc: '2.0', method: 'notifications/initialized' } },
  { name: 'a batch', body: [legacy('tools/list', {})] },
  { name: 'an unknown tool', body: legacy('tools/call', { name: 'nope', arguments: {} }) },
  { name: 'a null id', body: legacy('tools/list', {}, null) },
  { name: 'no params', body: { jsonrpc: '2.0', id: 1, method: 'tools/list' } },
  { name: 'arguments that are not an object', body: legacy('tools/call', { name: 'me.get', arguments: [] }) },
  {
    name: 'an extra params field',
    body: legacy('tools/call', { name: 'me.get', arguments: {}, task: { ttl: 1 } }),
  },
  {
    name: 'legacy _meta (progress token)',
    body: legacy('tools/call', { name: 'me.get', _meta: { progressToken: 1 } }),
  },
  {
    name: 'an unknown version header',
    body: legacy('tools/list', {}),
    headers: { 'mcp-protocol-version': '1999-01-01' },
  },
  {
    name: 'a modern header without the envelope',
    body: legacy('tools/list', {}),
    headers: modernHeaders('tools/list'),
  },
  { name: 'a modern envelope without the headers', body: modern('tools/list', {}) },
  {
    name: 'a modern call whose Mcp-Name differs',
    body: modern('tools/call', { name: 'me.get', arguments: {} }),
    headers: modernHeaders('tools/call', 'events.list'),
  },
  {
    name: 'an Accept without text/event-stream',
    body: legacy('tools/list', {}),
    headers: { accept: 'application/json' },
  },
  { name: 'a session id', body: legacy('tools/list', {}), headers: { 'mcp-session-id': 'abc' } },
];

describe('direct answers to tools/list and tools/call are the SDK answers', () => {
  let t: TestApp;
  let tenant: TestTenant;
  let catalog: CatalogViews;
  let handler: ToolHandler;

  before(async () => {
    ({ t } = await startMcpApp());
    tenant = await createTenant(t.app);
    catalog = new CatalogViews(() => catalogSource(t.app));
    handler = createToolHandler(t.app, () => SERVER_INFO);
  });
  after(async () => {
    await handler.close();
    await t.close();
  });

  const exchangeFor = (query: Case['query']): Exchange => ({
    view: catalog.view(viewOptions(query ?? {})),
    caller: {
      authorization: tenant.agency.authorization,
      serviceClientId: undefined,
      requestId: 'r',
      ip: '127.0.0.1',
    },
    rateLimitHeaders: {},
  });

  const viaSdk = async (item: Case) => {
    const headers = { ...ACCEPT, ...item.headers };
    const response = await handler.fetch(
      new Request('http://localhost/v1/mcp', { method: 'POST', headers }),
      {
        parsedBody: item.body,
        exchange: exchangeFor(item.query),
      },
    );
    return response.json();
  };

  for (const item of DIRECT) {
    test(`direct: ${item.name}`, async () => {
      const exchange = exchangeFor(item.query);
      const direct = await answerDirectly(
        t.app,
        item.body,
        { ...ACCEPT, ...item.headers },
        exchange,
        SERVER_INFO,
      );
      assert.ok(direct, 'answered directly');
      assert.deepEqual(JSON.parse(JSON.stringify(direct)), await viaSdk(item));
      if ((item.body as { method: string }).method === 'tools/call') {
        assert.equal(exchange.rateLimitHeaders['x-ratelimit-limit'], '100000', 'the REST call ran');
      }
    });
  }

  for (const item of SDK_ONLY) {
    test(`to the SDK: ${item.name}`, async () => {
      const direct = await answerDirectly(
        t.app,
        item.body,
        { ...ACCEPT, ...item.headers },
        exchangeFor(item.query),
        SERVER_INFO,
      );
      assert.equal(direct, null);
    });
  }
});
