import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { renderMarkdown } from './render.ts';
import { type Folded, flatten, fold } from './text.ts';

/**
 * The documentation as the API serves it: read once from `docs/` at start-up (the content ships with
 * the code, so every API process holds the same), rendered, sanitized and indexed for search.
 * A malformed file stops the start with a message naming it, so broken docs fail the tests, not users.
 */

export interface Category {
  slug: string;
  name: string;
}

export interface Product {
  id: string;
  slug: string;
  name: string;
  description: string;
  icon: string;
  categories: Category[];
}

export interface Page {
  product: Product;
  category: Category;
  slug: string;
  title: string;
  description: string;
  /** Markdown as written, for the route-coverage check. */
  source: string;
  html: string;
  text: string;
  /** Lower-cased, whitespace-collapsed forms that search matches against. */
  search: { title: string; description: string; text: Folded };
}

export const CHANGE_TYPES = ['feature', 'improvement', 'fix', 'breaking', 'deprecation'] as const;
export type ChangeType = (typeof CHANGE_TYPES)[number];

export interface ChangelogEntry {
  id: string;
  product: Product;
  type: ChangeType;
  title: string;
  body: string;
  bodyHtml: string;
  publishedAt: Date;
}

export interface DocsIndex {
  products: Product[];
  /** Pages in reading order: product, then category, then `order`, then title. */
  pages: Page[];
  /** Changelog entries, newest first. */
  changelog: ChangelogEntry[];
  /** Content mistakes that did not stop loading (an undeclared category); a test requires none. */
  problems: string[];
  product(slug: string): Product | undefined;
  /** Every page with this slug, across products. */
  pagesWithSlug(slug: string): Page[];
}

export class DocsContentError extends Error {}

const SLUG = /^[a-z0-9][a-z0-9-]{0,99}$/;
const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2}))?$/;

/** The `docs/` folder beside the code, from `src/` (tsx) or `dist/src/` (built). */
export function shippedDocsDir(): string {
  let dir = import.meta.dirname;
  for (let depth = 0; depth < 6; depth++) {
    const candidate = path.join(dir, 'docs');
    if (existsSync(path.join(candidate, 'products.json'))) return candidate;
    dir = path.dirname(dir);
  }
  throw new DocsContentError(`no docs/products.json found above ${import.meta.dirname}`);
}

const loaded = new Map<string, Promise<DocsIndex>>();

/** Loads a docs folder once per process; later calls share the index. */
export function loadDocs(dir: string): Promise<DocsIndex> {
  let index = loaded.get(dir);
  if (!index) {
    index = readDocs(dir);
    loaded.set(dir, index);
    index.catch(() => loaded.delete(dir));
  }
  return index;
}

