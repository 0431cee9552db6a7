import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { publicUrl } from '../config.ts';
import { looksLikeKey } from '../platform/auth/keys.ts';
import { CLIENT_HEADER, resolveTenant } from '../platform/auth/tenant.ts';
import { errors } from '../platform/http/errors.ts';
import { Query } from '../platform/http/schemas.ts';
import { answerDirectly } from './direct.ts';
import { createToolHandler, type Exchange, type ServerInfo } from './server.ts';
import { CatalogViews, catalogSource, viewOptions } from './views.ts';

const McpQuery = Query({
  tool_names: Type.Optional(
    Type.Union([Type.Literal('dotted'), Type.Literal('underscore')], {
      description: 'underscore serves crm_contacts_list instead of crm.contacts.list.',
    }),
  ),
  toolsets: Type.Optional(
    Type.String({
      maxLength: 500,
      pattern: '^ *[a-z0-9_-]+( *, *[a-z0-9_-]+)* *$',
      description: 'Comma-separated first name segments to keep: crm,docs,webhooks.',
    }),
  ),
  read_only: Type.Optional(Type.Boolean({ description: 'true keeps the read-only (GET) tools only.' })),
});

/** Query parameters some clients use to carry a key; a key in a URL ends up in logs and histories. */
const CREDENTIAL_PARAMETERS = new Set([
  'api_key',
  'apikey',
  'key',
  'token',
  'access_token',
  'auth',
  'authorization',
]);

/** Request headers that describe the HTTP connection rather than the MCP message, or carry the key. */
const CONNECTION_HEADERS = new Set([
  'host',
  'connection',
  'keep-alive',
  'content-length',
  'transfer-encoding',
  'upgrade',
  'expect',
  'te',
  'trailer',
  'authorization',
  'cookie',
]);

const CORS_EXPOSED = [
  'mcp-protocol-version',
  'x-request-id',
  'x-ratelimit-limit',
  'x-ratelimit-remaining',
  'x-ratelimit-reset',
  'retry-after',
  'www-authenticate',
].join(', ');
const CORS_ALLOWED_HEADERS = [
  'authorization',
  'content-type',
  'accept',
  'mcp-protocol-version',
  'mcp-method',
  'mcp-name',
  'last-event-id',
  'x-service-client-id',
  'x-request-id',
].join(', ');

/**
 * The MCP endpoint `/v1/mcp`: Streamable HTTP, stateless, `POST` only. It authenticates with the REST
 * key rules but is registered outside the tenant scope, so the Origin check and the refusal of keys
 * in the URL come first, and `GET`/`DELETE`/`OPTIONS` need no key. A tool call counts against the
 * key's rate limit through the REST call it runs; the protocol messages around it are not counted.
 */
export const mcpRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { platform } = app;
  const catalog = new CatalogViews(() => catalogSource(app));
  let info: ServerInfo | null = null;
  const serverInfo = (): ServerInfo =>
    (info ??= { name: 'agency-platform', title: 'Agency Platform API', version: catalog.apiVersion() });
  const handler = createToolHandler(app, serverInfo);
  app.addHook('onClose', async () => handler.close());
  const allowedOrigins = new Set(platform.config.mcpAllowedOrigins.map(normalizeOrigin));
  const endpointUrl = publicUrl(platform.config, '/v1/mcp');

  app.addHook('onRequest', async (request, reply) => {
    const origin = request.headers.origin;
    if (origin === undefined) return;
    if (!allowedOrigins.has('*') && !allowedOrigins.has(normalizeOrigin(origin))) {
      throw errors.forbidden(`Origin ${origin} may not call the MCP endpoint; see MCP_ALLOWED_ORIGINS.`);
    }
    reply.headers({
      'access-control-allow-origin': origin,
      'access-control-expose-headers': CORS_EXPOSED,
      vary: 'Origin',
    });
  });

  app.post(
    '/mcp',
    {
      schema: { hide: true, querystring: McpQuery },
      onRequest: async (request) => {
        refuseKeyInUrl(request);
        await resolveTenant(request, platform.keys, platform.clients);
      },
    },
    async (request, reply) => {
      const exchange: Exchange = {
        view: catalog.view(viewOptions(request.query)),
        caller: {
          authorization: request.headers.authorization as string,
          serviceClientId: headerValue(request.headers[CLIENT_HEADER]),
          requestId: request.id,
          ip: request.ip,
        },
        rateLimitHeaders: {},
      };
      const direct = await answerDirectly(app, request.body, request.headers, exchange, serverInfo());
      if (direct) return reply.headers(exchange.rateLimitHeaders).type('application/json').send(direct);

      const response = await handler.fetch(
        new Request(endpointUrl, { method: 'POST', headers: mcpHeaders(request) }),
        { parsedBody: request.body, exchange },
      );
      reply.headers(exchange.rateLimitHeaders);
      if (response.headers.get('content-type')?.startsWith('application/json')) {
        // A JSON answer is complete: sending it as a string spares Fastify a web-stream copy.
        for (const [name, value] of response.headers)
          if (name !== 'content-length') reply.header(name, value);
        return reply.code(response.status).send(await response.text());
      }
      return reply.send(response);
    },
  );

  const methodNotAllowed = async (request: FastifyRequest, reply: FastifyReply) => {
    reply.header('allow', 'POST, OPTIONS');
    throw errors.methodNotAllowed(
      `${request.method} is not supported: the MCP endpoint is stateless and takes POST only (no SSE stream, no sessions).`,
    );
  };
  app.get('/mcp', { schema: { hide: true } }, methodNotAllowed);
  app.delete('/mcp', { schema: { hide: true } }, methodNotAllowed);

  app.options('/mcp', { schema: { hide: true } }, async (_request, reply) => {
    reply
      .headers({
        allow: 'POST, OPTIONS',
        'access-control-allow-methods': 'POST, OPTIONS',
        'access-control-allow-headers': CORS_ALLOWED_HEADERS,
        'access-control-max-age': '600',
      })
      .code(204)
      .send();
  });
};

function refuseKeyInUrl(request: FastifyRequest): void {
  const query = request.query as Record<string, unknown>;
  for (const [name, value] of Object.entries(query)) {
    const values = Array.isArray(value) ? value : [value];
    if (
      CREDENTIAL_PARAMETERS.has(name.toLowerCase()) ||
      values.some((item) => typeof item === 'string' && looksLikeKey(item))
    ) {
      throw errors.invalidRequest(
        'API keys are not accepted in the URL: send Authorization: Bearer <API_KEY> instead, and revoke a key that was put in a URL.',
        { parameter: name },
      );
    }
  }
}

/** The MCP-relevant headers of the request, for the SDK's web-standard handler. */
function mcpHeaders(request: FastifyRequest): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers)) {
    if (value === undefined || CONNECTION_HEADERS.has(name)) continue;
    headers.set(name, Array.isArray(value) ? value.join(', ') : value);
  }
  return headers;
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

function normalizeOrigin(origin: string): string {
  return origin.trim().toLowerCase().replace(/\/+$/, '');
}
