import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import { HTML_TYPE, type RepresentationCache, represent, sendRepresentation } from './cache.ts';
import type { DocsIndex, Page, Product } from './content.ts';

/**
 * The docs as a readable website at `/docs`: plain HTML and one inline style sheet, no script at all
 * (the Content-Security-Policy forbids it). Search results link here.
 */
const CSP =
  "default-src 'none'; style-src 'unsafe-inline'; img-src http: https:; base-uri 'none'; form-action 'self'";

const STYLE = `
body{font:16px/1.6 system-ui,sans-serif;margin:0;color:#1f2328;background:#fff}
header{padding:12px 24px;border-bottom:1px solid #d0d7de}header a{color:inherit;text-decoration:none;font-weight:600}
.layout{display:flex;gap:32px;max-width:1200px;margin:0 auto;padding:24px}
nav{flex:0 0 240px;font-size:14px}nav h3{font-size:12px;text-transform:uppercase;color:#59636e;margin:16px 0 4px}
nav ul{list-style:none;padding:0;margin:0}nav a{color:#0969da;text-decoration:none}nav a[aria-current]{font-weight:600}
main{flex:1;min-width:0}.lede{color:#59636e;font-size:18px}
pre{background:#f6f8fa;padding:12px;overflow:auto;border-radius:6px}code{font:13px ui-monospace,monospace}
table{border-collapse:collapse}th,td{border:1px solid #d0d7de;padding:4px 8px;vertical-align:top}
.entry{border-top:1px solid #d0d7de;padding-top:8px}.type{font-size:12px;text-transform:uppercase;color:#59636e}
form{margin:0}input[type=search]{width:100%;padding:6px;box-sizing:border-box}
`;

const escapeHtml = (text: string) =>
  text.replace(
    /[&<>"']/g,
    (char) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[char]!,
  );

function layout(title: string, nav: string, main: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${escapeHtml(title)} · Agency Platform docs</title><style>${STYLE}</style></head>
<body><header><a href="/docs">Agency Platform docs</a></header>
<div class="layout"><nav>${nav}</nav><main>${main}</main></div></body></html>`;
}

function productNav(index: DocsIndex, product: Product, current?: Page): string {
  const sections = product.categories.map((category) => {
    const links = index.pages
      .filter((page) => page.product === product && page.category === category)
      .map(
        (page) =>
          `<li><a href="/docs/${product.slug}/${page.slug}"${page === current ? ' aria-current="page"' : ''}>${escapeHtml(page.title)}</a></li>`,
      );
    return links.length ? `<h3>${escapeHtml(category.name)}</h3><ul>${links.join('')}</ul>` : '';
  });
  return `<p><a href="/docs/${product.slug}">${escapeHtml(product.name)}</a></p>${sections.join('')}`;
}

function productsNav(index: DocsIndex): string {
  const links = index.products.map(
    (product) => `<li><a href="/docs/${product.slug}">${escapeHtml(product.name)}</a></li>`,
  );
  return `<h3>Products</h3><ul>${links.join('')}<li><a href="/docs/changelog">Changelog</a></li></ul>`;
}

function homePage(index: DocsIndex): string {
  const products = index.products.map((product) => {
    const pages = index.pages.filter((page) => page.product === product);
    return `<section><h2><a href="/docs/${product.slug}">${escapeHtml(product.name)}</a></h2>
<p>${escapeHtml(product.description)}</p><p>${pages.length} page${pages.length === 1 ? '' : 's'}</p></section>`;
  });
  return layout(
    'Documentation',
    productsNav(index),
    `<h1>Agency Platform documentation</h1>
<p class="lede">The REST API, webhooks, MCP endpoint and wallet feed of the Agency Platform.
The same pages are served as JSON by <code>GET /v1/docs/pages</code> and searchable with <code>GET /v1/docs/search</code>.</p>
${products.join('\n')}`,
  );
}

function productPage(index: DocsIndex, product: Product): string {
  const sections = product.categories.map((category) => {
    const items = index.pages
      .filter((page) => page.product === product && page.category === category)
      .map(
        (page) =>
          `<li><a href="/docs/${product.slug}/${page.slug}">${escapeHtml(page.title)}</a>: ${escapeHtml(page.description)}</li>`,
      );
    return items.length ? `<h2>${escapeHtml(category.name)}</h2><ul>${items.join('')}</ul>` : '';
  });
  return layout(
    product.name,
    productNav(index, product),
    `<h1>${escapeHtml(product.name)}</h1><p class="lede">${escapeHtml(product.description)}</p>${sections.join('')}`,
  );
}

function articlePage(index: DocsIndex, page: Page): string {
  return layout(
    page.title,
    productNav(index, page.product, page),
    `<p class="type">${escapeHtml(page.product.name)} · ${escapeHtml(page.category.name)}</p>
<h1>${escapeHtml(page.title)}</h1><p class="lede">${escapeHtml(page.description)}</p>
<article>${page.html}</article>`,
  );
}

function changelogPage(index: DocsIndex): string {
  const entries = index.changelog.map(
    (
      entry,
    ) => `<section class="entry"><p class="type">${escapeHtml(entry.type)} · ${escapeHtml(entry.product.name)} ·
<time datetime="${entry.publishedAt.toISOString()}">${entry.publishedAt.toISOString().slice(0, 10)}</time></p>
<h2>${escapeHtml(entry.title)}</h2>${entry.bodyHtml}</section>`,
  );
  return layout('Changelog', productsNav(index), `<h1>Changelog</h1>${entries.join('\n')}`);
}

function notFoundPage(index: DocsIndex, path: string): string {
  return layout(
    'Not found',
    productsNav(index),
    `<h1>Not found</h1><p>There is no documentation page at <code>${escapeHtml(path)}</code>.</p>`,
  );
}

export const siteRoutes: FastifyPluginAsync<{ index: DocsIndex; cache: RepresentationCache }> = async (
  app,
  { index, cache },
) => {
  const hidden = { schema: { hide: true } };
  const html = (key: string, build: () => string) =>
    cache.get(`site\0${key}`, () => represent(build(), HTML_TYPE));
  const notFound = (reply: FastifyReply, path: string) =>
    reply.code(404).type(HTML_TYPE).send(notFoundPage(index, path));

  app.addHook('onRequest', async (_request, reply) => {
    reply.header('content-security-policy', CSP);
    reply.header('x-content-type-options', 'nosniff');
  });

  app.get('/docs', hidden, async (request, reply) =>
    sendRepresentation(
      request,
      reply,
      html('home', () => homePage(index)),
    ),
  );

  app.get('/docs/changelog', hidden, async (request, reply) =>
    sendRepresentation(
      request,
      reply,
      html('changelog', () => changelogPage(index)),
    ),
  );

  app.get<{ Params: { product: string } }>('/docs/:product', hidden, async (request, reply) => {
    const product = index.product(request.params.product);
    if (!product) return notFound(reply, request.url);
    return sendRepresentation(
      request,
      reply,
      html(`product\0${product.slug}`, () => productPage(index, product)),
    );
  });

  app.get<{ Params: { product: string; slug: string } }>(
    '/docs/:product/:slug',
    hidden,
    async (request, reply) => {
      const page = index
        .pagesWithSlug(request.params.slug)
        .find((candidate) => candidate.product.slug === request.params.product);
      if (!page) return notFound(reply, request.url);
      return sendRepresentation(
        request,
        reply,
        html(`page\0${page.product.slug}\0${page.slug}`, () => articlePage(index, page)),
      );
    },
  );
};