async function readDocs(dir: string): Promise<DocsIndex> {
  const products = await readProducts(path.join(dir, 'products.json'));
  const bySlug = new Map(products.map((product) => [product.slug, product]));

  const pages: Page[] = [];
  const problems: string[] = [];
  const order = new Map<Page, number>();
  const pagesDir = path.join(dir, 'pages');
  for (const folder of await listDir(pagesDir)) {
    const product = bySlug.get(folder);
    if (!product) {
      throw new DocsContentError(`docs/pages/${folder}: no product "${folder}" in docs/products.json`);
    }
    for (const file of (await listDir(path.join(pagesDir, folder))).filter((name) => name.endsWith('.md'))) {
      const where = `docs/pages/${folder}/${file}`;
      const { fields, body } = splitFrontMatter(
        await fs.readFile(path.join(pagesDir, folder, file), 'utf8'),
        where,
      );
      const page = toPage(fields, body, product, file.slice(0, -3), where, problems);
      order.set(page, typeof fields.order === 'number' ? fields.order : 1000);
      pages.push(page);
    }
  }
  const seen = new Set<string>();
  for (const page of pages) {
    const key = `${page.product.slug}/${page.slug}`;
    if (seen.has(key)) throw new DocsContentError(`docs/pages/${key}: duplicate page`);
    seen.add(key);
  }
  const position = (page: Page) => [
    products.indexOf(page.product),
    page.product.categories.indexOf(page.category),
    order.get(page) ?? 1000,
  ];
  pages.sort((a, b) => {
    const [pa, pb] = [position(a), position(b)];
    for (let i = 0; i < pa.length; i++) if (pa[i] !== pb[i]) return pa[i] - pb[i];
    return a.title.localeCompare(b.title);
  });

  const changelog: ChangelogEntry[] = [];
  const changelogDir = path.join(dir, 'changelog');
  for (const file of (await listDir(changelogDir)).filter((name) => name.endsWith('.md'))) {
    const where = `docs/changelog/${file}`;
    const { fields, body } = splitFrontMatter(
      await fs.readFile(path.join(changelogDir, file), 'utf8'),
      where,
    );
    changelog.push(toChangelogEntry(fields, body, bySlug, file.slice(0, -3), where));
  }
  changelog.sort((a, b) => b.publishedAt.getTime() - a.publishedAt.getTime() || (a.id < b.id ? 1 : -1));

  const withSlug = new Map<string, Page[]>();
  for (const page of pages) withSlug.set(page.slug, [...(withSlug.get(page.slug) ?? []), page]);

  return {
    products,
    pages,
    changelog,
    problems,
    product: (slug) => bySlug.get(slug),
    pagesWithSlug: (slug) => withSlug.get(slug) ?? [],
  };
}

async function listDir(dir: string): Promise<string[]> {
  const entries = await fs.readdir(dir).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return [];
    throw error;
  });
  return entries.filter((name) => !name.startsWith('.')).sort();
}

async function readProducts(file: string): Promise<Product[]> {
  let raw: unknown;
  try {
    raw = JSON.parse(await fs.readFile(file, 'utf8'));
  } catch (error) {
    throw new DocsContentError(`docs/products.json: ${(error as Error).message}`);
  }
  if (!Array.isArray(raw)) throw new DocsContentError('docs/products.json: must be an array of products');
  const slugs = new Set<string>();
  return raw.map((item: Record<string, unknown>, i) => {
    const where = `docs/products.json[${i}]`;
    const product: Product = {
      id: requireString(item, 'id', where),
      slug: requireSlug(item, 'slug', where),
      name: requireString(item, 'name', where),
      description: requireString(item, 'description', where),
      icon: requireString(item, 'icon', where),
      categories: [],
    };
    if (slugs.has(product.slug)) throw new DocsContentError(`${where}: duplicate slug "${product.slug}"`);
    slugs.add(product.slug);
    if (!Array.isArray(item.categories) || item.categories.length === 0) {
      throw new DocsContentError(`${where}: categories must be a non-empty array`);
    }
    product.categories = item.categories.map((category: Record<string, unknown>, j: number) => ({
      slug: requireSlug(category, 'slug', `${where}.categories[${j}]`),
      name: requireString(category, 'name', `${where}.categories[${j}]`),
    }));
    return product;
  });
}

/** `---` YAML `---` then Markdown. */
function splitFrontMatter(source: string, where: string): { fields: Record<string, unknown>; body: string } {
  const match = /^\uFEFF?---\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)/.exec(source);
  if (!match) throw new DocsContentError(`${where}: must start with YAML front matter between --- lines`);
  let fields: unknown;
  try {
    fields = parseYaml(match[1]);
  } catch (error) {
    throw new DocsContentError(`${where}: front matter is not valid YAML: ${(error as Error).message}`);
  }
  if (!fields || typeof fields !== 'object' || Array.isArray(fields)) {
    throw new DocsContentError(`${where}: front matter must be a mapping of fields`);
  }
  return { fields: fields as Record<string, unknown>, body: source.slice(match[0].length) };
}

