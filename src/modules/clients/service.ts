import { sql } from 'kysely';
import { generateKey, publicApiKey } from '../../platform/auth/keys.ts';
import { KEYS_CHANNEL } from '../../platform/context.ts';
import { newId } from '../../platform/db/ids.ts';
import type { Executor, Trx } from '../../platform/db/pool.ts';
import { errors } from '../../platform/http/errors.ts';
import type { PageRequest } from '../../platform/http/pagination.ts';
import { type AuditContext, recordAudit } from '../audit/service.ts';
import * as store from './store.ts';

/**
 * An org's clients and API keys: one set of rules for the admin API (the operator), the REST API
 * (agency keys) and the portal (its users). Every change is recorded in the audit log.
 */

export function publicClient(row: store.ClientRow) {
  return {
    id: row.id,
    org_id: row.org_id,
    name: row.name,
    is_house: row.is_house,
    created_at: row.created_at,
  };
}

/** A key as its managers see it: the /me view plus its client, last four characters and use. */
export function managedApiKey(row: store.ApiKeyRow) {
  return {
    ...publicApiKey(row),
    client_id: row.client_id,
    last4: row.last4,
    created_at: row.created_at,
    last_used_at: row.last_used_at,
    revoked_at: row.revoked_at,
  };
}

async function requireOrg(db: Executor, orgId: string): Promise<void> {
  const org = await db.selectFrom('orgs').select('id').where('id', '=', orgId).executeTakeFirst();
  if (!org) throw errors.notFound('Org', orgId);
}

export async function getClient(db: Executor, orgId: string, clientId: string) {
  const row = await store.findClient(db, orgId, clientId);
  if (!row) throw errors.notFound('Client', clientId);
  return publicClient(row);
}

export async function listClients(
  db: Executor,
  orgId: string,
  page: PageRequest<string>,
  filter: { search?: string } = {},
) {
  return (await store.listClients(db, orgId, page, filter.search)).map(publicClient);
}

export async function createClient(trx: Trx, orgId: string, input: { name: string }, audit: AuditContext) {
  await requireOrg(trx, orgId);
  const client = publicClient(await store.insertClient(trx, { id: newId(), orgId, name: input.name }));
  await recordAudit(trx, orgId, {
    ...audit,
    action: 'client.created',
    record: { type: 'client', id: client.id },
    clientId: client.id,
    details: { name: client.name },
  });
  return client;
}

export async function updateClient(
  trx: Trx,
  orgId: string,
  clientId: string,
  input: { name?: string },
  audit: AuditContext,
) {
  const current = await store.findClient(trx, orgId, clientId);
  if (!current) throw errors.notFound('Client', clientId);
  if (input.name === undefined || input.name === current.name) return publicClient(current);
  const client = publicClient(await store.renameClient(trx, orgId, clientId, input.name));
  await recordAudit(trx, orgId, {
    ...audit,
    action: 'client.updated',
    record: { type: 'client', id: clientId },
    clientId,
    details: { name: { from: current.name, to: client.name } },
  });
  return client;
}

export interface MintKeyInput {
  name: string;
  kind: 'agency' | 'client' | 'legacy_sms';
  client_id?: string;
  rate_limit_per_minute?: number;
  expires_at?: string;
  tag?: string;
}

/** Mints a key; the cleartext is in this answer only. */
export async function mintKey(trx: Trx, orgId: string, input: MintKeyInput, audit: AuditContext) {
  await requireOrg(trx, orgId);
  if (input.kind === 'client') {
    if (!input.client_id) throw errors.invalidField('client_id', 'is required for a client key');
    if (!(await store.findClient(trx, orgId, input.client_id)))
      throw errors.notFound('Client', input.client_id);
  } else if (input.client_id !== undefined) {
    throw errors.invalidField('client_id', `is only accepted for client keys, not ${input.kind} keys`);
  }
  if (input.expires_at !== undefined && Date.parse(input.expires_at) <= Date.now()) {
    throw errors.invalidField('expires_at', 'must be in the future');
  }
  const secret = generateKey(input.kind);
  const row = await store.insertApiKey(trx, {
    id: newId(),
    org_id: orgId,
    client_id: input.kind === 'client' ? input.client_id! : null,
    name: input.name,
    kind: input.kind,
    prefix: secret.prefix,
    last4: secret.last4,
    secret_hash: secret.hash,
    rate_limit_per_minute: input.rate_limit_per_minute ?? 60,
    expires_at: input.expires_at ?? null,
    tag: input.tag ?? null,
  });
  await recordAudit(trx, orgId, {
    ...audit,
    action: 'api_key.created',
    record: { type: 'api_key', id: row.id },
    clientId: row.client_id,
    details: { name: row.name, kind: row.kind, prefix: row.prefix, last4: row.last4 },
  });
  return { api_key: managedApiKey(row), key: secret.cleartext };
}

/**
 * Revokes a key of the org (of any org when `orgId` is null: the operator). Every API process drops it
 * from its cache through NOTIFY once this commits; the caller evicts it from its own process's cache
 * at once (`platform.keys.evict(id)`), so it answers 401 from the next request.
 */
export async function revokeKey(trx: Trx, orgId: string | null, keyId: string, audit: AuditContext) {
  const revoked = await store.revokeApiKey(trx, orgId, keyId);
  if (!revoked) {
    // Revoking a revoked key changes nothing; another org's key is not found.
    const existing = await store.findApiKey(trx, orgId, keyId);
    if (!existing) throw errors.notFound('API key', keyId);
    return managedApiKey(existing);
  }
  await sql`SELECT pg_notify(${KEYS_CHANNEL}, ${keyId})`.execute(trx);
  await recordAudit(trx, revoked.org_id, {
    ...audit,
    action: 'api_key.revoked',
    record: { type: 'api_key', id: keyId },
    clientId: revoked.client_id,
    details: { name: revoked.name, kind: revoked.kind, prefix: revoked.prefix, last4: revoked.last4 },
  });
  return managedApiKey(revoked);
}

export async function getApiKey(db: Executor, orgId: string, keyId: string) {
  const row = await store.findApiKey(db, orgId, keyId);
  if (!row) throw errors.notFound('API key', keyId);
  return managedApiKey(row);
}

/** The org's keys in use (not revoked), newest first; one client's only when `client_id` is given. */
export async function listApiKeys(
  db: Executor,
  orgId: string,
  page: PageRequest<string>,
  filter: { client_id?: string } = {},
) {
  return (await store.listApiKeys(db, orgId, page, filter.client_id)).map(managedApiKey);
}
