import { type RawBuilder, sql } from 'kysely';
import type { TenantScope } from '../../platform/auth/tenant.ts';
import type { Executor, Trx } from '../../platform/db/pool.ts';
import type { PageRequest } from '../../platform/http/pagination.ts';

/**
 * A contact's phones and emails ("channels") follow the same rules: unique value per tenant, one
 * primary per contact. One store serves both, described by a `Channel`.
 */
export interface Channel {
  kind: 'phone' | 'email';
  plural: 'phones' | 'emails';
  table: 'contact_phones' | 'contact_emails';
  /** The stored identity column, and the name it has in the API. */
  valueColumn: 'phone_e164' | 'email';
  /** The other columns the API reads and writes. */
  columns: readonly string[];
}

export const PHONE: Channel = {
  kind: 'phone',
  plural: 'phones',
  table: 'contact_phones',
  valueColumn: 'phone_e164',
  columns: [
    'phone_type',
    'status',
    'consent_status',
    'consent_source',
    'consented_at',
    'dnc_scope',
    'source',
  ],
};

export const EMAIL: Channel = {
  kind: 'email',
  plural: 'emails',
  table: 'contact_emails',
  valueColumn: 'email',
  columns: ['status', 'source'],
};

/** A phone or email row as the API returns it (`phone` or `email` holds the value). */
export type ChannelRecord = {
  id: string;
  contact_id: string;
  is_primary: boolean;
  created_at: Date;
  updated_at: Date;
} & Record<string, unknown>;

function selection(channel: Channel): RawBuilder<unknown> {
  return sql.join([
    sql.ref('id'),
    sql.ref('contact_id'),
    sql`${sql.ref(channel.valueColumn)} AS ${sql.ref(channel.kind)}`,
    sql.ref('is_primary'),
    ...channel.columns.map((column) => sql.ref(column)),
    sql.ref('created_at'),
    sql.ref('updated_at'),
  ]);
}

function inTenant(tenant: TenantScope): RawBuilder<unknown> {
  return sql`org_id = ${tenant.orgId} AND client_id = ${tenant.clientId}`;
}

/** Where a page of a contact's phones or emails starts: the rank (0 for the primary) and id of the last row. */
export interface ChannelCursor {
  rank: number;
  id: string;
}

/** Primary first, then oldest first. */
export async function listChannels(
  db: Executor,
  channel: Channel,
  tenant: TenantScope,
  contactId: string,
  page: PageRequest<ChannelCursor>,
): Promise<ChannelRecord[]> {
  const rank = sql`(CASE WHEN is_primary THEN 0 ELSE 1 END)`;
  const after = page.after ? sql`AND (${rank}, id) > (${page.after.rank}, ${page.after.id}::uuid)` : sql``;
  const { rows } = await sql<ChannelRecord>`
    SELECT ${selection(channel)} FROM ${sql.table(channel.table)}
    WHERE ${inTenant(tenant)} AND contact_id = ${contactId} ${after}
    ORDER BY ${rank}, id
    LIMIT ${page.limit}`.execute(db);
  return rows;
}

export async function findChannel(
  db: Executor,
  channel: Channel,
  tenant: TenantScope,
  contactId: string,
  id: string,
): Promise<ChannelRecord | undefined> {
  const { rows } = await sql<ChannelRecord>`
    SELECT ${selection(channel)} FROM ${sql.table(channel.table)}
    WHERE ${inTenant(tenant)} AND contact_id = ${contactId} AND id = ${id}`.execute(db);
  return rows[0];
}

/** The row holding this value anywhere in the tenant. */
export async function findChannelByValue(
  db: Executor,
  channel: Channel,
  tenant: TenantScope,
  value: string,
): Promise<ChannelRecord | undefined> {
  const { rows } = await sql<ChannelRecord>`
    SELECT ${selection(channel)} FROM ${sql.table(channel.table)}
    WHERE ${inTenant(tenant)} AND ${sql.ref(channel.valueColumn)} = ${value}`.execute(db);
  return rows[0];
}

export async function countChannels(
  db: Executor,
  channel: Channel,
  tenant: TenantScope,
  contactId: string,
): Promise<number> {
  const { rows } = await sql<{ count: number }>`
    SELECT count(*) AS count FROM ${sql.table(channel.table)}
    WHERE ${inTenant(tenant)} AND contact_id = ${contactId}`.execute(db);
  return rows[0].count;
}

