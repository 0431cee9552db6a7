import type { Generated, Selectable } from 'kysely';
import { sql } from 'kysely';
import type { TenantScope } from '../../platform/auth/tenant.ts';
import type { Executor } from '../../platform/db/pool.ts';
import type { NullableTimestamp } from '../../platform/db/schema.ts';

export interface CompaniesTable {
  id: string;
  org_id: string;
  client_id: string;
  name: string;
  domain: string | null;
  website: string | null;
  industry: string | null;
  business_description: string | null;
  archived_at: NullableTimestamp;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

declare module '../../platform/db/schema.ts' {
  interface Database {
    companies: CompaniesTable;
  }
}

export type CompanyRow = Selectable<CompaniesTable>;

/** The fields a caller may set on a company. */
export interface CompanyFields {
  name?: string;
  domain?: string | null;
  website?: string | null;
  industry?: string | null;
  business_description?: string | null;
}

const RECORD_COLUMNS = [
  'id',
  'name',
  'domain',
  'website',
  'industry',
  'business_description',
  'archived_at',
  'created_at',
  'updated_at',
] as const;

export type CompanyRecord = Pick<CompanyRow, (typeof RECORD_COLUMNS)[number]>;

function companies(db: Executor, tenant: TenantScope) {
  return db
    .selectFrom('companies')
    .select(RECORD_COLUMNS)
    .where('org_id', '=', tenant.orgId)
    .where('client_id', '=', tenant.clientId);
}

export function findCompany(db: Executor, tenant: TenantScope, id: string) {
  return companies(db, tenant).where('id', '=', id).executeTakeFirst();
}

export function findCompanies(db: Executor, tenant: TenantScope, ids: string[]) {
  if (ids.length === 0) return Promise.resolve([]);
  return companies(db, tenant).where('id', 'in', ids).execute();
}

/** The company row, locked for the rest of the transaction. */
export function lockCompany(trx: Executor, tenant: TenantScope, id: string) {
  return companies(trx, tenant).where('id', '=', id).forUpdate().executeTakeFirst();
}

export function lockCompanyByDomain(trx: Executor, tenant: TenantScope, domain: string) {
  return companies(trx, tenant).where('domain', '=', domain).forUpdate().executeTakeFirst();
}

/** The oldest live company of that name (case-insensitive) that has no domain. */
export function findCompanyByName(db: Executor, tenant: TenantScope, name: string) {
  return companies(db, tenant)
    .where(sql<string>`lower(name)`, '=', name.toLowerCase())
    .where('domain', 'is', null)
    .where('archived_at', 'is', null)
    .orderBy('id')
    .limit(1)
    .executeTakeFirst();
}

/** Inserts the company; with a domain already taken in the tenant, inserts nothing and returns undefined. */
export function insertCompany(
  trx: Executor,
  tenant: TenantScope,
  company: { id: string; name: string } & CompanyFields,
) {
  return trx
    .insertInto('companies')
    .values({
      id: company.id,
      org_id: tenant.orgId,
      client_id: tenant.clientId,
      name: company.name,
      domain: company.domain ?? null,
      website: company.website ?? null,
      industry: company.industry ?? null,
      business_description: company.business_description ?? null,
    })
    .onConflict((oc) =>
      oc.columns(['org_id', 'client_id', 'domain']).where('domain', 'is not', null).doNothing(),
    )
    .returning(RECORD_COLUMNS)
    .executeTakeFirst();
}

export function updateCompany(
  trx: Executor,
  tenant: TenantScope,
  id: string,
  changes: CompanyFields & { archived_at?: Date | null },
) {
  return trx
    .updateTable('companies')
    .set({ ...changes, updated_at: new Date() })
    .where('org_id', '=', tenant.orgId)
    .where('client_id', '=', tenant.clientId)
    .where('id', '=', id)
    .returning(RECORD_COLUMNS)
    .executeTakeFirstOrThrow();
}

export function listCompanies(
  db: Executor,
  tenant: TenantScope,
  filter: { namePattern?: string; domain?: string; includeArchived: boolean; before?: string; limit: number },
) {
  let query = companies(db, tenant);
  if (filter.namePattern !== undefined) query = query.where('name', 'ilike', filter.namePattern);
  if (filter.domain !== undefined) query = query.where('domain', '=', filter.domain);
  if (!filter.includeArchived) query = query.where('archived_at', 'is', null);
  if (filter.before !== undefined) query = query.where('id', '<', filter.before);
  return query
    .orderBy('id', 'desc')
    .limit(filter.limit + 1)
    .execute();
}
