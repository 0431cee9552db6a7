import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { sql } from 'kysely';
import type { Tenant } from '../auth/tenant.ts';
import type { Db, Trx } from '../db/pool.ts';
import { ApiError, errors } from './errors.ts';

export const IDEMPOTENCY_HEADER = 'idempotency-key';
const MAX_KEY_LENGTH = 255;
/** A claim older than this belongs to a request that died; its transaction rolled back, so a retry may take over. */
const STALE_CLAIM_MS = 60_000;

export interface Outcome<T> {
  status: number;
  body: T;
}

/**
 * Runs a creating request as one transaction. With an `Idempotency-Key`, the stored response is
 * written in that same transaction, so a write and its replay record commit or roll back together:
 * a repeat can never cause a second side effect.
 *
 * - same key, same request, finished: the original status and body, `Idempotent-Replayed: true`;
 * - same key, another request: 422 `idempotency_key_reused`;
 * - same key while the first is still running: 409 `idempotency_in_progress`.
 */
export async function runIdempotent<T>(
  db: Db,
  request: FastifyRequest,
  reply: FastifyReply,
  ttlHours: number,
  work: (trx: Trx) => Promise<Outcome<T>>,
): Promise<T> {
  const key = readKey(request);
  if (key === null) {
    const outcome = await db.transaction().execute(work);
    reply.code(outcome.status);
    return outcome.body;
  }

  const scope = { tenant: request.tenant, key };
  const requestHash = hashRequest(request);
  const replay = await claim(db, scope, requestHash, ttlHours);
  if (replay) {
    reply.code(replay.status).header('idempotent-replayed', 'true');
    return replay.body as T;
  }

  try {
    const outcome = await db.transaction().execute(async (trx) => {
      const result = await work(trx);
      await trx
        .updateTable('idempotency_keys')
        .set({
          state: 'completed',
          response_status: result.status,
          response_body: JSON.stringify(result.body),
        })
        .where('org_id', '=', scope.tenant.orgId)
        .where('client_id', '=', scope.tenant.clientId)
        .where('key', '=', key)
        .execute();
      return result;
    });
    reply.code(outcome.status);
    return outcome.body;
  } catch (error) {
    // Nothing was written, so the key is released and a retry runs the request afresh.
    await release(db, scope).catch(() => {});
    throw error;
  }
}

function readKey(request: FastifyRequest): string | null {
  const header = request.headers[IDEMPOTENCY_HEADER];
  if (header === undefined) return null;
  const key = Array.isArray(header) ? header[0] : header;
  if (key.length === 0 || key.length > MAX_KEY_LENGTH) {
    throw errors.invalidRequest(`Idempotency-Key must be 1 to ${MAX_KEY_LENGTH} characters.`);
  }
  return key;
}

interface Scope {
  tenant: Tenant;
  key: string;
}

async function claim(
  db: Db,
  scope: Scope,
  requestHash: string,
  ttlHours: number,
): Promise<Outcome<unknown> | null> {
  const { tenant, key } = scope;
  for (let attempt = 0; attempt < 3; attempt++) {
    const inserted = await db
      .insertInto('idempotency_keys')
      .values({
        org_id: tenant.orgId,
        client_id: tenant.clientId,
        key,
        request_hash: requestHash,
        state: 'in_progress',
        locked_at: new Date(),
      })
      .onConflict((oc) => oc.doNothing())
      .returning('key')
      .executeTakeFirst();
    if (inserted) return null;

    const existing = await db
      .selectFrom('idempotency_keys')
      .selectAll()
      .where('org_id', '=', tenant.orgId)
      .where('client_id', '=', tenant.clientId)
      .where('key', '=', key)
      .executeTakeFirst();
    if (!existing) continue;

    if (existing.created_at.getTime() < Date.now() - ttlHours * 3_600_000) {
      await db
        .deleteFrom('idempotency_keys')
        .where('org_id', '=', tenant.orgId)
        .where('client_id', '=', tenant.clientId)
        .where('key', '=', key)
        .where('created_at', '=', existing.created_at)
        .execute();
      continue;
    }
    if (existing.request_hash !== requestHash) {
      throw new ApiError(
        422,
        'idempotency_key_reused',
        'This Idempotency-Key was already used with a different request; use a new key for a new request.',
      );
    }
    if (existing.state === 'completed') {
      return { status: existing.response_status ?? 200, body: existing.response_body };
    }
    if (existing.locked_at.getTime() > Date.now() - STALE_CLAIM_MS) {
      throw new ApiError(
        409,
        'idempotency_in_progress',
        'A request with this Idempotency-Key is still being processed; retry after it finishes.',
      );
    }
    const takenOver = await db
      .updateTable('idempotency_keys')
      .set({ locked_at: new Date() })
      .where('org_id', '=', tenant.orgId)
      .where('client_id', '=', tenant.clientId)
      .where('key', '=', key)
      .where('state', '=', 'in_progress')
      .where('locked_at', '=', existing.locked_at)
      .executeTakeFirst();
    if (takenOver.numUpdatedRows > 0n) return null;
  }
  throw new ApiError(
    409,
    'idempotency_in_progress',
    'A request with this Idempotency-Key is being processed; retry shortly.',
  );
}

async function release(db: Db, { tenant, key }: Scope): Promise<void> {
  await db
    .deleteFrom('idempotency_keys')
    .where('org_id', '=', tenant.orgId)
    .where('client_id', '=', tenant.clientId)
    .where('key', '=', key)
    .where('state', '=', 'in_progress')
    .execute();
}

/** Method, route and a canonical form of params, query and body: key order does not make two requests differ. */
function hashRequest(request: FastifyRequest): string {
  return createHash('sha256')
    .update(request.method)
    .update('\0')
    .update(request.routeOptions.url ?? request.url)
    .update('\0')
    .update(canonicalJson({ params: request.params, query: request.query, body: request.body }))
    .digest('hex');
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** The clean-up job: drops records past the replay window. */
export async function deleteExpiredIdempotencyKeys(db: Db, ttlHours: number): Promise<number> {
  const result = await db
    .deleteFrom('idempotency_keys')
    .where('created_at', '<', sql<Date>`now() - make_interval(hours => ${ttlHours})`)
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
