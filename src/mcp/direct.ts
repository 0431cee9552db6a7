import {
  CLIENT_CAPABILITIES_META_KEY,
  PROTOCOL_VERSION_META_KEY,
  SERVER_INFO_META_KEY,
  SUPPORTED_PROTOCOL_VERSIONS,
} from '@modelcontextprotocol/server';
import type { FastifyInstance } from 'fastify';
import { callTool } from './call.ts';
import { type Exchange, type ServerInfo, TOOLS_LIST_TTL_MS } from './server.ts';

const MODERN_PROTOCOL_VERSION = '2026-07-28';

type Headers = Record<string, string | string[] | undefined>;

interface ToolsRequest {
  id: string | number;
  method: 'tools/list' | 'tools/call';
  name: string;
  arguments: Record<string, unknown>;
  modern: boolean;
}

/**
 * Answers the two requests that carry an MCP client's traffic, `tools/call` and `tools/list`, when
 * they are plain and well-formed, without building an SDK server and transport for them: that costs
 * some 300 µs of CPU per request, ten times the REST call a tool runs. Anything else (`initialize`,
 * `server/discover`, notifications, batches, an unknown tool, an unusual header, any malformed
 * message) returns null and is answered by the SDK. The answers are the SDK's, field for field;
 * `test/mcp/direct.test.ts` compares the two on every shape this function accepts.
 */
export async function answerDirectly(
  app: FastifyInstance,
  body: unknown,
  headers: Headers,
  exchange: Exchange,
  serverInfo: ServerInfo,
): Promise<Record<string, unknown> | null> {
  const request = plainToolsRequest(body, headers);
  if (!request) return null;

  let result: Record<string, unknown>;
  if (request.method === 'tools/list') {
    result = { tools: exchange.view.tools };
    if (request.modern) Object.assign(result, { ttlMs: TOOLS_LIST_TTL_MS, cacheScope: 'public' });
  } else {
    const tool = exchange.view.byName.get(request.name);
    if (!tool) return null;
    const outcome = await callTool(app, tool, request.arguments, exchange.caller);
    Object.assign(exchange.rateLimitHeaders, outcome.rateLimitHeaders);
    result = outcome.result;
  }
  if (request.modern) {
    result = { ...result, resultType: 'complete', _meta: { [SERVER_INFO_META_KEY]: serverInfo } };
  }
  return { result, jsonrpc: '2.0', id: request.id };
}

function plainToolsRequest(body: unknown, headers: Headers): ToolsRequest | null {
  if (!isObject(body) || body.jsonrpc !== '2.0') return null;
  const { id, method } = body;
  if (!(typeof id === 'string' || (typeof id === 'number' && Number.isSafeInteger(id)))) return null;
  if (method !== 'tools/list' && method !== 'tools/call') return null;
  if (Object.keys(body).length !== 4 || !isObject(body.params)) return null;
  if (!acceptsBoth(headers.accept) || headers['mcp-session-id'] !== undefined) return null;

  const params = body.params;
  const meta = params._meta;
  const version = headers['mcp-protocol-version'];
  let modern: boolean;
  if (meta === undefined) {
    if (version !== undefined && !SUPPORTED_PROTOCOL_VERSIONS.includes(version as string)) return null;
    modern = false;
  } else {
    if (
      !isObject(meta) ||
      Object.keys(meta).length !== 2 ||
      meta[PROTOCOL_VERSION_META_KEY] !== MODERN_PROTOCOL_VERSION ||
      !isObject(meta[CLIENT_CAPABILITIES_META_KEY]) ||
      version !== MODERN_PROTOCOL_VERSION ||
      headers['mcp-method'] !== method
    ) {
      return null;
    }
    modern = true;
  }

  if (method === 'tools/list') {
    if (Object.keys(params).some((key) => key !== '_meta')) return null;
    return { id, method, name: '', arguments: {}, modern };
  }
  const { name, arguments: args } = params;
  if (typeof name !== 'string' || (args !== undefined && !isObject(args))) return null;
  if (Object.keys(params).some((key) => key !== '_meta' && key !== 'name' && key !== 'arguments'))
    return null;
  if (modern && headers['mcp-name'] !== name) return null;
  return { id, method, name, arguments: args ?? {}, modern };
}

function acceptsBoth(accept: string | string[] | undefined): boolean {
  const value = Array.isArray(accept) ? accept.join(',') : (accept ?? '');
  return value.includes('application/json') && value.includes('text/event-stream');
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
