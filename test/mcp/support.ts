import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import {
  Client as ModernClient,
  StreamableHTTPClientTransport as ModernTransport,
} from '@modelcontextprotocol/client';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as LegacyTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Type } from '@sinclair/typebox';
import { newId } from '../../src/platform/db/ids.ts';
import { errors } from '../../src/platform/http/errors.ts';
import { runIdempotent } from '../../src/platform/http/idempotency.ts';
import { byId, pageQuerySchema, pageSchema, paginate } from '../../src/platform/http/pagination.ts';
import {
  Body,
  errorResponses,
  IdempotencyHeaders,
  IdParams,
  Query,
} from '../../src/platform/http/schemas.ts';
import { buildTestApp, type TestApp } from '../helpers.ts';

/** A test app listening on 127.0.0.1 with the widget routes, and its MCP endpoint URL. */
export async function startMcpApp(
  env: Record<string, string> = {},
): Promise<{ t: TestApp; base: string; endpoint: string }> {
  const t = await buildTestApp(env, { extraTenantRoutes: [widgetRoutes] });
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  const address = t.app.server.address();
  if (!address || typeof address === 'string') throw new Error('no port');
  const base = `http://127.0.0.1:${address.port}`;
  return { t, base, endpoint: `${base}/v1/mcp` };
}

export type Era = 'legacy' | 'modern';

/** The calls the tests make, the same for both SDK generations. */
export interface McpClient {
  listTools(): Promise<{ tools: any[] }>;
  callTool(params: { name: string; arguments?: Record<string, unknown> }): Promise<any>;
  close(): Promise<void>;
}

/**
 * An official SDK client over real HTTP: `legacy` is a 1.x `@modelcontextprotocol/sdk` client
 * (the `initialize` handshake), `modern` a 2.x `@modelcontextprotocol/client` pinned to 2026-07-28
 * (`server/discover`, per-request `MCP-Protocol-Version`).
 */
export async function connect(era: Era, url: string, headers: Record<string, string>): Promise<McpClient> {
  if (era === 'legacy') {
    const client = new LegacyClient({ name: 'legacy-test', version: '1.0.0' });
    await client.connect(new LegacyTransport(new URL(url), { requestInit: { headers } }));
    return client as unknown as McpClient;
  }
  const client = new ModernClient(
    { name: 'modern-test', version: '1.0.0' },
    { versionNegotiation: { mode: { pin: '2026-07-28' } } },
  );
  await client.connect(new ModernTransport(new URL(url), { requestInit: { headers } }));
  if (client.getProtocolEra() !== 'modern')
    throw new Error(`expected the modern era, got ${client.getProtocolEra()}`);
  return client as unknown as McpClient;
}

/** The parsed JSON of a tool result's text content. */
export function resultBody(result: { content: { type: string; text: string }[] }): any {
  return JSON.parse(result.content[0].text);
}

/** A raw JSON-RPC POST to the endpoint, for what the SDK clients would not send. */
export function rpc(
  url: string,
  headers: Record<string, string>,
  body: unknown,
  extra: Record<string, string> = {},
): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...headers,
      ...extra,
    },
    body: JSON.stringify(body),
  });
}

const Widget = Type.Object({
  id: Type.String(),
  name: Type.String(),
  size: Type.Integer(),
});

type WidgetRow = { id: string; name: string; size: number };

/**
 * Test-only REST routes covering what real modules have: a creating POST with idempotency, a
 * paginated list, a read, a PUT and a DELETE, all tenant-scoped.
 */
export const widgetRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const widgets = new Map<string, WidgetRow[]>();
  const shelf = (orgId: string, clientId: string) => {
    const key = `${orgId}:${clientId}`;
    if (!widgets.has(key)) widgets.set(key, []);
    return widgets.get(key) as WidgetRow[];
  };

  app.post(
    '/testkit/widgets',
    {
      schema: {
        operationId: 'testkit.widgets.create',
        summary: 'Create a widget',
        tags: ['testkit'],
        headers: IdempotencyHeaders,
        body: Body({
          name: Type.String({ minLength: 1, maxLength: 50, description: 'What the widget is called.' }),
          size: Type.Optional(Type.Integer({ minimum: 1, maximum: 10, description: 'Size, 1 to 10.' })),
        }),
        response: { 201: Type.Object({ widget: Widget }), ...errorResponses(409, 422) },
      },
    },
    async (request, reply) =>
      runIdempotent(app.platform.db, request, reply, 24, async () => {
        const widget = { id: newId(), name: request.body.name, size: request.body.size ?? 1 };
        shelf(request.tenant.orgId, request.tenant.clientId).push(widget);
        return { status: 201, body: { widget } };
      }),
  );

  app.get(
    '/testkit/widgets',
    {
      schema: {
        operationId: 'testkit.widgets.list',
        summary: 'List widgets, newest first',
        tags: ['testkit'],
        querystring: Query({ ...pageQuerySchema }),
        response: { 200: pageSchema(Widget), ...errorResponses() },
      },
    },
    async (request) =>
      paginate(request, byId, async (page) =>
        shelf(request.tenant.orgId, request.tenant.clientId)
          .filter((widget) => page.after === undefined || widget.id < page.after)
          .sort((a, b) => (a.id < b.id ? 1 : -1))
          .slice(0, page.limit),
      ),
  );

  app.get(
    '/testkit/widgets/:id',
    {
      schema: {
        operationId: 'testkit.widgets.get',
        summary: 'Retrieve a widget',
        tags: ['testkit'],
        params: IdParams,
        response: { 200: Type.Object({ widget: Widget }), ...errorResponses(404) },
      },
    },
    async (request) => {
      const widget = shelf(request.tenant.orgId, request.tenant.clientId).find(
        (w) => w.id === request.params.id,
      );
      if (!widget) throw errors.notFound('Widget', request.params.id);
      return { widget };
    },
  );

  app.put(
    '/testkit/widgets/:id',
    {
      schema: {
        operationId: 'testkit.widgets.replace',
        summary: 'Replace a widget',
        tags: ['testkit'],
        params: IdParams,
        body: Body({ name: Type.String({ minLength: 1 }), size: Type.Integer({ minimum: 1, maximum: 10 }) }),
        response: { 200: Type.Object({ widget: Widget }), ...errorResponses(404) },
      },
    },
    async (request) => {
      const widget = shelf(request.tenant.orgId, request.tenant.clientId).find(
        (w) => w.id === request.params.id,
      );
      if (!widget) throw errors.notFound('Widget', request.params.id);
      Object.assign(widget, request.body);
      return { widget };
    },
  );

  app.delete(
    '/testkit/widgets/:id',
    {
      schema: {
        operationId: 'testkit.widgets.delete',
        summary: 'Delete a widget',
        tags: ['testkit'],
        params: IdParams,
        response: { 204: Type.Null(), ...errorResponses(404) },
      },
    },
    async (request, reply) => {
      const list = shelf(request.tenant.orgId, request.tenant.clientId);
      const index = list.findIndex((w) => w.id === request.params.id);
      if (index < 0) throw errors.notFound('Widget', request.params.id);
      list.splice(index, 1);
      return reply.code(204).send(null);
    },
  );
};
