import {
  type AuthInfo,
  createMcpHandler,
  isLegacyRequest,
  ProtocolError,
  ProtocolErrorCode,
  Server,
  WebStandardStreamableHTTPServerTransport,
} from '@modelcontextprotocol/server';
import type { FastifyInstance } from 'fastify';
import { type Caller, callTool } from './call.ts';
import type { CatalogView } from './views.ts';

/** How long a client may cache `tools/list` (2026-07-28 results carry it); the catalog changes only on deploy. */
export const TOOLS_LIST_TTL_MS = 300_000;

export interface ServerInfo {
  name: string;
  title: string;
  version: string;
}

/** What one MCP HTTP request serves with: its catalog view, its caller, and where the REST headers go back. */
export interface Exchange {
  view: CatalogView;
  caller: Caller;
  rateLimitHeaders: Record<string, string>;
}

const INSTRUCTIONS = [
  'Tools mirror the Agency Platform REST API one to one: each tool is a REST operation, its arguments are',
  "the operation's path, query and body parameters, and its result is the REST response body.",
  'List tools take limit and page_token and return next_page_token. An API error comes back as isError',
  'with the error body {error, message, details}. Creating tools accept idempotency_key for safe retries.',
].join(' ');

/** Serves one MCP HTTP request (a POST whose JSON body Fastify already parsed). */
export interface ToolHandler {
  fetch(request: Request, options: { parsedBody: unknown; exchange: Exchange }): Promise<Response>;
  close(): Promise<void>;
}

/**
 * The MCP handler, on the SDK's v2 server. The 2026-07-28 revision (`server/discover`, per-request
 * `MCP-Protocol-Version`) goes to the SDK's `createMcpHandler`; the `initialize`-based 2025 revisions
 * go to a stateless transport per request that answers in plain JSON rather than an SSE stream (the
 * SDK's own legacy fallback always streams), so a call's rate-limit headers reach the HTTP response.
 * Both legs build their per-request `Server` from the same factory, so the eras cannot drift apart.
 */
export function createToolHandler(app: FastifyInstance, serverInfo: () => ServerInfo): ToolHandler {
  const factory = (exchange: Exchange) => {
    const server = new Server(serverInfo(), {
      capabilities: { tools: {} },
      instructions: INSTRUCTIONS,
      cacheHints: { 'tools/list': { ttlMs: TOOLS_LIST_TTL_MS, cacheScope: 'public' } },
    });
    server.setRequestHandler('tools/list', () => ({ tools: exchange.view.tools as never }));
    server.setRequestHandler('tools/call', async (request) => {
      const tool = exchange.view.byName.get(request.params.name);
      if (!tool) {
        throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown tool: ${request.params.name}`);
      }
      const outcome = await callTool(app, tool, request.params.arguments ?? {}, exchange.caller);
      Object.assign(exchange.rateLimitHeaders, outcome.rateLimitHeaders);
      return outcome.result;
    });
    return server;
  };
  const authInfo = (exchange: Exchange): AuthInfo => ({
    token: '',
    clientId: '',
    scopes: [],
    extra: { exchange },
  });

  const modern = createMcpHandler(({ authInfo }) => factory(authInfo?.extra?.exchange as Exchange), {
    legacy: 'reject',
    responseMode: 'json',
  });

  const legacy = async (request: Request, parsedBody: unknown, exchange: Exchange) => {
    const server = factory(exchange);
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    await server.connect(transport);
    try {
      return await transport.handleRequest(request, { parsedBody, authInfo: authInfo(exchange) });
    } finally {
      transport.close().catch(() => {});
      server.close().catch(() => {});
    }
  };

  return {
    fetch: async (request, { parsedBody, exchange }) =>
      (await isLegacyRequest(request, parsedBody))
        ? legacy(request, parsedBody, exchange)
        : modern.fetch(request, { parsedBody, authInfo: authInfo(exchange) }),
    close: () => modern.close(),
  };
}
