import type { FastifyInstance } from 'fastify';
import type { ErrorBody } from '../platform/http/errors.ts';
import type { ToolDefinition } from './catalog.ts';

/** Who calls a tool: the headers of the MCP request that the REST call carries unchanged. */
export interface Caller {
  authorization: string;
  serviceClientId: string | undefined;
  requestId: string;
  ip: string;
}

export interface ToolResult {
  [key: string]: unknown;
  content: { type: 'text'; text: string }[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

export interface ToolOutcome {
  result: ToolResult;
  /** The REST call's rate-limit headers, passed on to the MCP response. */
  rateLimitHeaders: Record<string, string>;
}

const RATE_LIMIT_HEADERS = ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'retry-after'];

/**
 * Runs a tool as its REST operation, in process: the same route, validation, tenancy, idempotency,
 * FUEL and rate limit as over HTTP. The response body is the result; a non-2xx is `isError`.
 */
export async function callTool(
  app: FastifyInstance,
  tool: ToolDefinition,
  args: Record<string, unknown>,
  caller: Caller,
): Promise<ToolOutcome> {
  const request = restRequest(tool, args);
  if ('error' in request) return { result: errorResult(request.error), rateLimitHeaders: {} };

  const headers: Record<string, string> = {
    ...request.headers,
    authorization: caller.authorization,
    'x-request-id': caller.requestId,
  };
  if (caller.serviceClientId !== undefined) headers['x-service-client-id'] = caller.serviceClientId;
  if (request.body !== undefined) headers['content-type'] = 'application/json';

  let response: Awaited<ReturnType<FastifyInstance['inject']>>;
  try {
    response = await app.inject({
      method: tool.method,
      url: request.url,
      headers,
      remoteAddress: caller.ip,
      ...(request.body !== undefined ? { payload: JSON.stringify(request.body) } : {}),
    });
  } catch (error) {
    app.log.error({ err: error, reqId: caller.requestId, tool: tool.name }, 'tool call failed');
    const body: ErrorBody = {
      error: 'internal_error',
      message: 'An unexpected error occurred. It has been logged; retry later.',
    };
    return { result: errorResult(body), rateLimitHeaders: {} };
  }

  const rateLimitHeaders: Record<string, string> = {};
  for (const name of RATE_LIMIT_HEADERS) {
    const value = response.headers[name];
    if (value !== undefined) rateLimitHeaders[name] = String(value);
  }

  const isError = response.statusCode >= 400;
  if (response.body === '') {
    const text = `${tool.method} ${request.url.split('?')[0]} answered ${response.statusCode} with no body.`;
    return {
      result: { content: [{ type: 'text', text }], ...(isError ? { isError } : {}) },
      rateLimitHeaders,
    };
  }
  const structured = parseObject(response.body);
  return {
    result: {
      content: [{ type: 'text', text: response.body }],
      ...(structured ? { structuredContent: structured } : {}),
      ...(isError ? { isError } : {}),
    },
    rateLimitHeaders,
  };
}

interface RestRequest {
  url: string;
  headers: Record<string, string>;
  body: unknown;
}

/** Places each argument where the operation takes it; an argument the tool does not know goes where REST validation refuses it. */
function restRequest(
  tool: ToolDefinition,
  args: Record<string, unknown>,
): RestRequest | { error: ErrorBody } {
  let path = tool.path;
  const query = new URLSearchParams();
  const headers: Record<string, string> = {};
  const body: Record<string, unknown> | undefined = tool.hasBody ? {} : undefined;
  let wholeBody: unknown;

  const missing: string[] = [];
  for (const [argument, target] of tool.arguments) {
    if (target.in === 'path' && (args[argument] === undefined || args[argument] === null))
      missing.push(argument);
  }
  if (missing.length) {
    return {
      error: {
        error: 'validation_error',
        message: missing.map((name) => `${name} is required`).join('; '),
        details: { fields: missing.map((field) => ({ field, message: 'is required' })) },
      },
    };
  }

  for (const [argument, value] of Object.entries(args)) {
    if (value === undefined) continue;
    const target = tool.arguments.get(argument);
    if (!target) {
      if (body) body[argument] = value;
      else appendQuery(query, argument, value);
      continue;
    }
    switch (target.in) {
      case 'path':
        path = path.replace(`{${target.name}}`, encodeURIComponent(String(value)));
        break;
      case 'query':
        appendQuery(query, target.name, value);
        break;
      case 'header':
        if (value !== null) headers[target.name] = String(value);
        break;
      case 'body-field':
        if (body) body[target.name] = value;
        break;
      case 'body':
        wholeBody = value;
        break;
    }
  }
  const search = query.toString();
  return {
    url: search ? `${path}?${search}` : path,
    headers,
    body: wholeBody !== undefined ? wholeBody : body,
  };
}

function appendQuery(query: URLSearchParams, name: string, value: unknown): void {
  if (value === null || value === undefined) return;
  if (Array.isArray(value)) {
    for (const item of value) appendQuery(query, name, item);
    return;
  }
  query.append(name, typeof value === 'object' ? JSON.stringify(value) : String(value));
}

function parseObject(text: string): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(text);
    return value !== null && typeof value === 'object' && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : null;
  } catch {
    return null;
  }
}

function errorResult(body: ErrorBody): ToolResult {
  return {
    content: [{ type: 'text', text: JSON.stringify(body) }],
    structuredContent: body as unknown as Record<string, unknown>,
    isError: true,
  };
}
