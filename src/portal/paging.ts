import { isUuid } from '../platform/db/ids.ts';
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
      // Every portal list's key ends with the row's UUID: a key without one is dropped (the first page),
      // not handed to PostgreSQL to refuse as a 500.
      const id = Array.isArray(key) ? key[key.length - 1] : undefined;
      if (typeof id === 'string' && isUuid(id)) after = keyset.cursor(key);
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
