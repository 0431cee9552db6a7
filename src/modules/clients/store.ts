import type { Insertable, Selectable } from 'kysely';
import { containsPattern } from '../../platform/db/like.ts';
import type { Executor, Trx } from '../../platform/db/pool.ts';
import type { ApiKeysTable, ClientsTable } from '../../platform/db/schema.ts';
import type { PageRequest } from '../../platform/http/pagination.ts';

export type ClientRow = Selectable<ClientsTable>;
export type ApiKeyRow = Selectable<ApiKeysTable>;

export function findClient(db: Executor, orgId: string, clientId: string) {
  return db
    .selectFrom('clients')
    .selectAll()
    .where('org_id', '=', orgId)
    .where('id', '=', clientId)
    .executeTakeFirst();
}

export function insertClient(trx: Trx, client: { id: string; orgId: string; name: string }) {
  return trx
    .insertInto('clients')
    .values({ id: client.id, org_id: client.orgId, name: client.name })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export function renameClient(trx: Trx, orgId: string, clientId: string, name: string) {
  return trx
    .updateTable('clients')
    .set({ name })
    .where('org_id', '=', orgId)
    .where('id', '=', clientId)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** The org's clients, newest first; `search` matches the name anywhere, in any case. */
export function listClients(db: Executor, orgId: string, page: PageRequest<string>, search?: string) {
  let query = db.selectFrom('clients').selectAll().where('org_id', '=', orgId);
  if (search) query = query.where('name', 'ilike', containsPattern(search));
  if (page.after) query = query.where('id', '<', page.after);
  return query.orderBy('id', 'desc').limit(page.limit).execute();
}

export function insertApiKey(trx: Trx, key: Insertable<ApiKeysTable>) {
  return trx.insertInto('api_keys').values(key).returningAll().executeTakeFirstOrThrow();
}

/** Revokes the key (of the org when given); undefined when there is no such unrevoked key. */
export function revokeApiKey(trx: Trx, orgId: string | null, keyId: string) {
  let query = trx
    .updateTable('api_keys')
    .set({ revoked_at: new Date() })
    .where('id', '=', keyId)
    .where('revoked_at', 'is', null);
  if (orgId !== null) query = query.where('org_id', '=', orgId);
  return query.returningAll().executeTakeFirst();
}

export function findApiKey(db: Executor, orgId: string | null, keyId: string) {
  let query = db.selectFrom('api_keys').selectAll().where('id', '=', keyId);
  if (orgId !== null) query = query.where('org_id', '=', orgId);
  return query.executeTakeFirst();
}

/** The org's unrevoked keys, newest first; one client's only when `clientId` is given. */
export function listApiKeys(db: Executor, orgId: string, page: PageRequest<string>, clientId?: string) {
  let query = db
    .selectFrom('api_keys')
    .selectAll()
    .where('org_id', '=', orgId)
    .where('revoked_at', 'is', null);
  if (clientId) query = query.where('client_id', '=', clientId);
  if (page.after) query = query.where('id', '<', page.after);
  return query.orderBy('id', 'desc').limit(page.limit).execute();
}
