import type { Generated, Selectable } from 'kysely';
import { type RawBuilder, sql } from 'kysely';
import type pg from 'pg';
import type { TenantScope } from '../../platform/auth/tenant.ts';
import type { Executor } from '../../platform/db/pool.ts';
import { runPrepared } from '../../platform/db/prepared.ts';
import type { NullableTimestamp, Timestamp } from '../../platform/db/schema.ts';

export interface ContactsTable {
  id: string;
  org_id: string;
  client_id: string;
  full_name: string | null;
  first_name: string | null;
  last_name: string | null;
  title: string | null;
  lifecycle_stage: string | null;
  company_id: string | null;
  owner_user_id: string | null;
  tags: string[];
  source: string | null;
  /** Mirrors of the primary rows of contact_emails and contact_phones. */
  primary_email: string | null;
  primary_phone: string | null;
  archived_at: NullableTimestamp;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface ContactPhonesTable {
  id: string;
  org_id: string;
  client_id: string;
  contact_id: string;
  phone_e164: string;
  phone_type: string;
  is_primary: boolean;
  status: string;
  consent_status: string;
  consent_source: string | null;
  consented_at: NullableTimestamp;
  dnc_scope: string | null;
  source: string | null;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

export interface ContactEmailsTable {
  id: string;
  org_id: string;
  client_id: string;
  contact_id: string;
  email: string;
  is_primary: boolean;
  status: string;
  source: string | null;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

declare module '../../platform/db/schema.ts' {
  interface Database {
    contacts: ContactsTable;
    contact_phones: ContactPhonesTable;
    contact_emails: ContactEmailsTable;
  }
}

export type ContactRow = Selectable<ContactsTable>;

/** The contact's own fields a caller may set. */
export type ContactFields = Partial<
  Pick<
    ContactRow,
    | 'full_name'
    | 'first_name'
    | 'last_name'
    | 'title'
    | 'lifecycle_stage'
    | 'company_id'
    | 'owner_user_id'
    | 'tags'
    | 'source'
    | 'archived_at'
    | 'primary_email'
    | 'primary_phone'
  >
>;

/** A contact as the API returns it: its own fields, its primary email and phone, and its company link. */
export interface ContactRecord {
  id: string;
  client_id: string;
  full_name: string | null;
  first_name: string | null;
  last_name: string | null;
  title: string | null;
  lifecycle_stage: string | null;
  company_id: string | null;
  company: { id: string; name: string; domain: string | null } | null;
  owner_user_id: string | null;
  tags: string[];
  source: string | null;
  email: string | null;
  phone: string | null;
  archived_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

/** The expression the trigram index `contacts_names_trgm` is built on: `q` must use it verbatim. */
export const NAMES_EXPRESSION = sql<string>`(coalesce(c.full_name, '') || ' ' || coalesce(c.first_name, '') || ' ' || coalesce(c.last_name, ''))`;

/** Contacts of the tenant with their company link and primary email and phone: one row each. */
export function contactRecords(db: Executor, tenant: TenantScope) {
  return db
    .selectFrom('contacts as c')
    .leftJoin('companies as co', (join) =>
      join
        .onRef('co.id', '=', 'c.company_id')
        .onRef('co.org_id', '=', 'c.org_id')
        .onRef('co.client_id', '=', 'c.client_id'),
    )
    .select([
      'c.id',
      'c.full_name',
      'c.first_name',
      'c.last_name',
      'c.title',
      'c.lifecycle_stage',
      'co.id as company_id',
      'co.name as company_name',
      'co.domain as company_domain',
      'c.owner_user_id',
      'c.tags',
      'c.source',
      'c.primary_email as email',
      'c.primary_phone as phone',
      'c.archived_at',
      'c.created_at',
      'c.updated_at',
    ])
    .where('c.org_id', '=', tenant.orgId)
    .where('c.client_id', '=', tenant.clientId);
}

type RecordRow = Omit<ContactRecord, 'company' | 'client_id'> & {
  company_name: string | null;
  company_domain: string | null;
};

/** The API's contact from a row of `contactRecords` (the tenant gives client_id). */
export function toContactRecord(row: RecordRow, tenant: TenantScope): ContactRecord {
  return {
    id: row.id,
    client_id: tenant.clientId,
    full_name: row.full_name,
    first_name: row.first_name,
    last_name: row.last_name,
    title: row.title,
    lifecycle_stage: row.lifecycle_stage,
    company_id: row.company_id,
    company:
      row.company_id !== null
        ? { id: row.company_id, name: row.company_name as string, domain: row.company_domain }
        : null,
    owner_user_id: row.owner_user_id,
    tags: row.tags,
    source: row.source,
    email: row.email,
    phone: row.phone,
    archived_at: row.archived_at,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

type HotParameter = 'org' | 'client' | 'id';
let hotRead: { text: string; parameters: HotParameter[] } | undefined;

/**
 * The hot read, `GET /crm/contacts/{id}`: one named (prepared) statement straight on the pool, with
 * no transaction to join. Its text is compiled once, with markers in place of the values, so a
 * request only fills them in.
 */
export async function findContactRecordPrepared(
  pool: pg.Pool,
  db: Executor,
  tenant: TenantScope,
  id: string,
): Promise<ContactRecord | undefined> {
  if (!hotRead) {
    const compiled = contactRecords(db, { orgId: 'org', clientId: 'client' })
      .where('c.id', '=', 'id')
      .compile();
    hotRead = { text: compiled.sql, parameters: compiled.parameters as HotParameter[] };
  }
  const values = { org: tenant.orgId, client: tenant.clientId, id };
  const { rows } = await pool.query<RecordRow>({
    name: 'crm_contacts_get',
    text: hotRead.text,
    values: hotRead.parameters.map((parameter) => values[parameter]),
  });
  return rows[0] ? toContactRecord(rows[0], tenant) : undefined;
}

export async function findContactRecord(
  db: Executor,
  tenant: TenantScope,
  id: string,
): Promise<ContactRecord | undefined> {
  const row = await contactRecords(db, tenant).where('c.id', '=', id).executeTakeFirst();
  return row ? toContactRecord(row, tenant) : undefined;
}

/** The contact's record, its row locked for the rest of the transaction. */
export async function lockContactRecord(
  trx: Executor,
  tenant: TenantScope,
  id: string,
): Promise<ContactRecord | undefined> {
  const row = await contactRecords(trx, tenant).where('c.id', '=', id).forUpdate('c').executeTakeFirst();
  return row ? toContactRecord(row, tenant) : undefined;
}

export async function contactExists(db: Executor, tenant: TenantScope, id: string): Promise<boolean> {
  const row = await db
    .selectFrom('contacts')
    .select('id')
    .where('org_id', '=', tenant.orgId)
    .where('client_id', '=', tenant.clientId)
    .where('id', '=', id)
    .executeTakeFirst();
  return row !== undefined;
}

export async function findContactRecords(db: Executor, tenant: TenantScope, ids: string[]) {
  if (ids.length === 0) return [];
  const rows = await contactRecords(db, tenant).where('c.id', 'in', ids).execute();
  return rows.map((row) => toContactRecord(row, tenant));
}

export interface ContactListFilter {
  /** A predicate over `contacts AS c`, for callers that build their own (smart lists). */
  predicate?: RawBuilder<boolean>;
  namePattern?: string;
  lifecycle?: string;
  owner?: string;
  companyId?: string;
  email?: string;
  phone?: string;
  includeArchived: boolean;
  before?: string;
  limit: number;
}

export async function listContactRecords(db: Executor, tenant: TenantScope, filter: ContactListFilter) {
  let query = contactRecords(db, tenant);
  if (filter.predicate !== undefined) query = query.where(filter.predicate);
  if (filter.namePattern !== undefined) query = query.where(NAMES_EXPRESSION, 'ilike', filter.namePattern);
  if (filter.lifecycle !== undefined) query = query.where('c.lifecycle_stage', '=', filter.lifecycle);
  if (filter.owner !== undefined) query = query.where('c.owner_user_id', '=', filter.owner);
  if (filter.companyId !== undefined) query = query.where('c.company_id', '=', filter.companyId);
  if (filter.email !== undefined) {
    const email = filter.email;
    query = query.where('c.id', 'in', (eb) =>
      eb
        .selectFrom('contact_emails')
        .select('contact_id')
        .where('org_id', '=', tenant.orgId)
        .where('client_id', '=', tenant.clientId)
        .where('email', '=', email),
    );
  }
  if (filter.phone !== undefined) {
    const phone = filter.phone;
    query = query.where('c.id', 'in', (eb) =>
      eb
        .selectFrom('contact_phones')
        .select('contact_id')
        .where('org_id', '=', tenant.orgId)
        .where('client_id', '=', tenant.clientId)
        .where('phone_e164', '=', phone),
    );
  }
  if (!filter.includeArchived) query = query.where('c.archived_at', 'is', null);
  if (filter.before !== undefined) query = query.where('c.id', '<', filter.before);
  const rows = await query
    .orderBy('c.id', 'desc')
    .limit(filter.limit + 1)
    .execute();
  return rows.map((row) => toContactRecord(row, tenant));
}

export interface NewContact {
  id: string;
  emailId: string;
  phoneId: string;
  email: string | null;
  phone: string | null;
  fields: Required<Omit<ContactFields, 'archived_at' | 'primary_email' | 'primary_phone'>>;
  at: Date;
}

export interface InsertOutcome {
  email_contact_id: string | null;
  phone_contact_id: string | null;
  contact_inserted: boolean;
  email_inserted: boolean;
  phone_inserted: boolean;
  company: { id: string; name: string; domain: string | null } | null;
}

/**
 * One statement for the upsert's common cases: looks the identities up and, when neither is known,
 * inserts the contact with its email and phone. The identity inserts use the unique indexes as the
 * lock: a concurrent insert of the same identity makes them wait, then insert nothing (the caller
 * then undoes its contact and merges into the winner).
 */
export async function insertContactUnlessKnown(
  trx: Executor,
  tenant: TenantScope,
  contact: NewContact,
): Promise<InsertOutcome> {
  const { rows } = await runPrepared(trx, insertContactStatement(tenant, contact).compile(trx));
  return rows[0];
}

export function insertContactStatement(tenant: TenantScope, contact: NewContact) {
  const f = contact.fields;
  return sql<InsertOutcome>`
    WITH found AS (
      SELECT 'email' AS matched_by, contact_id FROM contact_emails
        WHERE org_id = ${tenant.orgId} AND client_id = ${tenant.clientId} AND email = ${contact.email}
      UNION ALL
      SELECT 'phone', contact_id FROM contact_phones
        WHERE org_id = ${tenant.orgId} AND client_id = ${tenant.clientId} AND phone_e164 = ${contact.phone}
    ), contact AS (
      INSERT INTO contacts (id, org_id, client_id, full_name, first_name, last_name, title, lifecycle_stage,
        company_id, owner_user_id, tags, source, primary_email, primary_phone, created_at, updated_at)
      SELECT ${contact.id}::uuid, ${tenant.orgId}::uuid, ${tenant.clientId}::uuid, ${f.full_name}::text,
        ${f.first_name}::text, ${f.last_name}::text, ${f.title}::text, ${f.lifecycle_stage}::text,
        ${f.company_id}::uuid, ${f.owner_user_id}::uuid, ${f.tags}::text[], ${f.source}::text,
        ${contact.email}::text, ${contact.phone}::text, ${contact.at}::timestamptz, ${contact.at}::timestamptz
      WHERE NOT EXISTS (SELECT 1 FROM found)
      RETURNING id
    ), email AS (
      INSERT INTO contact_emails (id, org_id, client_id, contact_id, email, is_primary, source, created_at, updated_at)
      SELECT ${contact.emailId}::uuid, ${tenant.orgId}::uuid, ${tenant.clientId}::uuid, contact.id,
        ${contact.email}::text, true, ${f.source}::text, ${contact.at}::timestamptz, ${contact.at}::timestamptz
      FROM contact WHERE ${contact.email}::text IS NOT NULL
      ON CONFLICT (org_id, client_id, email) DO NOTHING
      RETURNING id
    ), phone AS (
      INSERT INTO contact_phones (id, org_id, client_id, contact_id, phone_e164, is_primary, source, created_at, updated_at)
      SELECT ${contact.phoneId}::uuid, ${tenant.orgId}::uuid, ${tenant.clientId}::uuid, contact.id,
        ${contact.phone}::text, true, ${f.source}::text, ${contact.at}::timestamptz, ${contact.at}::timestamptz
      FROM contact WHERE ${contact.phone}::text IS NOT NULL
      ON CONFLICT (org_id, client_id, phone_e164) DO NOTHING
      RETURNING id
    )
    SELECT
      (SELECT contact_id FROM found WHERE matched_by = 'email') AS email_contact_id,
      (SELECT contact_id FROM found WHERE matched_by = 'phone') AS phone_contact_id,
      EXISTS (SELECT 1 FROM contact) AS contact_inserted,
      EXISTS (SELECT 1 FROM email) AS email_inserted,
      EXISTS (SELECT 1 FROM phone) AS phone_inserted,
      (SELECT json_build_object('id', id, 'name', name, 'domain', domain) FROM companies
        WHERE org_id = ${tenant.orgId} AND client_id = ${tenant.clientId} AND id = ${f.company_id}) AS company`;
}

/** The contacts that hold these identities now (a new statement: it sees what committed meanwhile). */
export async function findIdentityOwners(
  trx: Executor,
  tenant: TenantScope,
  identity: { email: string | null; phone: string | null },
): Promise<{ email: string | null; phone: string | null }> {
  const { rows } = await sql<{ email_contact_id: string | null; phone_contact_id: string | null }>`
    SELECT
      (SELECT contact_id FROM contact_emails
        WHERE org_id = ${tenant.orgId} AND client_id = ${tenant.clientId} AND email = ${identity.email}) AS email_contact_id,
      (SELECT contact_id FROM contact_phones
        WHERE org_id = ${tenant.orgId} AND client_id = ${tenant.clientId} AND phone_e164 = ${identity.phone}) AS phone_contact_id`.execute(
    trx,
  );
  return { email: rows[0].email_contact_id, phone: rows[0].phone_contact_id };
}

export function deleteContact(trx: Executor, tenant: TenantScope, id: string) {
  return trx
    .deleteFrom('contacts')
    .where('org_id', '=', tenant.orgId)
    .where('client_id', '=', tenant.clientId)
    .where('id', '=', id)
    .execute();
}

export function updateContact(
  trx: Executor,
  tenant: TenantScope,
  id: string,
  changes: ContactFields,
  at: Date,
) {
  return trx
    .updateTable('contacts')
    .set({ ...changes, updated_at: at })
    .where('org_id', '=', tenant.orgId)
    .where('client_id', '=', tenant.clientId)
    .where('id', '=', id)
    .execute();
}