function toPage(
  fields: Record<string, unknown>,
  body: string,
  product: Product,
  fileSlug: string,
  where: string,
  problems: string[],
): Page {
  const slug = requireSlug(fields, 'slug', where);
  if (slug !== fileSlug) throw new DocsContentError(`${where}: slug "${slug}" must match the file name`);
  if (requireString(fields, 'product', where) !== product.slug) {
    throw new DocsContentError(`${where}: product must be "${product.slug}", the folder it is in`);
  }
  const category = categoryOf(product, requireSlug(fields, 'category', where), where, problems);
  if (fields.order !== undefined && typeof fields.order !== 'number') {
    throw new DocsContentError(`${where}: order must be a number`);
  }
  const title = requireString(fields, 'title', where).normalize('NFC');
  const description = requireString(fields, 'description', where).normalize('NFC');
  const { html, text } = renderMarkdown(body);
  return {
    product,
    category,
    slug,
    title,
    description,
    source: body,
    html,
    text,
    search: {
      title: flatten(title).toLowerCase(),
      description: flatten(description).toLowerCase(),
      text: fold(flatten(text)),
    },
  };
}

/**
 * A category undeclared in products.json is added after the declared ones (named from its slug) and
 * reported in `problems`, which a test requires to be empty: a typo fails the tests, never the start.
 */
function categoryOf(product: Product, slug: string, where: string, problems: string[]): Category {
  const declared = product.categories.find((candidate) => candidate.slug === slug);
  if (declared) return declared;
  const known = product.categories.map((candidate) => candidate.slug).join(', ');
  problems.push(
    `${where}: category "${slug}" is not declared for ${product.slug} in docs/products.json (${known})`,
  );
  const added = { slug, name: slug.charAt(0).toUpperCase() + slug.slice(1).replace(/-/g, ' ') };
  product.categories.push(added);
  return added;
}

function toChangelogEntry(
  fields: Record<string, unknown>,
  body: string,
  products: Map<string, Product>,
  id: string,
  where: string,
): ChangelogEntry {
  const productSlug = requireString(fields, 'product', where);
  const product = products.get(productSlug);
  if (!product) throw new DocsContentError(`${where}: no product "${productSlug}" in docs/products.json`);
  const type = requireString(fields, 'type', where);
  if (!(CHANGE_TYPES as readonly string[]).includes(type)) {
    throw new DocsContentError(`${where}: type must be one of ${CHANGE_TYPES.join(', ')}`);
  }
  const rawDate =
    fields.published_at instanceof Date ? fields.published_at.toISOString() : fields.published_at;
  const publishedAt = typeof rawDate === 'string' ? parseIsoDate(rawDate) : null;
  if (!publishedAt) throw new DocsContentError(`${where}: published_at must be an ISO 8601 date-time`);
  return {
    id,
    product,
    type: type as ChangeType,
    title: requireString(fields, 'title', where),
    body: body.trim(),
    bodyHtml: renderMarkdown(body).html,
    publishedAt,
  };
}

/** An ISO 8601 date (midnight UTC) or date-time with a zone; null for anything else, impossible dates included. */
export function parseIsoDate(value: string): Date | null {
  if (!ISO_DATE_TIME.test(value)) return null;
  const date = new Date(value.length === 10 ? `${value}T00:00:00Z` : value);
  if (Number.isNaN(date.getTime())) return null;
  // Date rolls 2026-02-30 over into March: refuse dates that do not survive the round trip.
  const [year, month, day] = value.slice(0, 10).split('-').map(Number);
  const check = new Date(Date.UTC(year, month - 1, day));
  return check.getUTCMonth() === month - 1 && check.getUTCDate() === day ? date : null;
}

function requireString(fields: Record<string, unknown>, name: string, where: string): string {
  const value = fields[name];
  if (typeof value !== 'string' || value.trim() === '') {
    throw new DocsContentError(`${where}: "${name}" is required and must be a non-empty string`);
  }
  return value.trim();
}

function requireSlug(fields: Record<string, unknown>, name: string, where: string): string {
  const value = requireString(fields, name, where);
  if (!SLUG.test(value)) {
    throw new DocsContentError(`${where}: "${name}" must be lower-case letters, digits and hyphens`);
  }
  return value;
}
