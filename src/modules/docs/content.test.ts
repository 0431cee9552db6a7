import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { DocsContentError, loadDocs, parseIsoDate } from './content.ts';
import { fold, snippet } from './text.ts';

const PRODUCTS = [
  { id: 'p', slug: 'p', name: 'P', description: 'P.', icon: 'box', categories: [{ slug: 'c', name: 'C' }] },
];

const made: string[] = [];
after(() => Promise.all(made.map((dir) => fs.rm(dir, { recursive: true, force: true }))));

async function docsDir(files: Record<string, string>, products: unknown = PRODUCTS): Promise<string> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'docs-test-'));
  made.push(dir);
  await fs.writeFile(path.join(dir, 'products.json'), JSON.stringify(products));
  for (const [name, content] of Object.entries(files)) {
    await fs.mkdir(path.dirname(path.join(dir, name)), { recursive: true });
    await fs.writeFile(path.join(dir, name), content);
  }
  return dir;
}

const page = (fields: string, body = 'Body.') => `---\n${fields}\n---\n${body}\n`;
const valid = 'slug: a\ntitle: A\ndescription: The A page.\ncategory: c\nproduct: p';

describe('docs content loading', () => {
  test('a valid folder loads: pages rendered, changelog newest first', async () => {
    const dir = await docsDir({
      'pages/p/a.md': page(valid, '# Hello\n\nSome **bold** text.'),
      'changelog/2026-01-01-one.md': page(
        'product: p\ntype: fix\ntitle: One\npublished_at: 2026-01-01T00:00:00Z',
      ),
      'changelog/2026-02-01-two.md': page('product: p\ntype: feature\ntitle: Two\npublished_at: 2026-02-01'),
    });
    const docs = await loadDocs(dir);
    assert.equal(docs.pages.length, 1);
    assert.equal(docs.pages[0].html, '<h1>Hello</h1>\n<p>Some <strong>bold</strong> text.</p>\n');
    assert.equal(docs.pages[0].text, 'Hello\n\nSome bold text.');
    assert.deepEqual(
      docs.changelog.map((entry) => entry.id),
      ['2026-02-01-two', '2026-01-01-one'],
    );
    assert.deepEqual(docs.problems, []);
  });

  test('a malformed file stops loading with a message naming it', async () => {
    const cases: Array<[Record<string, string>, RegExp]> = [
      [{ 'pages/p/a.md': 'no front matter' }, /pages\/p\/a\.md: must start with YAML front matter/],
      [
        { 'pages/p/a.md': page('slug: a\ntitle: [unclosed') },
        /pages\/p\/a\.md: front matter is not valid YAML/,
      ],
      [{ 'pages/p/a.md': page(valid.replace('title: A\n', '')) }, /pages\/p\/a\.md: "title" is required/],
      [{ 'pages/p/b.md': page(valid) }, /pages\/p\/b\.md: slug "a" must match the file name/],
      [{ 'pages/p/a.md': page(valid.replace('product: p', 'product: q')) }, /product must be "p"/],
      [{ 'pages/q/a.md': page(valid) }, /docs\/pages\/q: no product "q"/],
      [{ 'pages/p/a.md': page(valid.replace('slug: a', 'slug: A b')) }, /"slug" must be lower-case/],
      [
        { 'changelog/x.md': page('product: p\ntype: news\ntitle: X\npublished_at: 2026-01-01') },
        /changelog\/x\.md: type must be one of/,
      ],
      [
        { 'changelog/x.md': page('product: p\ntype: fix\ntitle: X\npublished_at: soon') },
        /published_at must be an ISO 8601/,
      ],
      [
        { 'changelog/x.md': page('product: z\ntype: fix\ntitle: X\npublished_at: 2026-01-01') },
        /no product "z"/,
      ],
    ];
    for (const [files, message] of cases) {
      const dir = await docsDir(files);
      await assert.rejects(loadDocs(dir), (error: Error) => {
        assert.ok(error instanceof DocsContentError, String(error));
        assert.match(error.message, message);
        return true;
      });
    }
    await assert.rejects(loadDocs(await docsDir({}, { not: 'a list' })), /products\.json: must be an array/);
  });

  test('an undeclared category loads but is reported as a problem', async () => {
    const docs = await loadDocs(
      await docsDir({ 'pages/p/a.md': page(valid.replace('category: c', 'category: extra')) }),
    );
    assert.equal(docs.pages[0].category.name, 'Extra');
    assert.equal(docs.problems.length, 1);
    assert.match(docs.problems[0], /pages\/p\/a\.md: category "extra" is not declared for p/);
  });
});

describe('docs text helpers', () => {
  test('ISO 8601 dates: dates and zoned date-times only, impossible dates refused', () => {
    assert.equal(parseIsoDate('2026-01-31')?.toISOString(), '2026-01-31T00:00:00.000Z');
    assert.equal(parseIsoDate('2026-01-31T10:00:00+02:00')?.toISOString(), '2026-01-31T08:00:00.000Z');
    assert.equal(parseIsoDate('2026-01-31T10:00Z')?.toISOString(), '2026-01-31T10:00:00.000Z');
    for (const bad of ['2026-02-30', '2026-13-01', '2026-01-31T10:00:00', '31/01/2026', 'now', '']) {
      assert.equal(parseIsoDate(bad), null, bad);
    }
  });

  test('snippets map back through characters that change length when lower-cased', () => {
    const text = `${'İ'.repeat(100)} the needle here ${'x '.repeat(100)}`;
    const folded = fold(text);
    assert.ok(folded.offsets, 'İ lower-cases to two code units');
    const at = folded.lower.indexOf('needle');
    const cut = snippet(folded, at, 'needle'.length);
    assert.match(cut, /^….*the needle here/);
    assert.ok(cut.length < 200);
  });
});
