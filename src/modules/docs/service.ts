import { errors } from '../../platform/http/errors.ts';
import { type ChangeType, type DocsIndex, type Page, type Product, parseIsoDate } from './content.ts';
import { searchPages } from './search.ts';

/** The docs API's answers, as the routes serialize them. Knows nothing of HTTP but the error it throws. */

/** Where a page lives on the docs site. */
export type UrlOf = (page: Page) => string;

const ref = (item: { slug: string; name: string }) => ({ slug: item.slug, name: item.name });

export function listProducts(index: DocsIndex) {
  return {
    data: index.products.map((product) => ({
      id: product.id,
      slug: product.slug,
      name: product.name,
      description: product.description,
      icon: product.icon,
      categories: product.categories.map(ref),
    })),
  };
}

export function listPages(index: DocsIndex, query: { product: string; category?: string; limit: number }) {
  const product = requireProduct(index, query.product);
  if (query.category !== undefined && !product.categories.some((c) => c.slug === query.category)) {
    throw errors.notFound(`Category ${query.category} of product ${product.slug}`);
  }
  const pages = index.pages.filter(
    (page) =>
      page.product === product && (query.category === undefined || page.category.slug === query.category),
  );
  const data = pages
    .slice(0, query.limit)
    .map((page) => ({ slug: page.slug, title: page.title, description: page.description }));
  return { data, count: data.length, total: pages.length };
}

/** One page; `product` is needed only when several products use the slug (409 `ambiguous_slug`). */
export function getPage(index: DocsIndex, slug: string, productSlug: string | undefined, urlOf: UrlOf) {
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
  const [page] = candidates;
  return {
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
  };
}

export function search(
  index: DocsIndex,
  query: { q: string; product?: string; limit: number },
  urlOf: UrlOf,
) {
  const product = query.product === undefined ? null : requireProduct(index, query.product);
  const pages = product ? index.pages.filter((page) => page.product === product) : index.pages;
  const hits = searchPages(pages, query.q);
  const data = hits.slice(0, query.limit).map(({ page, snippet }) => ({
    slug: page.slug,
    title: page.title,
    description: page.description,
    snippet,
    product: ref(page.product),
    category: ref(page.category),
    url: urlOf(page),
  }));
  return { data, count: data.length, total: hits.length, query: query.q };
}

export function listChangelog(
  index: DocsIndex,
  query: { product?: string; type?: ChangeType; since?: string; limit: number },
) {
  const since = query.since === undefined ? null : parseIsoDate(query.since);
  if (query.since !== undefined && !since) {
    throw errors.invalidField('since', 'must be an ISO 8601 date (2026-01-31) or date-time with zone');
  }
  const product = query.product === undefined ? null : requireProduct(index, query.product);
  const entries = index.changelog.filter(
    (entry) =>
      (!product || entry.product === product) &&
      (!query.type || entry.type === query.type) &&
      (!since || entry.publishedAt >= since),
  );
  const data = entries.slice(0, query.limit).map((entry) => ({
    id: entry.id,
    product: ref(entry.product),
    type: entry.type,
    title: entry.title,
    body: entry.body,
    body_html: entry.bodyHtml,
    published_at: entry.publishedAt.toISOString(),
  }));
  return { data, count: data.length, total: entries.length };
}

function requireProduct(index: DocsIndex, slug: string): Product {
  const product = index.product(slug);
  if (!product) throw errors.notFound('Product', slug);
  return product;
}
