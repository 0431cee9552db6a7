import type { FastifyInstance } from 'fastify';
import type pg from 'pg';
import { newId } from '../../src/platform/db/ids.ts';

/** Test data for the deals, activities and tasks suites. */

export interface Scope {
  orgId: string;
  clientId: string;
}

/** A company row written directly: the companies API is another module's. */
export async function insertCompany(pool: pg.Pool, scope: Scope, name = 'Acme'): Promise<string> {
  const id = newId();
  await pool.query('INSERT INTO companies (id, org_id, client_id, name) VALUES ($1, $2, $3, $4)', [
    id,
    scope.orgId,
    scope.clientId,
    name,
  ]);
  return id;
}

/** A contact row written directly: the contacts API is another module's. */
export async function insertContact(pool: pg.Pool, scope: Scope, fullName = 'Ada Lovelace'): Promise<string> {
  const id = newId();
  await pool.query('INSERT INTO contacts (id, org_id, client_id, full_name) VALUES ($1, $2, $3, $4)', [
    id,
    scope.orgId,
    scope.clientId,
    fullName,
  ]);
  return id;
}

export type Call = (
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE',
  url: string,
  payload?: unknown,
  headers?: Record<string, string>,
) => Promise<{ statusCode: number; headers: Record<string, unknown>; body: string; json(): any }>;

/** `call(method, url, payload?, extraHeaders?)` with a key's headers. */
export function caller(app: FastifyInstance, keyHeaders: Record<string, string>): Call {
  return (method, url, payload, headers = {}) =>
    app.inject({
      method,
      url,
      headers: { ...keyHeaders, ...headers },
      ...(payload !== undefined ? { payload: payload as object } : {}),
    });
}

/** Every event of a type the key can see, oldest first. */
export async function eventsOfType(app: FastifyInstance, keyHeaders: Record<string, string>, type: string) {
  const response = await app.inject({
    method: 'GET',
    url: `/v1/events?type=${encodeURIComponent(type)}&limit=200`,
    headers: keyHeaders,
  });
  if (response.statusCode !== 200) throw new Error(`GET /v1/events: ${response.statusCode} ${response.body}`);
  return (response.json().data as any[]).reverse();
}

/** Asserts the error envelope and returns it. */
export function errorOf(response: { statusCode: number; json(): any }, status: number) {
  const body = response.json();
  if (response.statusCode !== status || typeof body.error !== 'string' || typeof body.message !== 'string') {
    throw new Error(
      `expected ${status} with the error envelope, got ${response.statusCode} ${JSON.stringify(body)}`,
    );
  }
  return body as { error: string; message: string; details?: any };
}
