import { Type } from '@sinclair/typebox';
import { Query } from '../../platform/http/schemas.ts';
import { CHANGE_TYPES } from './content.ts';

const Ref = Type.Object({ slug: Type.String(), name: Type.String() });

export const ProductSchema = Type.Object({
  id: Type.String(),
  slug: Type.String(),
  name: Type.String(),
  description: Type.String(),
  icon: Type.String({ description: 'A Lucide icon name.' }),
  categories: Type.Array(Ref, { description: 'The product’s page categories, in reading order.' }),
});

export const PageListItemSchema = Type.Object({
  slug: Type.String(),
  title: Type.String(),
  description: Type.String(),
});

export const PageSchema = Type.Object({
  slug: Type.String(),
  title: Type.String(),
  description: Type.String(),
  product: Ref,
  category: Ref,
  url: Type.String({ description: 'The page on the docs site, as plain HTML.' }),
  content_html: Type.String({
    description: 'Rendered from Markdown and sanitized: no scripts, no event handlers.',
  }),
  content_text: Type.String({ description: 'The same content as plain text.' }),
});

export const SearchResultSchema = Type.Object({
  slug: Type.String(),
  title: Type.String(),
  description: Type.String(),
  snippet: Type.String({
    description: 'Plain text around the first match in the page (its opening otherwise).',
  }),
  product: Ref,
  category: Ref,
  url: Type.String(),
});

export const ChangelogEntrySchema = Type.Object({
  id: Type.String(),
  product: Ref,
  type: Type.Union(CHANGE_TYPES.map((type) => Type.Literal(type))),
  title: Type.String(),
  body: Type.String({ description: 'The entry in Markdown, as written.' }),
  body_html: Type.String({ description: 'The entry rendered and sanitized.' }),
  published_at: Type.String({ format: 'date-time' }),
});

const Slug = (description: string) => Type.String({ minLength: 1, maxLength: 100, description });
const Limit = (maximum: number, fallback: number) =>
  Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum,
      default: fallback,
      description: `How many items, 1-${maximum} (default ${fallback}).`,
    }),
  );

export const PagesQuery = Query({
  product: Slug('Product slug (required).'),
  category: Type.Optional(Slug('Category slug within the product.')),
  limit: Limit(200, 50),
});

export const PageQuery = Query({
  product: Type.Optional(Slug('Product slug; needed only when two products have a page with this slug.')),
});

export const PageParams = Type.Object({ slug: Slug('Page slug.') }, { additionalProperties: false });

export const SearchQuery = Query({
  q: Type.String({
    minLength: 1,
    maxLength: 200,
    pattern: '\\S',
    description: 'Text to find, 1-200 characters, matched literally and case-insensitively.',
  }),
  product: Type.Optional(Slug('Only pages of this product.')),
  limit: Limit(50, 10),
});

export const ChangelogQuery = Query({
  product: Type.Optional(Slug('Only entries of this product.')),
  type: Type.Optional(Type.Union(CHANGE_TYPES.map((type) => Type.Literal(type)))),
  since: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 64,
      description: 'ISO 8601 date or date-time with zone; entries published at or after it.',
    }),
  ),
  limit: Limit(100, 25),
});

export const listOf = <T extends ReturnType<typeof Type.Object>>(item: T) =>
  Type.Object({
    data: Type.Array(item),
    count: Type.Integer({ description: 'Items in data.' }),
    total: Type.Integer({ description: 'Items matching, before the limit.' }),
  });

const errorRef = (description: string) => Type.Unsafe({ $ref: 'Error#', description });

/** Docs responses: no 401 (there is no key), and 304 for a matching If-None-Match. */
export function docsResponses(...statuses: Array<404 | 409>) {
  const described: Record<number, string> = {
    404: 'Unknown product, category or page',
    409: 'The slug is used by several products: pass product',
  };
  return {
    304: Type.Null({ description: 'Not modified: the If-None-Match tag is current' }),
    400: errorRef('Invalid query'),
    ...Object.fromEntries(statuses.map((status) => [status, errorRef(described[status])])),
    429: errorRef('Rate limit exceeded'),
  };
}
