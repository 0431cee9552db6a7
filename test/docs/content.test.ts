import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type DocsIndex, loadDocs, shippedDocsDir } from '../../src/modules/docs/content.ts';
import { buildTestApp, type TestApp } from '../helpers.ts';

const METHODS = ['get', 'post', 'put', 'patch', 'delete'];
const METHOD = '(?:GET|POST|PUT|PATCH|DELETE)';
/**
 * `METHOD /v1/path` as written in a page: in prose, in code spans, or across a table's cells
 * (`| GET | /v1/path |`), with several methods sharing a path (`GET, PATCH /v1/x/{id}`).
 */
const MENTION = new RegExp(`\\b(${METHOD}(?:\\s*,\\s*${METHOD})*)[\\s\`|*]+(/v1/[^\\s\`|)"'<>,]*)`, 'g');

/** `/v1/crm/contacts/:id/`, `/v1/crm/contacts/{contactId}` and `/v1/crm/contacts/{id}` are one route. */
function normalizeRoute(method: string, route: string): string {
  const clean = route
    .split('?')[0]
    .replace(/[.:;]+$/, '')
    .replace(/\{[^}/]*\}/g, '{}')
    .replace(/:[A-Za-z_]\w*/g, '{}')
    .replace(/(.)\/+$/, '$1');
  return `${method.toUpperCase()} ${clean}`;
}

function mentionedRoutes(markdown: string): Set<string> {
  const routes = new Set<string>();
  for (const match of markdown.matchAll(MENTION)) {
    for (const method of match[1].split(',')) routes.add(normalizeRoute(method.trim(), match[2]));
  }
  return routes;
}

describe('the shipped documentation', () => {
  let t: TestApp;
  let docs: DocsIndex;

  before(async () => {
    t = await buildTestApp();
    docs = await loadDocs(shippedDocsDir());
  });
  after(() => t.close());

  test('mentions of routes are recognised in prose, code and tables, whatever the parameter names', () => {
    const found = mentionedRoutes(
      [
        'Call `GET /v1/events/{id}` or GET /v1/me.',
        '| GET, PATCH, DELETE | /v1/crm/contacts/{contactId} |',
        'then POST /v1/crm/contacts/:id/phones?x=1.',
      ].join('\n'),
    );
    assert.deepEqual(
      [...found].sort(),
      [
        'DELETE /v1/crm/contacts/{}',
        'GET /v1/crm/contacts/{}',
        'GET /v1/events/{}',
        'GET /v1/me',
        'PATCH /v1/crm/contacts/{}',
        'POST /v1/crm/contacts/{}/phones',
      ].sort(),
    );
  });

  test('every route of the OpenAPI document is mentioned in some page as METHOD /v1/path', async () => {
    const document = (await t.app.inject({ method: 'GET', url: '/v1/openapi.json' })).json();
    const mentioned = new Set<string>();
    for (const page of docs.pages) for (const route of mentionedRoutes(page.source)) mentioned.add(route);

    const missing: string[] = [];
    for (const [route, operations] of Object.entries<Record<string, unknown>>(document.paths)) {
      if (route.startsWith('/v1/docs/') || route === '/v1/openapi.json') continue;
      for (const method of Object.keys(operations).filter((name) => METHODS.includes(name))) {
        if (!mentioned.has(normalizeRoute(method, route))) missing.push(`${method.toUpperCase()} ${route}`);
      }
    }
    assert.deepEqual(
      missing,
      [],
      `These routes of /v1/openapi.json are in no page of docs/pages (write them as "METHOD /v1/path"):\n  ${missing.join('\n  ')}`,
    );
  });

  test('every page and changelog entry is valid: categories declared, internal links resolve', () => {
    assert.deepEqual(docs.problems, [], docs.problems.join('\n'));
    assert.ok(docs.pages.length > 0);
    assert.ok(docs.changelog.length > 0);

    const broken: string[] = [];
    const sources = [
      ...docs.pages.map((page) => ({
        where: `docs/pages/${page.product.slug}/${page.slug}.md`,
        source: page.source,
      })),
      ...docs.changelog.map((entry) => ({ where: `docs/changelog/${entry.id}.md`, source: entry.body })),
    ];
    for (const { where, source } of sources) {
      for (const [, target] of source.matchAll(/\]\((\/docs[^)#\s]*)/g)) {
        const [, , product, slug, extra] = target.split('/');
        const exists =
          target === '/docs' ||
          (product === 'changelog' && slug === undefined) ||
          (docs.product(product) !== undefined && slug === undefined) ||
          (extra === undefined &&
            docs.pagesWithSlug(slug ?? '').some((page) => page.product.slug === product));
        if (!exists) broken.push(`${where}: ${target}`);
      }
    }
    assert.deepEqual(broken, [], `Links to docs pages that do not exist:\n  ${broken.join('\n  ')}`);
  });

  test('the six products are listed, each with categories', () => {
    assert.deepEqual(
      docs.products.map((product) => product.slug),
      ['platform', 'crm', 'messaging', 'webhooks', 'mcp', 'wallet-feed'],
    );
    for (const product of docs.products) assert.ok(product.categories.length > 0, product.slug);
  });

  test('the docs API serves the shipped pages, and the search finds a common word', async () => {
    const response = await t.app.inject({ method: 'GET', url: '/v1/docs/search?q=request' });
    assert.equal(response.statusCode, 200);
    assert.ok(response.json().total >= 5, `only ${response.json().total} pages mention "request"`);
    const page = await t.app.inject({
      method: 'GET',
      url: '/v1/docs/pages/getting-started?product=platform',
    });
    assert.match(page.json().page.content_text, /npm install && npm start/);
  });
});
