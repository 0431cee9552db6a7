import { type ColumnType, type Generated, type RawBuilder, type Selectable, sql } from 'kysely';
import type { TenantScope } from '../../platform/auth/tenant.ts';
import type { Executor } from '../../platform/db/pool.ts';
import type { Timestamp } from '../../platform/db/schema.ts';

import type { FilterNode } from './filter.ts';

export interface CrmListsTable {
  id: string;
  org_id: string;
  client_id: string;
  name: string;
  description: string | null;
  processing_type: Generated<'static' | 'smart'>;
  filter_branch: ColumnType<FilterNode | null, string | null, string | null>;
  exclude_dnc: Generated<boolean>;
  exclude_unsubscribed: Generated<boolean>;
  exclude_archived: Generated<boolean>;
  emit_flow_triggers: Generated<boolean>;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface CrmListMembersTable {
  list_id: string;
  org_id: string;
  client_id: string;
  entity_type: EntityType;
  entity_id: string;
  added_at: Generated<Date>;
}

declare module '../../platform/db/schema.ts' {
  interface Database {
    crm_lists: CrmListsTable;
    crm_list_members: CrmListMembersTable;
  }
}

export type EntityType = 'contact' | 'company' | 'deal';
export type ListRow = Selectable<CrmListsTable>;

const RECORD_COLUMNS = [
  'id',
  'name',
  'description',
  'processing_type',
  'filter_branch',
  'exclude_dnc',
  'exclude_unsubscribed',
  'exclude_archived',
  'emit_flow_triggers',
  'created_at',
  'updated_at',
] as const;

export type ListRecord = Pick<ListRow, (typeof RECORD_COLUMNS)[number]>;

export type ListFields = Partial<
  Omit<ListRecord, 'id' | 'created_at' | 'updated_at' | 'filter_branch'> & {
    filter_branch: FilterNode | null;
  }
>;

function lists(db: Executor, tenant: TenantScope) {
  return db
    .selectFrom('crm_lists')
    .select(RECORD_COLUMNS)
    .where('org_id', '=', tenant.orgId)
    .where('client_id', '=', tenant.clientId);
}

export function findList(db: Executor, tenant: TenantScope, id: string) {
  return lists(db, tenant).where('id', '=', id).executeTakeFirst();
}

export function lockList(trx: Executor, tenant: TenantScope, id: string) {
  return lists(trx, tenant).where('id', '=', id).forUpdate().executeTakeFirst();
}

/** The list, protected from deletion until the transaction ends (its members are being written). */
export function shareList(trx: Executor, tenant: TenantScope, id: string) {
  return lists(trx, tenant).where('id', '=', id).forKeyShare().executeTakeFirst();
}

export function listLists(
  db: Executor,
  tenant: TenantScope,
  filter: { processingType?: string; before?: string; limit: number },
) {
  let query = lists(db, tenant);
  if (filter.processingType !== undefined)
    query = query.where('processing_type', '=', filter.processingType as 'static');
  if (filter.before !== undefined) query = query.where('id', '<', filter.before);
  return query
    .orderBy('id', 'desc')
    .limit(filter.limit + 1)
    .execute();
}

export function insertList(
  trx: Executor,
  tenant: TenantScope,
  list: { id: string; name: string; at: Date } & ListFields,
) {
  const { id, at, filter_branch, ...fields } = list;
  return trx
    .insertInto('crm_lists')
    .values({
      ...fields,
      id,
      org_id: tenant.orgId,
      client_id: tenant.clientId,
      filter_branch: filter_branch ? JSON.stringify(filter_branch) : null,
      created_at: at,
      updated_at: at,
    })
    .returning(RECORD_COLUMNS)
    .executeTakeFirstOrThrow();
}

export function updateList(trx: Executor, tenant: TenantScope, id: string, changes: ListFields) {
  const { filter_branch, ...fields } = changes;
  return trx
    .updateTable('crm_lists')
    .set({
      ...fields,
      ...(filter_branch !== undefined
        ? { filter_branch: filter_branch === null ? null : JSON.stringify(filter_branch) }
        : {}),
      updated_at: new Date(),
    })
    .where('org_id', '=', tenant.orgId)
    .where('client_id', '=', tenant.clientId)
    .where('id', '=', id)
    .returning(RECORD_COLUMNS)
    .executeTakeFirstOrThrow();
}

export function deleteList(trx: Executor, tenant: TenantScope, id: string) {
  return trx
    .deleteFrom('crm_lists')
    .where('org_id', '=', tenant.orgId)
    .where('client_id', '=', tenant.clientId)
    .where('id', '=', id)
    .executeTakeFirst();
}

export function deleteAllMembers(trx: Executor, listId: string) {
  return trx.deleteFrom('crm_list_members').where('list_id', '=', listId).execute();
}

export function deleteMember(trx: Executor, tenant: TenantScope, listId: string, entityId: string) {
  return trx
    .deleteFrom('crm_list_members')
    .where('list_id', '=', listId)
    .where('org_id', '=', tenant.orgId)
    .where('client_id', '=', tenant.clientId)
    .where('entity_id', '=', entityId)
    .executeTakeFirst();
}

/** Where each kind of member lives; the deals table belongs to the deals module, so it is reached with SQL. */
const ENTITY_TABLES: Record<EntityType, RawBuilder<unknown>> = {
  contact: sql.table('contacts'),
  company: sql.table('companies'),
  deal: sql.table('deals'),
};

export interface ChunkOutcome {
  added: number;
  owned: number;
  not_found: string[];
}

/**
 * Adds one chunk of ids in one statement: only the ids of records of this tenant are inserted; the
 * others come back as not found.
 */
export async function addMembersChunk(
  trx: Executor,
  tenant: TenantScope,
  listId: string,
  entityType: EntityType,
  ids: string[],
): Promise<ChunkOutcome> {
  const { rows } = await sql<ChunkOutcome>`
    WITH ids AS (SELECT unnest(${ids}::uuid[]) AS id),
    owned AS (
      SELECT e.id FROM ${ENTITY_TABLES[entityType]} e JOIN ids ON e.id = ids.id
      WHERE e.org_id = ${tenant.orgId} AND e.client_id = ${tenant.clientId}
    ), added AS (
      INSERT INTO crm_list_members (list_id, org_id, client_id, entity_type, entity_id)
      SELECT ${listId}::uuid, ${tenant.orgId}::uuid, ${tenant.clientId}::uuid, ${entityType}::text, id FROM owned
      ON CONFLICT (list_id, entity_id) DO NOTHING
      RETURNING entity_id
    )
    SELECT
      (SELECT count(*) FROM added)::int AS added,
      (SELECT count(*) FROM owned)::int AS owned,
      ARRAY(SELECT id::text FROM ids WHERE id NOT IN (SELECT id FROM owned)) AS not_found`.execute(trx);
  return rows[0];
}

export interface Exclusions {
  exclude_dnc: boolean;
  exclude_unsubscribed: boolean;
  exclude_archived: boolean;
}

/** A contact is on the do-not-call list when one of its phones is marked do_not_call or has a DNC scope. */
export const DNC_PHONE = sql`(cp.consent_status = 'do_not_call' OR cp.dnc_scope IS NOT NULL)`;
/** A contact has unsubscribed when one of its phones has opted out. */
export const UNSUBSCRIBED_PHONE = sql`cp.consent_status = 'opt_out'`;

/** The static members of a list, newest entity first, with the list's exclusions applied. */
export async function listStaticMembers(
  db: Executor,
  tenant: TenantScope,
  listId: string,
  exclusions: Exclusions,
  page: { before?: string; limit: number },
) {
  const conditions: RawBuilder<unknown>[] = [
    sql`m.list_id = ${listId}`,
    sql`m.org_id = ${tenant.orgId}`,
    sql`m.client_id = ${tenant.clientId}`,
  ];
  if (page.before !== undefined) conditions.push(sql`m.entity_id < ${page.before}::uuid`);
  if (exclusions.exclude_archived) {
    conditions.push(sql`NOT EXISTS (
      SELECT 1 FROM contacts c WHERE m.entity_type = 'contact' AND c.id = m.entity_id AND c.archived_at IS NOT NULL
      UNION ALL
      SELECT 1 FROM companies co WHERE m.entity_type = 'company' AND co.id = m.entity_id AND co.archived_at IS NOT NULL
      UNION ALL
      SELECT 1 FROM deals d WHERE m.entity_type = 'deal' AND d.id = m.entity_id AND d.archived_at IS NOT NULL)`);
  }
  for (const [flag, phone] of [
    [exclusions.exclude_dnc, DNC_PHONE],
    [exclusions.exclude_unsubscribed, UNSUBSCRIBED_PHONE],
  ] as const) {
    if (flag) {
      conditions.push(sql`NOT EXISTS (
        SELECT 1 FROM contact_phones cp WHERE m.entity_type = 'contact' AND cp.contact_id = m.entity_id AND ${phone})`);
    }
  }
  const { rows } = await sql<{ entity_type: EntityType; entity_id: string; added_at: Date }>`
    SELECT m.entity_type, m.entity_id, m.added_at FROM crm_list_members m
    WHERE ${sql.join(conditions, sql` AND `)}
    ORDER BY m.entity_id DESC
    LIMIT ${page.limit + 1}`.execute(db);
  return rows;
}
