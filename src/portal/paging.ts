import { byId, type Keyset, type PageRequest } from '../platform/http/pagination.ts';

export const PAGE_SIZE = 50;

/**
 * A page of a list, in the list's own order (the keyset its API route pages by): `?after=` carries
 * the last row's key. The stores filter by tenant, so a key edited by hand only pages the viewer's
 * own rows.
 */
export function pageAfter<Cursor = string>(
  query: unknown,
  keyset: Keyset<never, Cursor> = byId as unknown as Keyset<never, Cursor>,
): PageRequest<Cursor> {
  const given = queryText(query, 'after');
  let after: Cursor | undefined;
  if (given) {
    try {
      const key = JSON.parse(Buffer.from(given, 'base64url').toString('utf8'));
      if (Array.isArray(key)) after = keyset.cursor(key);
    } catch {}
  }
  return { after, limit: PAGE_SIZE + 1 };
}

/** The rows of the page and the `after` of the next one, from the page-plus-one fetched. */
export function pageOf<Row>(
  rows: Row[],
  keyset: Keyset<Row, unknown> = byId as unknown as Keyset<Row, unknown>,
): { rows: Row[]; next: string | null } {
  if (rows.length <= PAGE_SIZE) return { rows, next: null };
  const page = rows.slice(0, PAGE_SIZE);
  return {
    rows: page,
    next: Buffer.from(JSON.stringify(keyset.key(page[page.length - 1]))).toString('base64url'),
  };
}

export function queryText(query: unknown, name: string): string | undefined {
  const given = (query as Record<string, unknown> | undefined)?.[name];
  return typeof given === 'string' && given !== '' ? given : undefined;
}
