import {
  type ColumnType,
  type Generated,
  type Insertable,
  type Selectable,
  sql,
  type Updateable,
} from 'kysely';
import type { TenantScope } from '../../platform/auth/tenant.ts';
import type { Db, Executor, Trx } from '../../platform/db/pool.ts';
import { prepare } from '../../platform/db/prepared.ts';
import type { Json, NullableTimestamp } from '../../platform/db/schema.ts';
import { idsOfTenant, whereOwned, whereTenant } from '../../platform/db/tenant-rows.ts';
import { eventInsert } from '../../platform/events/emit.ts';
import type { PageRequest } from '../../platform/http/pagination.ts';
import { defaultStart, pipelineName, stageName } from '../pipelines/service.ts';

declare module '../../platform/db/schema.ts' {
  interface Database {
    deals: DealsTable;
  }
}

export type DealStatus = 'open' | 'won' | 'lost';

export interface DealsTable {
  id: string;
  org_id: string;
  client_id: string;
  name: string;
  amount: number | null;
  currency: string;
  pipeline_id: string;
  stage_id: string;
  status: DealStatus;
  owner_user_id: string | null;
  primary_contact_id: string | null;
  company_id: string | null;
  /** A `date`: the driver reads it as local midnight. */
  expected_close_date: ColumnType<Date | null, string | null | undefined, string | null>;
  tags: string[];
  custom_fields: Json<Record<string, unknown>>;
  archived_at: NullableTimestamp;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

export type DealRow = Selectable<DealsTable>;
export type DealChanges = Omit<Updateable<DealsTable>, 'id' | 'org_id' | 'client_id' | 'created_at'>;

export interface DealFilter {
  pipeline_id?: string;
  stage_id?: string;
  status?: DealStatus;
  company_id?: string;
  contact_id?: string;
  owner_user_id?: string;
  include_archived?: boolean;
}

function dealsOf(db: Executor, tenant: TenantScope) {
  return db.selectFrom('deals').selectAll().$call(whereTenant(tenant));
}

export function insertDeal(
  trx: Trx,
  tenant: TenantScope,
  deal: Omit<Insertable<DealsTable>, 'org_id' | 'client_id' | 'custom_fields' | 'updated_at'> & {
    custom_fields: Record<string, unknown>;
    created_at: Date;
  },
) {
  return trx
    .insertInto('deals')
    .values({
      ...deal,
      org_id: tenant.orgId,
      client_id: tenant.clientId,
      custom_fields: JSON.stringify(deal.custom_fields),
      updated_at: deal.created_at,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

type NewDeal = Omit<
  Insertable<DealsTable>,
  'org_id' | 'client_id' | 'pipeline_id' | 'stage_id' | 'custom_fields' | 'updated_at'
> & {
  custom_fields: Record<string, unknown>;
  created_at: Date;
};

type CreateParams = Omit<NewDeal, 'custom_fields' | 'tags'> & {
  orgId: string;
  clientId: string;
  tags: string[];
  customFields: string;
  eventId: string;
  eventData: string;
};

/**
 * The create of a deal in the default pipeline's first stage as one statement, committed on its own:
 * the deal and its `deal.created` event (`eventData` with the placement added). No row when the
 * client has no default pipeline yet; a contact or company that is not the tenant's fails the
 * statement on its foreign key (`referenceRefused`). Either way nothing is written.
 */
const createDealStatement = prepare(
  (_db, p: CreateParams) => sql<DealRow>`
    WITH start AS (${defaultStart(p.orgId, p.clientId)}
    ), deal AS (
      INSERT INTO deals (id, org_id, client_id, name, amount, currency, pipeline_id, stage_id, status,
        owner_user_id, primary_contact_id, company_id, expected_close_date, tags, custom_fields, created_at, updated_at)
      SELECT ${p.id}::uuid, ${p.orgId}::uuid, ${p.clientId}::uuid, ${p.name}::text, ${p.amount}::numeric,
        ${p.currency}::text, start.pipeline_id, start.stage_id, ${p.status}::text, ${p.owner_user_id}::uuid,
        ${p.primary_contact_id}::uuid, ${p.company_id}::uuid, ${p.expected_close_date}::date, ${p.tags}::text[],
        ${p.customFields}::jsonb, ${p.created_at}::timestamptz, ${p.created_at}::timestamptz
      FROM start
      RETURNING *
    ), event AS (
      ${eventInsert(
        {
          id: p.eventId,
          orgId: p.orgId,
          clientId: p.clientId,
          type: 'deal.created',
          data: sql`(SELECT ${p.eventData}::jsonb || jsonb_build_object('pipeline_id', pipeline_id, 'stage_id', stage_id) FROM deal)`,
          metadata: '{}',
        },
        sql<boolean>`EXISTS (SELECT 1 FROM deal)`,
      )}
    )
    SELECT * FROM deal`,
);

/** See `createDealStatement`. */
export async function createDealAtOnce(
  db: Db,
  tenant: TenantScope,
  deal: NewDeal & { eventId: string; eventData: string },
): Promise<DealRow | undefined> {
  const { custom_fields, tags, ...rest } = deal;
  const [row] = await createDealStatement.run(db, {
    ...rest,
    orgId: tenant.orgId,
    clientId: tenant.clientId,
    tags: tags ?? [],
    customFields: JSON.stringify(custom_fields),
  });
  return row;
}

export function findDeal(db: Executor, tenant: TenantScope, id: string) {
  return dealsOf(db, tenant).where('id', '=', id).executeTakeFirst();
}

export function findDeals(db: Executor, tenant: TenantScope, ids: string[]) {
  if (ids.length === 0) return Promise.resolve([]);
  return dealsOf(db, tenant).where('id', 'in', ids).execute();
}

/** Which of `ids` are deals of the tenant. */
export function findDealIds(db: Executor, tenant: TenantScope, ids: string[]): Promise<string[]> {
  return idsOfTenant(db, 'deals', tenant, ids);
}

/** Reads and locks the deal for the rest of the transaction, so concurrent updates apply one after another. */
export function lockDeal(trx: Trx, tenant: TenantScope, id: string) {
  return dealsOf(trx, tenant).where('id', '=', id).forUpdate().executeTakeFirst();
}

export function updateDeal(trx: Trx, tenant: TenantScope, id: string, changes: DealChanges) {
  return trx
    .updateTable('deals')
    .set(changes)
    .$call(whereOwned(tenant, id))
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Deals newest first. */
export function listDeals(db: Executor, tenant: TenantScope, filter: DealFilter, page: PageRequest<string>) {
  let query = dealsOf(db, tenant);
  if (!filter.include_archived) query = query.where('archived_at', 'is', null);
  if (filter.pipeline_id) query = query.where('pipeline_id', '=', filter.pipeline_id);
  if (filter.stage_id) query = query.where('stage_id', '=', filter.stage_id);
  if (filter.status) query = query.where('status', '=', filter.status);
  if (filter.company_id) query = query.where('company_id', '=', filter.company_id);
  if (filter.contact_id) query = query.where('primary_contact_id', '=', filter.contact_id);
  if (filter.owner_user_id) query = query.where('owner_user_id', '=', filter.owner_user_id);
  if (page.after !== undefined) query = query.where('id', '<', page.after);
  return query.orderBy('id', 'desc').limit(page.limit).execute();
}

/** Sets archived_at unless already set; the id of the deal, or undefined when it is not the tenant's. */
export function archiveDeal(trx: Trx, tenant: TenantScope, id: string, now: Date) {
  return trx
    .updateTable('deals')
    .set({
      archived_at: sql`coalesce(archived_at, ${now})`,
      updated_at: sql`CASE WHEN archived_at IS NULL THEN ${now} ELSE updated_at END`,
    })
    .$call(whereOwned(tenant, id))
    .returning('id')
    .executeTakeFirst();
}

/** For a list's members: true when `dealId` (a column reference) names an archived deal. */
export function dealArchived(dealId: unknown) {
  return sql<boolean>`EXISTS (SELECT 1 FROM deals d WHERE d.id = ${dealId} AND d.archived_at IS NOT NULL)`;
}

// What AI gists read of deals, as SQL pieces the gist statement embeds (see src/modules/ai/store.ts).

/** `d` (a deals row alias) as a gist reads it, with its stage's and pipeline's names. */
function dealGistObject() {
  return sql<unknown>`jsonb_build_object('id', d.id, 'name', d.name, 'amount', d.amount, 'currency', d.currency,
    'status', d.status, 'stage', ${stageName(sql.ref('d.stage_id'))}, 'pipeline', ${pipelineName(sql.ref('d.pipeline_id'))},
    'expected_close_date', to_char(d.expected_close_date, 'YYYY-MM-DD'))`;
}

/** One deal as a gist reads it, as jsonb; null when absent. */
export function dealGistJson(orgId: unknown, clientId: unknown, dealId: unknown) {
  return sql<unknown>`(SELECT ${dealGistObject()} FROM deals d
    WHERE d.org_id = ${orgId} AND d.client_id = ${clientId} AND d.id = ${dealId})`;
}

/** The deal's company or primary contact id. */
export function dealLink(
  orgId: unknown,
  clientId: unknown,
  dealId: unknown,
  link: 'company_id' | 'primary_contact_id',
) {
  return sql<string | null>`(SELECT ${sql.ref(`d.${link}`)} FROM deals d
    WHERE d.org_id = ${orgId} AND d.client_id = ${clientId} AND d.id = ${dealId})`;
}

/** How many unarchived deals of a contact (primary) were won, as an integer expression. */
export function wonDealsCount(orgId: unknown, clientId: unknown, contactId: unknown) {
  return sql<number>`(SELECT count(*)::int FROM deals d
    WHERE d.org_id = ${orgId} AND d.client_id = ${clientId} AND d.primary_contact_id = ${contactId}
      AND d.status = 'won' AND d.archived_at IS NULL)`;
}

/** Up to `limit` open, unarchived deals of a contact (primary) or company, newest first, as a jsonb array. */
export function openDealsGistJson(
  orgId: unknown,
  clientId: unknown,
  of: 'primary_contact_id' | 'company_id',
  id: unknown,
  limit: number,
) {
  return sql<unknown>`coalesce((SELECT jsonb_agg(${dealGistObject()} ORDER BY d.id DESC)
    FROM (SELECT * FROM deals d
          WHERE d.org_id = ${orgId} AND d.client_id = ${clientId} AND ${sql.ref(`d.${of}`)} = ${id}
            AND d.status = 'open' AND d.archived_at IS NULL
          ORDER BY d.id DESC LIMIT ${sql.lit(limit)}) d), '[]'::jsonb)`;
}
