import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { buildTestApp, type TestApp } from '../helpers.ts';

const FIXTURE = path.join(import.meta.dirname, 'fixture');
const BASE_URL = 'https://api.example.test';

describe('public docs API', () => {
  let t: TestApp;

  before(async () => {
    t = await buildTestApp({
      DOCS_DIR: FIXTURE,
      PUBLIC_BASE_URL: BASE_URL,
      DOCS_RATE_LIMIT_PER_MINUTE: '100000',
    });
  });
  after(() => t.close());

  const get = (url: string, headers: Record<string, string> = {}) =>
    t.app.inject({ method: 'GET', url, headers });

  const search = async (q: string, extra = '') => {
    const response = await get(`/v1/docs/search?q=${encodeURIComponent(q)}${extra}`);
    assert.equal(response.statusCode, 200, `q=${q}: ${response.body}`);
    return response.json();
  };

  test('products list with their categories', async () => {
    const response = await get('/v1/docs/products');
    assert.equal(response.statusCode, 200);
    const { data } = response.json();
    assert.deepEqual(
      data.map((product: any) => product.slug),
      ['alpha', 'beta'],
    );
    assert.deepEqual(Object.keys(data[0]).sort(), [
      'categories',
      'description',
      'icon',
      'id',
      'name',
      'slug',
    ]);
    assert.deepEqual(data[0].categories, [
      { slug: 'guides', name: 'Guides' },
      { slug: 'reference', name: 'Reference' },
    ]);
  });

  test('an Authorization header is ignored, never rejected', async () => {
    for (const authorization of ['Bearer not-a-key', `Bearer gc_live_${'A'.repeat(43)}`, 'Basic abc', '']) {
      const response = await get('/v1/docs/products', { authorization });
      assert.equal(response.statusCode, 200, authorization);
    }
  });

  test('pages of a product: slug, title and description only, in reading order, filtered by category', async () => {
    const response = await get('/v1/docs/pages?product=alpha');
    assert.equal(response.statusCode, 200);
    const body = response.json();
    assert.deepEqual(
      body.data.map((page: any) => page.slug),
      ['overview', 'delivery', 'hostile', 'special'],
    );
    assert.deepEqual(Object.keys(body.data[0]).sort(), ['description', 'slug', 'title']);
    assert.equal(body.count, 4);
    assert.equal(body.total, 4);

    const guides = (await get('/v1/docs/pages?product=alpha&category=reference')).json();
    assert.deepEqual(
      guides.data.map((page: any) => page.slug),
      ['delivery', 'hostile', 'special'],
    );
    const limited = (await get('/v1/docs/pages?product=alpha&limit=2')).json();
    assert.equal(limited.data.length, 2);
    assert.equal(limited.count, 2);
    assert.equal(limited.total, 4);
  });

  test('a page by slug, with content_html and content_text', async () => {
    const response = await get('/v1/docs/pages/delivery');
    assert.equal(response.statusCode, 200);
    const { page } = response.json();
    assert.equal(page.slug, 'delivery');
    assert.equal(page.title, 'Delivery');
    assert.deepEqual(page.product, { slug: 'alpha', name: 'Alpha' });
    assert.deepEqual(page.category, { slug: 'reference', name: 'Reference' });
    assert.equal(page.url, `${BASE_URL}/docs/alpha/delivery`);
    assert.match(page.content_html, /^<p>Webhooks are retried\./);
    assert.equal(
      page.content_text,
      'Webhooks are retried. Webhooks are signed. Webhooks time out after 10 s.',
    );
  });

  test('a slug used by two products is 409 ambiguous_slug listing them; product disambiguates', async () => {
    const ambiguous = await get('/v1/docs/pages/overview');
    assert.equal(ambiguous.statusCode, 409);
    assert.equal(ambiguous.json().error, 'ambiguous_slug');
    assert.deepEqual(ambiguous.json().details.products, ['alpha', 'beta']);

    const beta = await get('/v1/docs/pages/overview?product=beta');
    assert.equal(beta.statusCode, 200);
    assert.equal(beta.json().page.title, 'Beta overview');
  });

  test('unknown product, category or page is 404 not_found', async () => {
    for (const url of [
      '/v1/docs/pages?product=gamma',
      '/v1/docs/pages?product=alpha&category=nope',
      '/v1/docs/pages/nope',
      '/v1/docs/pages/delivery?product=beta',
      '/v1/docs/pages/delivery?product=gamma',
      '/v1/docs/search?q=a&product=gamma',
      '/v1/docs/changelog?product=gamma',
      '/v1/docs/unknown',
      `/v1/docs/pages/${'a'.repeat(101)}`,
    ]) {
      const response = await get(url);
      assert.equal(response.statusCode, 404, url);
      assert.equal(response.json().error, 'not_found', url);
      assert.equal(typeof response.json().message, 'string', url);
    }
  });

  test('every validation rule answers 400 validation_error with the failing field', async () => {
    const cases: Array<[string, string]> = [
      ['/v1/docs/pages', 'product'],
      ['/v1/docs/pages?product=', 'product'],
      ['/v1/docs/pages?product=alpha&limit=0', 'limit'],
      ['/v1/docs/pages?product=alpha&limit=201', 'limit'],
      ['/v1/docs/pages?product=alpha&limit=ten', 'limit'],
      ['/v1/docs/pages?product=alpha&category=', 'category'],
      ['/v1/docs/pages?product=alpha&color=red', 'color'],
      ['/v1/docs/pages?product=alpha&product=beta', 'product'],
      ['/v1/docs/pages/overview?product=', 'product'],
      ['/v1/docs/pages/overview?lang=en', 'lang'],
      ['/v1/docs/search', 'q'],
      ['/v1/docs/search?q=', 'q'],
      ['/v1/docs/search?q=%20%20%20', 'q'],
      [`/v1/docs/search?q=${'x'.repeat(201)}`, 'q'],
      ['/v1/docs/search?q=a&q=b', 'q'],
      ['/v1/docs/search?q=a&limit=0', 'limit'],
      ['/v1/docs/search?q=a&limit=51', 'limit'],
      ['/v1/docs/search?q=a&page=2', 'page'],
      ['/v1/docs/changelog?limit=0', 'limit'],
      ['/v1/docs/changelog?limit=101', 'limit'],
      ['/v1/docs/changelog?type=feat', 'type'],
      ['/v1/docs/changelog?since=yesterday', 'since'],
      ['/v1/docs/changelog?since=2026-02-30', 'since'],
      ['/v1/docs/changelog?since=2026-01-10T09:00:00', 'since'],
      ['/v1/docs/changelog?since=', 'since'],
    ];
    for (const [url, field] of cases) {
      const response = await get(url);
      assert.equal(response.statusCode, 400, `${url}: ${response.body}`);
      const body = response.json();
      assert.equal(body.error, 'validation_error', url);
      assert.equal(typeof body.message, 'string', url);
      assert.ok(
        body.details.fields.some((entry: any) => entry.field === field),
        `${url}: expected a field error on ${field}, got ${JSON.stringify(body.details)}`,
      );
    }
    const longest = await get(`/v1/docs/search?q=${'x'.repeat(200)}`);
    assert.equal(longest.statusCode, 200);
  });

  test('search: title matches first, then description, then text by occurrences; snippet and url', async () => {
    const body = await search('WEBHOOKS');
    assert.equal(body.query, 'WEBHOOKS');
    assert.deepEqual(
      body.data.map((hit: any) => `${hit.product.slug}/${hit.slug}`),
      ['beta/webhooks', 'alpha/delivery', 'alpha/overview'],
    );
    assert.equal(body.count, 3);
    assert.equal(body.total, 3);
    const [title, description, text] = body.data;
    assert.deepEqual(Object.keys(title).sort(), [
      'category',
      'description',
      'product',
      'slug',
      'snippet',
      'title',
      'url',
    ]);
    assert.equal(title.url, `${BASE_URL}/docs/beta/webhooks`);
    assert.deepEqual(title.category, { slug: 'guides', name: 'Guides' });
    assert.equal(title.snippet, 'How to receive events.');
    assert.match(description.snippet, /^Webhooks are retried/);
    assert.match(text.snippet, /mentions webhooks once/);

    const limited = await search('webhooks', '&limit=1');
    assert.equal(limited.count, 1);
    assert.equal(limited.total, 3);
    const beta = await search('webhooks', '&product=beta');
    assert.deepEqual(
      beta.data.map((hit: any) => hit.slug),
      ['webhooks'],
    );
  });

  test('search: a long page gives a short snippet around the first match, marked where cut', async () => {
    const body = await search('ümlaut');
    assert.equal(body.data.length, 1);
    const { snippet } = body.data[0];
    assert.ok(snippet.length <= 200, snippet);
    assert.ok(snippet.startsWith('…'), snippet);
    assert.match(snippet, /ümlaut\.$/);
  });

  test('search: special characters are literal and never an error', async () => {
    const special = ['alpha/special'];
    const cases: Array<[string, string[]]> = [
      ['%', special],
      ['100%', special],
      ['_', special],
      ['rows_with', special],
      ['%_%', []],
      ["'", special],
      ["it's", special],
      ['"quoted"', special],
      ['"', special],
      ['a.*b', special],
      ['.*', special],
      ['a.b', []],
      ['(x|y)', special],
      ['x|y', special],
      ['[abc]', special],
      ['\\d+', special],
      ['\\d', special],
      ['d+', special],
      ['a^b$c', special],
      ['^', special],
      ['$', special],
      ['back\\slash', special],
      ['{1,2}', special],
      ['a+b?c', special],
      ['?', special],
      ['*', special],
      ['\\', special],
      ['🚀', special],
      ['💥', []],
      ['ÜNÏCÖDÉ', special],
      ['straße', special],
      ['İstanbul', special],
      ['istanbul', []],
      ['U\u0308nïcödé', special],
      ['<script>', []],
      ['%00', []],
      ['\u0000', []],
      ['Discounts  of\n100%', special],
    ];
    for (const [q, expected] of cases) {
      const body = await search(q);
      assert.deepEqual(
        body.data.map((hit: any) => `${hit.product.slug}/${hit.slug}`),
        expected,
        `q=${JSON.stringify(q)}`,
      );
    }
    const malformed = await get('/v1/docs/search?q=%E0%A4%A');
    assert.equal(malformed.statusCode < 500, true, malformed.body);
  });

  test('changelog: newest first, filters, inclusive since', async () => {
    const all = (await get('/v1/docs/changelog')).json();
    assert.deepEqual(
      all.data.map((entry: any) => entry.id),
      ['2026-03-15-beta', '2026-02-01-fix', '2026-01-10-first'],
    );
    assert.deepEqual(Object.keys(all.data[0]).sort(), [
      'body',
      'body_html',
      'id',
      'product',
      'published_at',
      'title',
      'type',
    ]);
    assert.equal(all.data[0].published_at, '2026-03-15T10:30:00.000Z');
    assert.deepEqual(all.data[0].product, { slug: 'beta', name: 'Beta' });
    assert.equal(all.count, 3);

    const ids = async (query: string) =>
      (await get(`/v1/docs/changelog?${query}`)).json().data.map((entry: any) => entry.id);
    assert.deepEqual(await ids('product=alpha'), ['2026-02-01-fix', '2026-01-10-first']);
    assert.deepEqual(await ids('type=fix'), ['2026-02-01-fix']);
    assert.deepEqual(await ids('since=2026-02-01T00:00:00Z'), ['2026-03-15-beta', '2026-02-01-fix']);
    assert.deepEqual(await ids('since=2026-02-01T00:00:00.001Z'), ['2026-03-15-beta']);
    assert.deepEqual(await ids('since=2026-01-10'), [
      '2026-03-15-beta',
      '2026-02-01-fix',
      '2026-01-10-first',
    ]);
    assert.deepEqual(await ids('since=2026-03-15T12:30:00%2B02:00'), ['2026-03-15-beta']);
    assert.deepEqual(await ids('limit=1'), ['2026-03-15-beta']);
    assert.deepEqual(await ids('since=2027-01-01'), []);
  });

  test('content_html is sanitized: no scripts, event handlers or javascript: URLs survive', async () => {
    const { page } = (await get('/v1/docs/pages/hostile')).json();
    const html: string = page.content_html;
    assert.doesNotMatch(html, /<script/i);
    assert.doesNotMatch(html, /<style/i);
    assert.doesNotMatch(html, /<iframe/i);
    assert.doesNotMatch(html, /<svg/i);
    assert.doesNotMatch(html, /<form|<input/i);
    assert.doesNotMatch(html, /\son[a-z]+\s*=/i);
    assert.doesNotMatch(html, /javascript:/i);
    assert.doesNotMatch(html, /alert\(/);
    assert.match(html, /<a href="https:\/\/example\.com\/safe" rel="noopener noreferrer">a safe link<\/a>/);
    assert.match(html, /<a href="\/docs\/alpha\/overview">relative one<\/a>/);
    assert.match(html, /<img src="https:\/\/example\.com\/x\.png" \/>/);
    assert.match(page.content_text, /Before the script\./);
    assert.doesNotMatch(page.content_text, /alert\('script tag'\)|<script/);

    const changelog = (await get('/v1/docs/changelog?type=feature')).json();
    assert.match(changelog.data[0].body_html, /<strong>feature<\/strong>/);
    assert.doesNotMatch(changelog.data[0].body_html, /<script|alert\(/);

    const site = await get('/docs/alpha/hostile');
    assert.doesNotMatch(site.body, /<script|javascript:|\son[a-z]+\s*=/i);
  });

  test('every response has Cache-Control and an ETag; a matching If-None-Match is 304', async () => {
    const urls = [
      '/v1/docs/products',
      '/v1/docs/pages?product=alpha',
      '/v1/docs/pages/delivery',
      '/v1/docs/search?q=webhooks',
      '/v1/docs/changelog',
      '/docs',
      '/docs/alpha',
      '/docs/alpha/delivery',
      '/docs/changelog',
    ];
    for (const url of urls) {
      const first = await get(url);
      assert.equal(first.statusCode, 200, url);
      const etag = String(first.headers.etag);
      assert.match(etag, /^"[\w-]+"$/, url);
      assert.equal(first.headers['cache-control'], 'public, max-age=300', url);

      const again = await get(url);
      assert.equal(again.headers.etag, etag, `${url}: the tag is stable`);

      const cached = await get(url, { 'if-none-match': etag });
      assert.equal(cached.statusCode, 304, url);
      assert.equal(cached.body, '', url);
      assert.equal(cached.headers.etag, etag, url);
      assert.equal(cached.headers['cache-control'], 'public, max-age=300', url);

      assert.equal((await get(url, { 'if-none-match': `"other", W/${etag}` })).statusCode, 304, url);
      assert.equal((await get(url, { 'if-none-match': '*' })).statusCode, 304, url);
      assert.equal((await get(url, { 'if-none-match': '"other"' })).statusCode, 200, url);
    }

    const products = (await get('/v1/docs/products')).headers.etag;
    const pages = (await get('/v1/docs/pages?product=alpha')).headers.etag;
    assert.notEqual(products, pages, 'different bodies have different tags');

    for (const url of [
      '/v1/docs/pages',
      '/v1/docs/pages/nope',
      '/v1/docs/pages/overview',
      '/docs/nope/nope',
    ]) {
      const response = await get(url);
      assert.ok(response.statusCode >= 400, url);
      assert.match(String(response.headers.etag), /^"[\w-]+"$/, url);
      assert.equal(response.headers['cache-control'], 'no-store', url);
      const retried = await get(url, { 'if-none-match': String(response.headers.etag) });
      assert.equal(retried.statusCode, response.statusCode, `${url}: an error is never 304`);
    }
  });

  test('CORS: any origin may GET, preflight allowed, rate-limit headers exposed', async () => {
    const response = await get('/v1/docs/search?q=beta', { origin: 'https://somewhere.example' });
    assert.equal(response.headers['access-control-allow-origin'], '*');
    assert.match(String(response.headers['access-control-expose-headers']), /X-RateLimit-Remaining/);
    assert.match(String(response.headers['access-control-expose-headers']), /ETag/);

    const failed = await get('/v1/docs/pages');
    assert.equal(failed.headers['access-control-allow-origin'], '*');

    const preflight = await t.app.inject({
      method: 'OPTIONS',
      url: '/v1/docs/search?q=beta',
      headers: {
        origin: 'https://somewhere.example',
        'access-control-request-method': 'GET',
        'access-control-request-headers': 'if-none-match',
      },
    });
    assert.equal(preflight.statusCode, 204);
    assert.equal(preflight.headers['access-control-allow-origin'], '*');
    assert.match(String(preflight.headers['access-control-allow-methods']), /GET/);
    assert.match(String(preflight.headers['access-control-allow-headers']), /If-None-Match/i);
  });

  test('the docs hooks and limit stay inside the docs routes', async () => {
    for (const url of ['/healthz', '/v1/openapi.json']) {
      const response = await get(url);
      assert.equal(response.statusCode, 200, url);
      assert.equal(response.headers['x-ratelimit-limit'], undefined, url);
      assert.equal(response.headers['access-control-allow-origin'], undefined, url);
    }
    const me = await get('/v1/me');
    assert.equal(me.statusCode, 401, 'the tenant API still needs a key');
  });

  test('the docs site serves every page as plain HTML without script at the search result url', async () => {
    const hit = (await search('delivery')).data[0];
    const sitePath = new URL(hit.url).pathname;
    assert.equal(sitePath, '/docs/alpha/delivery');
    const page = await get(sitePath);
    assert.equal(page.statusCode, 200);
    assert.match(String(page.headers['content-type']), /^text\/html/);
    assert.match(String(page.headers['content-security-policy']), /default-src 'none'/);
    assert.match(page.body, /<h1>Delivery<\/h1>/);
    assert.match(page.body, /Webhooks are retried/);
    assert.doesNotMatch(page.body, /<script/i);

    const home = await get('/docs');
    assert.match(home.body, /href="\/docs\/alpha"/);
    assert.match((await get('/docs/alpha')).body, /href="\/docs\/alpha\/special"/);
    assert.match((await get('/docs/changelog')).body, /Beta deprecation/);
    const missing = await get('/docs/alpha/nope');
    assert.equal(missing.statusCode, 404);
    assert.match(String(missing.headers['content-type']), /^text\/html/);
  });

  test('the OpenAPI document lists the docs operations as public, with their operationIds', async () => {
    const document = (await get('/v1/openapi.json')).json();
    const operations = [
      ['/v1/docs/products', 'docs.products'],
      ['/v1/docs/pages', 'docs.list'],
      ['/v1/docs/pages/{slug}', 'docs.get'],
      ['/v1/docs/search', 'docs.search'],
      ['/v1/docs/changelog', 'docs.changelog'],
    ];
    for (const [route, operationId] of operations) {
      const operation = document.paths[route]?.get;
      assert.ok(operation, route);
      assert.equal(operation.operationId, operationId);
      assert.deepEqual(operation.security, [], `${route} needs no key`);
    }
    assert.equal(
      Object.keys(document.paths).some((route) => route.startsWith('/docs')),
      false,
      'the HTML site is not an API operation',
    );
  });
});
