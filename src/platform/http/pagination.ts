import { createHmac, timingSafeEqual } from 'node:crypto';
import { type TSchema, Type } from '@sinclair/typebox';
import { errors } from './errors.ts';

/**
 * Keyset pagination. A page token carries the sort key of the last row returned, signed with a
 * server secret and bound to the list and tenant it came from, so a tampered or foreign token is
 * refused instead of silently paging something else.
 */

export type CursorValue = string | number | null;

export interface PageQuery {
  limit?: number;
  page_token?: string;
}

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

let secret: Buffer = Buffer.from('unset');

/** Set once at start-up from the server's key material. */
export function setPageTokenSecret(value: Buffer): void {
  secret = value;
}

function sign(payload: string, scope: string): string {
  return createHmac('sha256', secret)
    .update(scope)
    .update('\0')
    .update(payload)
    .digest('base64url')
    .slice(0, 22);
}

export function encodePageToken(key: CursorValue[], scope: string): string {
  const payload = Buffer.from(JSON.stringify(key)).toString('base64url');
  return `${payload}.${sign(payload, scope)}`;
}

/** Returns the cursor of a token, or null when there is none; a bad token is 400 `invalid_request`. */
export function decodePageToken(token: string | undefined, scope: string): CursorValue[] | null {
  if (token === undefined) return null;
  const [payload, signature, extra] = token.split('.');
  const invalid = () =>
    errors.invalidRequest('page_token is not a token this list issued; start again without it.');
  if (!payload || !signature || extra !== undefined) throw invalid();
  const expected = Buffer.from(sign(payload, scope));
  const given = Buffer.from(signature);
  if (expected.length !== given.length || !timingSafeEqual(expected, given)) throw invalid();
  try {
    const key = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    if (Array.isArray(key)) return key;
  } catch {}
  throw invalid();
}

/**
 * Builds the page from rows fetched with `limit + 1`: the extra row only says whether there is more.
 * `keyOf` gives the sort key of a row, in the order the query sorts by.
 */
export function toPage<T>(
  rows: T[],
  limit: number,
  scope: string,
  keyOf: (row: T) => CursorValue[],
): Page<T> {
  const more = rows.length > limit;
  const data = more ? rows.slice(0, limit) : rows;
  return {
    data,
    next_page_token: more ? encodePageToken(keyOf(data[data.length - 1]), scope) : null,
    limit,
  };
}

/** The scope a token is bound to: the list's name and the caller's tenant. */
export function pageScope(list: string, tenant: { orgId: string; clientId: string }): string {
  return `${list}:${tenant.orgId}:${tenant.clientId}`;
}
