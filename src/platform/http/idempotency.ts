import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { sql } from 'kysely';
import type { Tenant } from '../auth/tenant.ts';
import type { Db, Trx } from '../db/pool.ts';
import { prepare } from '../db/prepared.ts';
import { inTransaction } from '../db/transaction.ts';
import { canonicalJson } from './canonical-json.ts';
import { errors } from './errors.ts';

export const IDEMPOTENCY_HEADER = 'idempotency-key';
const MAX_KEY_LENGTH = 255;
/** What a 409 `idempotency_in_progress` tells the client to wait before retrying. */
const IN_PROGRESS_RETRY_SECONDS = 1;

export interface Outcome<T> {
  status: number;
  body: T;
}

/**
 * Runs a creating request as one transaction. With an `Idempotency-Key`, that transaction first
 * takes a lock on the key (a transaction-scoped advisory lock), then looks for a stored response,
 * and writes the response it produces before it commits: the work and its replay record commit or
 * roll back together, so a repeat can never cause a second side effect.
 *
 * - same key, same request, finished: the original status and body, `Idempotent-Replayed: true`;
 * - same key, another request: 422 `idempotency_key_reused`;
 * - same key while the first is still running: 409 `idempotency_in_progress`, for as long as it
 *   runs (no lease that a slow request could outlive);
 * - a request that failed, or died with its process or its database connection, leaves nothing
 *   behind: its lock went with its transaction, and a retry runs afresh at once.
 *
 * `atOnce`, optional, is the create's common case as one statement that commits on its own (the
 * record and its event in CTEs, see `eventInsert`): four round trips (BEGIN, insert, event, COMMIT)
 * become one. Without an `Idempotency-Key` it runs first, on the pool; when it returns null (a case
 * it does not cover, having written nothing) `work` runs in its transaction as usual. With a key,
 * only `work` runs, so that the reply is stored in the transaction of the write.
 */
export async function runIdempotent<T>(
  db: Db,
  request: FastifyRequest,
  reply: FastifyReply,
  ttlHours: number,
  work: (trx: Trx) => Promise<Outcome<T>>,
  atOnce?: (db: Db) => Promise<Outcome<T> | null>,
): Promise<T> {
  const key = readKey(request);
  if (key === null) {
    const outcome = (atOnce && (await atOnce(db))) || (await inTransaction(db, work));
    reply.code(outcome.status);
    return outcome.body;
  }

  const scope = { tenant: request.tenant, key };
  const requestHash = hashRequest(request);
  const { outcome, replayed } = await inTransaction(db, async (trx) => {
    await lockKey(trx, scope);
    const stored = await storedOutcome(trx, scope, requestHash, ttlHours);
    if (stored) return { outcome: stored as Outcome<T>, replayed: true };
    const result = await work(trx);
    await storeOutcome(trx, scope, requestHash, result);
    return { outcome: result, replayed: false };
  });
  if (replayed) reply.header('idempotent-replayed', 'true');
  reply.code(outcome.status);
  return outcome.body;
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

const tryLock = prepare(
  (_db, p: { lock: string }) =>
    sql<{ locked: boolean }>`SELECT pg_try_advisory_xact_lock(hashtextextended(${p.lock}, 0)) AS locked`,
);

/** Held until the transaction ends, however it ends; a second holder is refused at once, never queued. */
async function lockKey(trx: Trx, { tenant, key }: Scope): Promise<void> {
  const rows = await tryLock.run(trx, { lock: `idempotency:${tenant.orgId}:${tenant.clientId}:${key}` });
  if (!rows[0].locked) {
    throw errors.idempotencyInProgress(IN_PROGRESS_RETRY_SECONDS);
  }
}

type KeyParams = { orgId: string; clientId: string; key: string };

const findRecord = prepare((db, p: KeyParams) =>
  db
    .selectFrom('idempotency_keys')
    .selectAll()
    .where('org_id', '=', p.orgId)
    .where('client_id', '=', p.clientId)
    .where('key', '=', p.key),
);

/**
 * The response stored for this key within the replay window. A record of another request is 422;
 * an expired one, or an `in_progress` claim an earlier version left behind, is no record.
 */
async function storedOutcome(
  trx: Trx,
  { tenant, key }: Scope,
  requestHash: string,
  ttlHours: number,
): Promise<Outcome<unknown> | null> {
  const [existing] = await findRecord.run(trx, { orgId: tenant.orgId, clientId: tenant.clientId, key });
  if (existing?.state !== 'completed') return null;
  if (existing.created_at.getTime() < Date.now() - ttlHours * 3_600_000) return null;
  if (existing.request_hash !== requestHash) {
    throw errors.idempotencyKeyReused();
  }
  return { status: existing.response_status ?? 200, body: existing.response_body };
}

async function storeOutcome(
  trx: Trx,
  { tenant, key }: Scope,
  requestHash: string,
  outcome: Outcome<unknown>,
) {
  const at = new Date();
  await storeRecord.run(trx, {
    orgId: tenant.orgId,
    clientId: tenant.clientId,
    key,
    requestHash,
    status: outcome.status,
    body: JSON.stringify(outcome.body),
    at,
  });
}

const storeRecord = prepare(
  (db, p: KeyParams & { requestHash: string; status: number; body: string; at: Date }) => {
    const record = {
      request_hash: p.requestHash,
      state: 'completed' as const,
      response_status: p.status,
      response_body: p.body,
      locked_at: p.at,
      created_at: p.at,
    };
    return db
      .insertInto('idempotency_keys')
      .values({ org_id: p.orgId, client_id: p.clientId, key: p.key, ...record })
      .onConflict((oc) => oc.columns(['org_id', 'client_id', 'key']).doUpdateSet(record));
  },
);

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

/** The clean-up job: drops records past the replay window. */
export async function deleteExpiredIdempotencyKeys(db: Db, ttlHours: number): Promise<number> {
  const result = await db
    .deleteFrom('idempotency_keys')
    .where('created_at', '<', sql<Date>`now() - make_interval(hours => ${ttlHours})`)
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
