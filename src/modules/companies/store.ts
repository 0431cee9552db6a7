import type { Generated, Selectable } from 'kysely';
import { sql } from 'kysely';
import type { TenantScope } from '../../platform/auth/tenant.ts';
import type { Db, Executor, Trx } from '../../platform/db/pool.ts';
import { prepare } from '../../platform/db/prepared.ts';
import type { NullableTimestamp } from '../../platform/db/schema.ts';
import { idsOfTenant, whereOwned, whereTenant } from '../../platform/db/tenant-rows.ts';
import { eventInsert } from '../../platform/events/emit.ts';
import type { PageRequest } from '../../platform/http/pagination.ts';

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
  return db.selectFrom('companies').select(RECORD_COLUMNS).$call(whereTenant(tenant));
}

export function findCompany(db: Executor, tenant: TenantScope, id: string) {
  return companies(db, tenant).where('id', '=', id).executeTakeFirst();
}

export function findCompanies(db: Executor, tenant: TenantScope, ids: string[]) {
  if (ids.length === 0) return Promise.resolve([]);
  return companies(db, tenant).where('id', 'in', ids).execute();
}

/** Which of `ids` are companies of the tenant. */
export function findCompanyIds(db: Executor, tenant: TenantScope, ids: string[]): Promise<string[]> {
  return idsOfTenant(db, 'companies', tenant, ids);
}

/** The company row, locked for the rest of the transaction. */
export function lockCompany(trx: Trx, tenant: TenantScope, id: string) {
  return companies(trx, tenant).where('id', '=', id).forUpdate().executeTakeFirst();
}

export function lockCompanyByDomain(trx: Trx, tenant: TenantScope, domain: string) {
  return companies(trx, tenant).where('domain', '=', domain).forUpdate().executeTakeFirst();
}

/** Serializes creators of a company of this name, so concurrent upserts do not create it twice. */
export async function lockCompanyName(trx: Trx, tenant: TenantScope, name: string): Promise<void> {
  await sql`SELECT pg_advisory_xact_lock(hashtextextended(${`company-name:${tenant.orgId}:${tenant.clientId}:${name.toLowerCase()}`}, 0))`.execute(
    trx,
  );
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
  trx: Trx,
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

type CreateParams = Required<Omit<CompanyFields, 'name'>> & {
  id: string;
  orgId: string;
  clientId: string;
  name: string;
  at: Date;
  eventId: string;
  eventData: string;
};

/**
 * The create of a new company as one statement, committed on its own: the company and its
 * `company.created` event (`eventData`). A domain the tenant already has writes nothing (`created`
 * false): the create is then a merge, which needs the transaction of `upsertCompany`.
 */
const createCompanyStatement = prepare(
  (_db, p: CreateParams) => sql<{ created: boolean }>`
    WITH company AS (
      INSERT INTO companies (id, org_id, client_id, name, domain, website, industry, business_description,
        created_at, updated_at)
      VALUES (${p.id}::uuid, ${p.orgId}::uuid, ${p.clientId}::uuid, ${p.name}::text, ${p.domain}::text,
        ${p.website}::text, ${p.industry}::text, ${p.business_description}::text, ${p.at}::timestamptz,
        ${p.at}::timestamptz)
      ON CONFLICT (org_id, client_id, domain) WHERE domain IS NOT NULL DO NOTHING
      RETURNING id
    ), event AS (
      ${eventInsert(
        {
          id: p.eventId,
          orgId: p.orgId,
          clientId: p.clientId,
          type: 'company.created',
          data: p.eventData,
          metadata: '{}',
        },
        sql<boolean>`EXISTS (SELECT 1 FROM company)`,
      )}
    )
    SELECT EXISTS (SELECT 1 FROM company) AS created`,
);

/** See `createCompanyStatement`. */
export async function createCompanyAtOnce(
  db: Db,
  tenant: TenantScope,
  company: Omit<CreateParams, 'orgId' | 'clientId'>,
): Promise<boolean> {
  const [{ created }] = await createCompanyStatement.run(db, {
    ...company,
    orgId: tenant.orgId,
    clientId: tenant.clientId,
  });
  return created;
}

export function updateCompany(
  trx: Trx,
  tenant: TenantScope,
  id: string,
  changes: CompanyFields & { archived_at?: Date | null },
) {
  return trx
    .updateTable('companies')
    .set({ ...changes, updated_at: new Date() })
    .$call(whereOwned(tenant, id))
    .returning(RECORD_COLUMNS)
    .executeTakeFirstOrThrow();
}

/** Companies newest first. */
export function listCompanies(
  db: Executor,
  tenant: TenantScope,
  filter: { namePattern?: string; domain?: string; includeArchived: boolean },
  page: PageRequest<string>,
) {
  let query = companies(db, tenant);
  if (filter.namePattern !== undefined) query = query.where('name', 'ilike', filter.namePattern);
  if (filter.domain !== undefined) query = query.where('domain', '=', filter.domain);
  if (!filter.includeArchived) query = query.where('archived_at', 'is', null);
  if (page.after !== undefined) query = query.where('id', '<', page.after);
  return query.orderBy('id', 'desc').limit(page.limit).execute();
}

/** A company as a contact shows it. */
export interface CompanyCard {
  id: string;
  name: string;
  domain: string | null;
}

/**
 * For a statement of the contacts module: the card of the company `companyId` of the tenant, as a
 * subquery of at most one row to join (laterally) or select from. Each argument is a value or a
 * column reference.
 */
export function companyCard(orgId: unknown, clientId: unknown, companyId: unknown) {
  return sql<CompanyCard>`(SELECT co.id, co.name, co.domain FROM companies co
    WHERE co.org_id = ${orgId} AND co.client_id = ${clientId} AND co.id = ${companyId})`;
}

/**
 * For a contact filter over `contacts AS c`: the contact's company (`FROM … WHERE …`, to be followed
 * by `AND` and a condition) and the columns a condition may name.
 */
export const companyOfContact = {
  rows: sql`companies co WHERE co.id = c.company_id AND co.org_id = c.org_id AND co.client_id = c.client_id`,
  column: (name: 'name' | 'domain' | 'industry') => sql.ref(`co.${name}`),
};

/** For a list's members: true when `companyId` (a column reference) names an archived company. */
export function companyArchived(companyId: unknown) {
  return sql<boolean>`EXISTS (SELECT 1 FROM companies co WHERE co.id = ${companyId} AND co.archived_at IS NOT NULL)`;
}

/** A company as an AI gist reads it, as jsonb; null when absent (see src/modules/ai/store.ts). */
export function companyGistJson(orgId: unknown, clientId: unknown, companyId: unknown) {
  return sql<unknown>`(SELECT jsonb_build_object('id', co.id, 'name', co.name, 'domain', co.domain,
      'website', co.website, 'industry', co.industry, 'business_description', co.business_description)
    FROM companies co WHERE co.org_id = ${orgId} AND co.client_id = ${clientId} AND co.id = ${companyId})`;
}
