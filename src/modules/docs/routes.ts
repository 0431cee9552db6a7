import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { publicUrl } from '../../config.ts';
import { errors } from '../../platform/http/errors.ts';
import { installRateLimit, limitedAddress } from '../../platform/http/rate-limit.ts';
import { etagOf, RepresentationCache, represent, sendRepresentation } from './cache.ts';
import { loadDocs, type Page, shippedDocsDir } from './content.ts';
import {
  ChangelogEntrySchema,
  ChangelogQuery,
  docsResponses,
  listOf,
  PageListItemSchema,
  PageParams,
  PageQuery,
  PageSchema,
  PagesQuery,
  ProductSchema,
  SearchQuery,
  SearchResultSchema,
} from './schemas.ts';
import * as docs from './service.ts';
import { siteRoutes } from './site.ts';

const EXPOSED_HEADERS = [
  'ETag',
  'Retry-After',
  'X-RateLimit-Limit',
  'X-RateLimit-Remaining',
  'X-RateLimit-Reset',
  'X-Request-Id',
].join(', ');
const CACHE_CONTROL = 'public, max-age=300';
const tags = ['docs'];
/** Public: the OpenAPI document marks these operations as needing no key. */
const security: Array<Record<string, string[]>> = [];

/**
 * The public docs API (`/v1/docs/*`) and the docs site (`/docs`), with no authentication: an
 * Authorization header is ignored. One sliding-window limit per source IP covers both; every
 * response carries CORS, Cache-Control and an ETag, and a matching If-None-Match is 304.
 */
export const docsRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { config, redis } = app.platform;
  const index = await loadDocs(config.docsDir ?? shippedDocsDir());
  const cache = new RepresentationCache(1000);
  const urlOf = (page: Page) => publicUrl(config, `/docs/${page.product.slug}/${page.slug}`);
  /** The cached answer for these request values, built by `build` on the first ask; 304 when the client has it. */
  const answer = (
    request: FastifyRequest,
    reply: FastifyReply,
    key: string | Array<string | number | undefined>,
    build: () => unknown,
  ) => {
    const cacheKey = Array.isArray(key) ? key.map((part) => part ?? '').join('\0') : key;
    return sendRepresentation(
      request,
      reply,
      cache.get(cacheKey, () => represent(JSON.stringify(build()))),
    );
  };

  // Callback hooks: they run on every request, and skip a promise each.
  app.addHook('onRequest', (_request, reply, done) => {
    reply.header('access-control-allow-origin', '*');
    reply.header('access-control-expose-headers', EXPOSED_HEADERS);
    done();
  });
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (!reply.hasHeader('etag')) {
      reply.header('etag', etagOf(typeof payload === 'string' || Buffer.isBuffer(payload) ? payload : ''));
    }
    if (!reply.hasHeader('cache-control')) {
      reply.header('cache-control', reply.statusCode < 400 ? CACHE_CONTROL : 'no-store');
    }
    done(null, payload);
  });
  installRateLimit(app, {
    redis,
    nameSpace: 'rl:docs:',
    keyOf: (request) => limitedAddress(request.ip),
    maxOf: () => config.docsRateLimitPerMinute,
    sliding: true,
  });

  app.options('/v1/docs/*', { schema: { hide: true } }, async (_request, reply) =>
    reply
      .code(204)
      .header('access-control-allow-methods', 'GET, HEAD, OPTIONS')
      .header('access-control-allow-headers', 'Authorization, If-None-Match, Content-Type')
      .header('access-control-max-age', '86400')
      .send(),
  );

  app.get(
    '/v1/docs/products',
    {
      schema: {
        operationId: 'docs.products',
        tags,
        security,
        summary: 'List the documentation products and their categories',
        response: { 200: Type.Object({ data: Type.Array(ProductSchema) }), ...docsResponses() },
      },
    },
    async (request, reply) => answer(request, reply, 'products', () => docs.listProducts(index)),
  );

  app.get(
    '/v1/docs/pages',
    {
      schema: {
        operationId: 'docs.list',
        tags,
        security,
        summary: 'List the pages of a product (titles and descriptions only)',
        querystring: PagesQuery,
        response: { 200: listOf(PageListItemSchema), ...docsResponses(404) },
      },
    },
    async (request, reply) => {
      const { product, category, limit = 50 } = request.query;
      return answer(request, reply, ['pages', product, category, limit], () =>
        docs.listPages(index, { product, category, limit }),
      );
    },
  );

  app.get(
    '/v1/docs/pages/:slug',
    {
      schema: {
        operationId: 'docs.get',
        tags,
        security,
        summary: 'Retrieve a page with its content as sanitized HTML and as plain text',
        params: PageParams,
        querystring: PageQuery,
        response: { 200: Type.Object({ page: PageSchema }), ...docsResponses(404, 409) },
      },
    },
    async (request, reply) => {
      const { slug } = request.params;
      const { product } = request.query;
      return answer(request, reply, ['page', slug, product], () => docs.getPage(index, slug, product, urlOf));
    },
  );

  app.get(
    '/v1/docs/search',
    {
      // Searched in memory, never stored: any text is literal here, a NUL included.
      config: { anyText: true },
      schema: {
        operationId: 'docs.search',
        tags,
        security,
        summary: 'Search the docs: literal, case-insensitive, title matches first',
        querystring: SearchQuery,
        response: {
          200: Type.Object({
            data: Type.Array(SearchResultSchema),
            count: Type.Integer({ description: 'Results in data.' }),
            total: Type.Integer({ description: 'Pages matching, before the limit.' }),
            query: Type.String({ description: 'The query as searched: trimmed.' }),
          }),
          ...docsResponses(404),
        },
      },
    },
    async (request, reply) => {
      const { product, limit = 10 } = request.query;
      const q = request.query.q.trim();
      return answer(request, reply, ['search', product, limit, q], () =>
        docs.search(index, { q, product, limit }, urlOf),
      );
    },
  );

  app.get(
    '/v1/docs/changelog',
    {
      schema: {
        operationId: 'docs.changelog',
        tags,
        security,
        summary: 'List changelog entries, newest first',
        querystring: ChangelogQuery,
        response: { 200: listOf(ChangelogEntrySchema), ...docsResponses(404) },
      },
    },
    async (request, reply) => {
      const { product, type, since, limit = 25 } = request.query;
      return answer(request, reply, ['changelog', product, type, since, limit], () =>
        docs.listChangelog(index, { product, type, since, limit }),
      );
    },
  );

  app.get('/v1/docs/*', { schema: { hide: true } }, async (request) => {
    throw errors.noRoute(request.method, request.url);
  });

  await app.register(siteRoutes, { index, cache });
};