/** Inserts the row; when the value is already taken in the tenant, inserts nothing and returns undefined. */
export async function insertChannel(
  trx: Trx,
  channel: Channel,
  tenant: TenantScope,
  row: { id: string; contactId: string; value: string; isPrimary: boolean; fields: Record<string, unknown> },
): Promise<ChannelRecord | undefined> {
  const fields = Object.entries(row.fields).filter(([column]) => channel.columns.includes(column));
  const columns = [
    'id',
    'org_id',
    'client_id',
    'contact_id',
    channel.valueColumn,
    'is_primary',
    ...fields.map(([column]) => column),
  ];
  const values = [row.id, tenant.orgId, tenant.clientId, row.contactId, row.value, row.isPrimary];
  const { rows } = await sql<ChannelRecord>`
    INSERT INTO ${sql.table(channel.table)} (${sql.join(columns.map((column) => sql.ref(column)))})
    VALUES (${sql.join([...values, ...fields.map(([, value]) => value)])})
    ON CONFLICT (org_id, client_id, ${sql.ref(channel.valueColumn)}) DO NOTHING
    RETURNING ${selection(channel)}`.execute(trx);
  return rows[0];
}

export async function updateChannel(
  trx: Trx,
  channel: Channel,
  tenant: TenantScope,
  id: string,
  changes: Record<string, unknown>,
): Promise<ChannelRecord> {
  const assignments = Object.entries(changes)
    .filter(([column]) => column === 'is_primary' || channel.columns.includes(column))
    .map(([column, value]) => sql`${sql.ref(column)} = ${value}`);
  const { rows } = await sql<ChannelRecord>`
    UPDATE ${sql.table(channel.table)} SET ${sql.join([...assignments, sql`updated_at = now()`])}
    WHERE ${inTenant(tenant)} AND id = ${id}
    RETURNING ${selection(channel)}`.execute(trx);
  return rows[0];
}

/** Clears the contact's primary flag, so another row can take it. */
export async function demotePrimary(trx: Trx, channel: Channel, tenant: TenantScope, contactId: string) {
  await sql`
    UPDATE ${sql.table(channel.table)} SET is_primary = false, updated_at = now()
    WHERE ${inTenant(tenant)} AND contact_id = ${contactId} AND is_primary`.execute(trx);
}

/** Makes the contact's oldest row (other than `exceptId`) primary; undefined when it has none. */
export async function promoteOldest(
  trx: Trx,
  channel: Channel,
  tenant: TenantScope,
  contactId: string,
  exceptId: string,
): Promise<ChannelRecord | undefined> {
  const { rows } = await sql<ChannelRecord>`
    UPDATE ${sql.table(channel.table)} SET is_primary = true, updated_at = now()
    WHERE id = (
      SELECT id FROM ${sql.table(channel.table)}
      WHERE ${inTenant(tenant)} AND contact_id = ${contactId} AND id <> ${exceptId}
      ORDER BY created_at, id LIMIT 1)
    RETURNING ${selection(channel)}`.execute(trx);
  return rows[0];
}

export async function deleteChannel(trx: Trx, channel: Channel, tenant: TenantScope, id: string) {
  await sql`DELETE FROM ${sql.table(channel.table)} WHERE ${inTenant(tenant)} AND id = ${id}`.execute(trx);
}

/**
 * The phone rows of a number that bear on reaching it from this tenant: the tenant's own row (with its
 * contact's name), and any row of the org that puts the number on the global do-not-call list.
 */
export function phoneStanding(db: Executor, tenant: TenantScope, phone: string) {
  return db
    .selectFrom('contact_phones as p')
    .innerJoin('contacts as c', (join) =>
      join
        .onRef('c.org_id', '=', 'p.org_id')
        .onRef('c.client_id', '=', 'p.client_id')
        .onRef('c.id', '=', 'p.contact_id'),
    )
    .select([
      'p.client_id',
      'p.contact_id',
      'c.full_name',
      'c.archived_at',
      'p.consent_status',
      'p.dnc_scope',
    ])
    .where('p.org_id', '=', tenant.orgId)
    .where('p.phone_e164', '=', phone)
    .where((where) =>
      where.or([where('p.client_id', '=', tenant.clientId), where('p.dnc_scope', '=', 'global')]),
    )
    .execute();
}
