import { type ColumnType, type Generated, type RawBuilder, type Selectable, sql } from 'kysely';
import type { TenantScope } from '../../platform/auth/tenant.ts';
import type { Executor, Trx } from '../../platform/db/pool.ts';
import type { Timestamp } from '../../platform/db/schema.ts';
import { whereOwned, whereTenant } from '../../platform/db/tenant-rows.ts';
import type { PageRequest } from '../../platform/http/pagination.ts';
import { companyArchived } from '../companies/service.ts';
import {
  contactExcluded,
  contactIdsMatching,
  type ContactFilter as FilterNode,
  hasRelativeTimeCondition,
} from '../contacts/service.ts';
import { dealArchived } from '../deals/service.ts';

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
  return db.selectFrom('crm_lists').select(RECORD_COLUMNS).$call(whereTenant(tenant));
}

export function findList(db: Executor, tenant: TenantScope, id: string) {
  return lists(db, tenant).where('id', '=', id).executeTakeFirst();
}

export function lockList(trx: Trx, tenant: TenantScope, id: string) {
  return lists(trx, tenant).where('id', '=', id).forUpdate().executeTakeFirst();
}

/** The list, protected from deletion until the transaction ends (its members are being written). */
export function shareList(trx: Trx, tenant: TenantScope, id: string) {
  return lists(trx, tenant).where('id', '=', id).forKeyShare().executeTakeFirst();
}

/** Lists newest first. */
export function listLists(
  db: Executor,
  tenant: TenantScope,
  filter: { processingType?: 'static' | 'smart' },
  page: PageRequest<string>,
) {
  let query = lists(db, tenant);
  if (filter.processingType !== undefined) query = query.where('processing_type', '=', filter.processingType);
  if (page.after !== undefined) query = query.where('id', '<', page.after);
  return query.orderBy('id', 'desc').limit(page.limit).execute();
}

export function insertList(
  trx: Trx,
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

export function updateList(trx: Trx, tenant: TenantScope, id: string, changes: ListFields) {
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
    .$call(whereOwned(tenant, id))
    .returning(RECORD_COLUMNS)
    .executeTakeFirstOrThrow();
}

export function deleteList(trx: Trx, tenant: TenantScope, id: string) {
  return trx.deleteFrom('crm_lists').$call(whereOwned(tenant, id)).executeTakeFirst();
}

export function deleteAllMembers(trx: Trx, listId: string) {
  return trx.deleteFrom('crm_list_members').where('list_id', '=', listId).execute();
}

export function deleteMember(trx: Trx, tenant: TenantScope, listId: string, entityId: string) {
  return trx
    .deleteFrom('crm_list_members')
    .where('list_id', '=', listId)
    .$call(whereTenant(tenant))
    .where('entity_id', '=', entityId)
    .executeTakeFirst();
}

/** Adds the tenant's records `ids` (already checked by their modules) in one statement. */
export async function insertMembers(
  trx: Trx,
  tenant: TenantScope,
  listId: string,
  entityType: EntityType,
  ids: string[],
): Promise<number> {
  const { rows } = await sql<{ added: number }>`
    WITH added AS (
      INSERT INTO crm_list_members (list_id, org_id, client_id, entity_type, entity_id)
      SELECT ${listId}::uuid, ${tenant.orgId}::uuid, ${tenant.clientId}::uuid, ${entityType}::text, id
      FROM unnest(${ids}::uuid[]) AS id
      ON CONFLICT (org_id, list_id, entity_id) DO NOTHING
      RETURNING entity_id
    )
    SELECT count(*)::int AS added FROM added`.execute(trx);
  return rows[0].added;
}

export interface Exclusions {
  exclude_dnc: boolean;
  exclude_unsubscribed: boolean;
  exclude_archived: boolean;
}

/** A static member, as stored. */
export interface MemberRow {
  entity_type: EntityType;
  entity_id: string;
  added_at: Date;
}

/** The static members of a list, newest entity first, with the list's exclusions applied. */
export async function listStaticMembers(
  db: Executor,
  tenant: TenantScope,
  listId: string,
  exclusions: Exclusions,
  page: PageRequest<string>,
): Promise<MemberRow[]> {
  const entity = sql.ref('m.entity_id');
  const conditions: RawBuilder<unknown>[] = [
    sql`m.list_id = ${listId}`,
    sql`m.org_id = ${tenant.orgId}`,
    sql`m.client_id = ${tenant.clientId}`,
    sql`NOT (m.entity_type = 'contact' AND ${contactExcluded(exclusions, entity)})`,
  ];
  if (page.after !== undefined) conditions.push(sql`m.entity_id < ${page.after}::uuid`);
  if (exclusions.exclude_archived) {
    conditions.push(sql`NOT (m.entity_type = 'company' AND ${companyArchived(entity)})`);
    conditions.push(sql`NOT (m.entity_type = 'deal' AND ${dealArchived(entity)})`);
  }
  const { rows } = await sql<MemberRow>`
    SELECT m.entity_type, m.entity_id, m.added_at FROM crm_list_members m
    WHERE ${sql.join(conditions, sql` AND `)}
    ORDER BY m.entity_id DESC
    LIMIT ${page.limit}`.execute(db);
  return rows;
}

/**
 * The ids of the contacts that are members of the list now, its exclusions applied, as a SQL piece;
 * `only` (a column reference) narrows it to that one contact.
 */
export function listContactIds(tenant: TenantScope, list: ListRecord, only?: unknown) {
  if (list.processing_type === 'smart' && list.filter_branch) {
    return contactIdsMatching(tenant, list.filter_branch, list, only);
  }
  const conditions: RawBuilder<unknown>[] = [
    sql`m.org_id = ${tenant.orgId}`,
    sql`m.client_id = ${tenant.clientId}`,
    sql`m.list_id = ${list.id}`,
    sql`m.entity_type = 'contact'`,
    sql`NOT ${contactExcluded(list, sql.ref('m.entity_id'))}`,
  ];
  if (only !== undefined) conditions.push(sql`m.entity_id = ${only}`);
  return sql<{ id: string }>`SELECT m.entity_id AS id FROM crm_list_members m
    WHERE ${sql.join(conditions, sql` AND `)}`;
}

/** The list's version as a SQL piece: its updated_at, which every change of its definition moves. */
export function listVersion(orgId: unknown, listId: unknown) {
  return sql<Date | null>`(SELECT l.updated_at FROM crm_lists l WHERE l.org_id = ${orgId} AND l.id = ${listId})`;
}

/**
 * True when time alone moves the list's members, with no write (a smart list whose filter has a
 * condition relative to now, such as `within_last_days`), as a SQL piece.
 */
export function listTimeRelative(orgId: unknown, listId: unknown) {
  return sql<boolean>`coalesce((SELECT l.processing_type = 'smart'
      AND ${hasRelativeTimeCondition(sql.ref('l.filter_branch'))}
    FROM crm_lists l WHERE l.org_id = ${orgId} AND l.id = ${listId}), false)`;
}
