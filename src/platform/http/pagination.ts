import { createHmac, timingSafeEqual } from 'node:crypto';
import { type TSchema, Type } from '@sinclair/typebox';
import type { TenantScope } from '../auth/tenant.ts';
import { canonicalJson } from './canonical-json.ts';
import { errors } from './errors.ts';

/**
 * Keyset pagination, the one way every list pages. A page token carries the sort key of the last row
 * returned, signed with a server secret and bound to the list (its route, path parameters and filters)
 * and tenant it came from, so a tampered or foreign token is refused instead of silently paging
 * something else. Routes hand their request to `paginate`; services receive a typed cursor, never a token.
 */

export type CursorValue = string | number | null;

export interface PageQuery {
  limit?: number;
  page_token?: string;
}

/** What a list's service and store receive: where the page starts and how many rows to fetch. */
export interface PageRequest<Cursor> {
  /** The cursor of the previous page's last row: the page starts right after it, in the list's order. */
  after?: Cursor;
  /** Rows to fetch: the page size plus one, the extra row only saying whether there is a next page. */
  limit: number;
}

/** How a list sorts: the key a token carries for an item, and the typed cursor a key stands for. */
export interface Keyset<Item, Cursor> {
  key(item: Item): CursorValue[];
  /** The cursor of a key read from a token; undefined when it is not a key of this list. */
  cursor(key: CursorValue[]): Cursor | undefined;
}

/** The keyset of a list sorted by id (newest first with UUIDv7 ids): the cursor is the last id. */
export const byId: Keyset<{ id: string }, string> = {
  key: (item) => [item.id],
  cursor: ([id]) => (typeof id === 'string' ? id : undefined),
};

export interface Page<T> {
  data: T[];
  next_page_token: string | null;
  limit: number;
  total?: number | null;
}

export const DEFAULT_LIMIT = 50;
export const MAX_LIMIT = 200;

export const pageQuerySchema = {
  limit: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: MAX_LIMIT,
      default: DEFAULT_LIMIT,
      description: 'Page size, 1-200 (default 50).',
    }),
  ),
  page_token: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 1024,
      description: 'Opaque token from next_page_token of the previous page.',
    }),
  ),
};

/** The list envelope: `{data, next_page_token, limit, total?}`. */
export function pageSchema<T extends TSchema>(item: T) {
  return Type.Object({
    data: Type.Array(item),
    next_page_token: Type.Union([Type.String(), Type.Null()]),
    limit: Type.Integer(),
    total: Type.Optional(Type.Union([Type.Integer(), Type.Null()])),
  });
}

let secrets: Buffer[] = [Buffer.from('unset')];

/** Set once at start-up from the server's key material: tokens are signed with `current`, and the previous keys' still verify. */
export function setPageTokenSecret(current: Buffer, previous: Buffer[] = []): void {
  secrets = [current, ...previous];
}

/** What `paginate` reads of a request: its query, path parameters, route and tenant. */
export interface ListRequest {
  query: PageQuery;
  params: unknown;
  routeOptions: { url?: string };
  tenant: TenantScope;
}

/**
 * Answers a list request: decodes `page_token` into the keyset's cursor, fetches the page with
 * `fetch`, and returns the list envelope with the token of the next page. The token is bound to the
 * route, its path parameters, its filters (every query parameter but `limit` and `page_token`, in
 * canonical form) and the tenant; any other token is 400 `invalid_request`.
 */
export async function paginate<Item, Cursor>(
  request: ListRequest,
  keyset: Keyset<NoInfer<Item>, Cursor>,
  fetch: (page: PageRequest<Cursor>) => Promise<Item[]>,
): Promise<Page<Item>> {
  const { limit = DEFAULT_LIMIT, page_token, ...filters } = request.query;
  const scope = scopeOf(request, filters);
  const key = decode(page_token, scope);
  const after = key === null ? undefined : keyset.cursor(key);
  if (key !== null && after === undefined) throw invalidToken();
  const rows = await fetch({ after, limit: limit + 1 });
  const more = rows.length > limit;
  const data = more ? rows.slice(0, limit) : rows;
  return {
    data,
    next_page_token: more ? encode(keyset.key(data[data.length - 1]), scope) : null,
    limit,
  };
}

function scopeOf(request: ListRequest, filters: Record<string, unknown>): string {
  const { tenant } = request;
  return `${request.routeOptions.url}\0${canonicalJson({ params: request.params, filters })}\0${tenant.orgId}\0${tenant.clientId}`;
}

function sign(payload: string, scope: string, secret = secrets[0]): string {
  return createHmac('sha256', secret)
    .update(scope)
    .update('\0')
    .update(payload)
    .digest('base64url')
    .slice(0, 22);
}

function encode(key: CursorValue[], scope: string): string {
  const payload = Buffer.from(JSON.stringify(key)).toString('base64url');
  return `${payload}.${sign(payload, scope)}`;
}

const invalidToken = () =>
  errors.invalidRequest('page_token is not a token this list issued; start again without it.');

/** The key a token carries, or null when there is no token; a bad token is 400 `invalid_request`. */
function decode(token: string | undefined, scope: string): CursorValue[] | null {
  if (token === undefined) return null;
  const [payload, signature, extra] = token.split('.');
  if (!payload || !signature || extra !== undefined) throw invalidToken();
  const given = Buffer.from(signature);
  const signedHere = secrets.some((secret) => {
    const expected = Buffer.from(sign(payload, scope, secret));
    return expected.length === given.length && timingSafeEqual(expected, given);
  });
  if (!signedHere) throw invalidToken();
  try {
    const key = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    if (Array.isArray(key)) return key;
  } catch {}
  throw invalidToken();
}
