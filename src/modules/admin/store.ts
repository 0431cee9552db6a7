import { type Selectable, sql } from 'kysely';
import type { Executor, Trx } from '../../platform/db/pool.ts';
import type { ClientsTable, OrgsTable } from '../../platform/db/schema.ts';

export type OrgRow = Selectable<OrgsTable>;
export type ClientRow = Selectable<ClientsTable>;

export function findOrg(db: Executor, orgId: string) {
  return db.selectFrom('orgs').selectAll().where('id', '=', orgId).executeTakeFirst();
}

export function findClient(db: Executor, orgId: string, clientId: string) {
  return db
    .selectFrom('clients')
    .selectAll()
    .where('org_id', '=', orgId)
    .where('id', '=', clientId)
    .executeTakeFirst();
}

export async function insertOrg(
  trx: Trx,
  org: { id: string; name: string; houseClientId: string },
): Promise<OrgRow> {
  const row = await trx
    .insertInto('orgs')
    .values({
      id: org.id,
      name: org.name,
      house_client_id: org.houseClientId,
      features: JSON.stringify({ sdr_outbound: false }),
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  await trx
    .insertInto('clients')
    .values({ id: org.houseClientId, org_id: org.id, name: `${org.name} (house)`, is_house: true })
    .execute();
  return row;
}

export function updateOrg(
  trx: Trx,
  orgId: string,
  changes: { name?: string; features?: Record<string, unknown>; timezone?: string | null },
) {
  return trx
    .updateTable('orgs')
    .set({
      ...(changes.name !== undefined ? { name: changes.name } : {}),
      ...(changes.features !== undefined ? { features: JSON.stringify(changes.features) } : {}),
      ...(changes.timezone !== undefined ? { timezone: changes.timezone } : {}),
      updated_at: new Date(),
    })
    .where('id', '=', orgId)
    .returningAll()
    .executeTakeFirst();
}

export function insertClient(trx: Trx, client: { id: string; orgId: string; name: string }) {
  return trx
    .insertInto('clients')
    .values({ id: client.id, org_id: client.orgId, name: client.name })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export function insertApiKey(
  trx: Trx,
  key: {
    id: string;
    orgId: string;
    clientId: string | null;
    name: string;
    kind: 'agency' | 'client' | 'legacy_sms';
    prefix: string;
    last4: string;
    hash: Buffer;
    rateLimitPerMinute: number;
    expiresAt: string | null;
    tag: string | null;
  },
) {
  return trx
    .insertInto('api_keys')
    .values({
      id: key.id,
      org_id: key.orgId,
      client_id: key.clientId,
      name: key.name,
      kind: key.kind,
      prefix: key.prefix,
      last4: key.last4,
      secret_hash: key.hash,
      rate_limit_per_minute: key.rateLimitPerMinute,
      expires_at: key.expiresAt,
      tag: key.tag,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export function revokeApiKey(trx: Trx, keyId: string) {
  return trx
    .updateTable('api_keys')
    .set({ revoked_at: new Date() })
    .where('id', '=', keyId)
    .where('revoked_at', 'is', null)
    .returning('id')
    .executeTakeFirst();
}

/** Whether PostgreSQL knows the time zone by this name. */
export async function timeZoneKnown(db: Executor, name: string): Promise<boolean> {
  const row = await db
    .selectFrom(sql<{ name: string }>`pg_timezone_names`.as('z'))
    .select('z.name')
    .where('z.name', '=', name)
    .executeTakeFirst();
  return row !== undefined;
}

export function findApiKey(db: Executor, keyId: string) {
  return db.selectFrom('api_keys').select(['id', 'revoked_at']).where('id', '=', keyId).executeTakeFirst();
}
