import { normalizeIP } from '@fastify/rate-limit';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { ApiError, errors } from '../../platform/http/errors.ts';
import { installRateLimit } from '../../platform/http/rate-limit.ts';
import { etagOf, RepresentationCache, represent, sendRepresentation } from './cache.ts';
import {
  type DocsIndex,
  loadDocs,
  type Page,
  type Product,
  parseIsoDate,
  shippedDocsDir,
} from './content.ts';
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
import { searchPages } from './search.ts';
import { siteRoutes } from './site.ts';

const EXPOSED_HEADERS = [
  'ETag',
  'Retry-After',
  'X-RateLimit-Limit',
  'X-RateLimit-Remaining',
  'X-RateLimit-Reset',
  'X-Request-Id',
].join(', ');
export const CACHE_CONTROL = 'public, max-age=300';
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
  const urlOf = (page: Page) => `${config.publicBaseUrl}/docs/${page.product.slug}/${page.slug}`;

  app.addHook('onRequest', async (_request, reply) => {
    reply.header('access-control-allow-origin', '*');
    reply.header('access-control-expose-headers', EXPOSED_HEADERS);
  });
  app.addHook('onSend', async (_request, reply, payload) => {
    if (!reply.hasHeader('etag')) {
      reply.header('etag', etagOf(typeof payload === 'string' || Buffer.isBuffer(payload) ? payload : ''));
    }
    if (!reply.hasHeader('cache-control')) {
      reply.header('cache-control', reply.statusCode < 400 ? CACHE_CONTROL : 'no-store');
    }
    return payload;
  });
  await installRateLimit(app, {
    redis,
    nameSpace: 'rl:docs:',
    keyOf: (request) => normalizeIP(request.ip),
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
    async (request, reply) =>
      sendRepresentation(
        request,
        reply,
        cache.get('products', () => json({ data: index.products.map(productView) })),
      ),
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
      const { product: productSlug, category: categorySlug, limit = 50 } = request.query;
      const key = `pages\0${productSlug}\0${categorySlug ?? ''}\0${limit}`;
      const representation = cache.get(key, () => {
        const product = requireProduct(index, productSlug);
        if (categorySlug !== undefined && !product.categories.some((c) => c.slug === categorySlug)) {
          throw new ApiError(404, 'not_found', `Product ${product.slug} has no category ${categorySlug}.`);
        }
        const pages = index.pages.filter(
          (page) =>
            page.product === product && (categorySlug === undefined || page.category.slug === categorySlug),
        );
        const data = pages
          .slice(0, limit)
          .map((page) => ({ slug: page.slug, title: page.title, description: page.description }));
        return json({ data, count: data.length, total: pages.length });
      });
      return sendRepresentation(request, reply, representation);
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
      const { product: productSlug } = request.query;
      const representation = cache.get(`page\0${slug}\0${productSlug ?? ''}`, () => {
        let candidates = index.pagesWithSlug(slug);
        if (productSlug !== undefined) {
          const product = requireProduct(index, productSlug);
          candidates = candidates.filter((page) => page.product === product);
        }
        if (candidates.length === 0) throw errors.notFound('Page', slug);
        if (candidates.length > 1) {
          const products = candidates.map((page) => page.product.slug);
          throw errors.conflict(
            'ambiguous_slug',
            `Several products have a page "${slug}" (${products.join(', ')}): pass product to choose.`,
            { products },
          );
        }
        const page = candidates[0];
        return json({
          page: {
            slug: page.slug,
            title: page.title,
            description: page.description,
            product: ref(page.product),
            category: ref(page.category),
            url: urlOf(page),
            content_html: page.html,
            content_text: page.text,
          },
        });
      });
      return sendRepresentation(request, reply, representation);
    },
  );

  app.get(
    '/v1/docs/search',
    {
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
      const { product: productSlug, limit = 10 } = request.query;
      const query = request.query.q.trim();
      const representation = cache.get(`search\0${productSlug ?? ''}\0${limit}\0${query}`, () => {
        const product = productSlug === undefined ? null : requireProduct(index, productSlug);
        const pages = product ? index.pages.filter((page) => page.product === product) : index.pages;
        const hits = searchPages(pages, query);
        const data = hits.slice(0, limit).map(({ page, snippet }) => ({
          slug: page.slug,
          title: page.title,
          description: page.description,
          snippet,
          product: ref(page.product),
          category: ref(page.category),
          url: urlOf(page),
        }));
        return json({ data, count: data.length, total: hits.length, query });
      });
      return sendRepresentation(request, reply, representation);
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
      const { product: productSlug, type, since, limit = 25 } = request.query;
      const key = `changelog\0${productSlug ?? ''}\0${type ?? ''}\0${since ?? ''}\0${limit}`;
      const representation = cache.get(key, () => {
        const sinceDate = since === undefined ? null : parseIsoDate(since);
        if (since !== undefined && !sinceDate) {
          throw errors.invalidField('since', 'must be an ISO 8601 date (2026-01-31) or date-time with zone');
        }
        const product = productSlug === undefined ? null : requireProduct(index, productSlug);
        const entries = index.changelog.filter(
          (entry) =>
            (!product || entry.product === product) &&
            (!type || entry.type === type) &&
            (!sinceDate || entry.publishedAt >= sinceDate),
        );
        const data = entries.slice(0, limit).map((entry) => ({
          id: entry.id,
          product: ref(entry.product),
          type: entry.type,
          title: entry.title,
          body: entry.body,
          body_html: entry.bodyHtml,
          published_at: entry.publishedAt.toISOString(),
        }));
        return json({ data, count: data.length, total: entries.length });
      });
      return sendRepresentation(request, reply, representation);
    },
  );

  app.get('/v1/docs/*', { schema: { hide: true } }, async (request) => {
    throw new ApiError(404, 'not_found', `No route for ${request.method} ${request.url.split('?')[0]}.`);
  });

  await app.register(siteRoutes, { index, cache });
};

function json(body: unknown) {
  return represent(JSON.stringify(body));
}

function ref(item: { slug: string; name: string }) {
  return { slug: item.slug, name: item.name };
}

function productView(product: Product) {
  return {
    id: product.id,
    slug: product.slug,
    name: product.name,
    description: product.description,
    icon: product.icon,
    categories: product.categories.map(ref),
  };
}

function requireProduct(index: DocsIndex, slug: string): Product {
  const product = index.product(slug);
  if (!product) throw errors.notFound('Product', slug);
  return product;
}
