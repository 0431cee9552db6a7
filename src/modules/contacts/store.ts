import type { Generated, Selectable } from 'kysely';
import { type RawBuilder, sql } from 'kysely';
import type { TenantScope } from '../../platform/auth/tenant.ts';
import type { Db, Executor, Trx } from '../../platform/db/pool.ts';
import { prepare } from '../../platform/db/prepared.ts';
import type { NullableTimestamp, Timestamp } from '../../platform/db/schema.ts';
import { idsOfTenant, whereOwned } from '../../platform/db/tenant-rows.ts';
import { eventInsert } from '../../platform/events/emit.ts';
import type { PageRequest } from '../../platform/http/pagination.ts';
import { companyCard } from '../companies/service.ts';

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
  /** The contact's IANA time zone, when known (SDR calling windows apply in it). */
  timezone: string | null;
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
    | 'timezone'
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
  /** IANA time zone, when known. */
  timezone: string | null;
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
    .leftJoinLateral(
      companyCard(sql.ref('c.org_id'), sql.ref('c.client_id'), sql.ref('c.company_id')).as('co'),
      (join) => join.onTrue(),
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
      'c.timezone',
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
function toContactRecord(row: RecordRow, tenant: TenantScope): ContactRecord {
  const { company_name, company_domain, ...contact } = row;
  return {
    ...contact,
    client_id: tenant.clientId,
    company:
      row.company_id !== null
        ? { id: row.company_id, name: company_name as string, domain: company_domain }
        : null,
  };
}

/** The hot read, `GET /crm/contacts/{id}`: one prepared statement. */
const contactById = prepare((db, p: { orgId: string; clientId: string; id: string }) =>
  contactRecords(db, p).where('c.id', '=', p.id),
);

export async function findContactRecord(
  db: Executor,
  tenant: TenantScope,
  id: string,
): Promise<ContactRecord | undefined> {
  const [row] = await contactById.run(db, { orgId: tenant.orgId, clientId: tenant.clientId, id });
  return row ? toContactRecord(row, tenant) : undefined;
}

/** The contact's record, its row locked for the rest of the transaction. */
export async function lockContactRecord(
  trx: Trx,
  tenant: TenantScope,
  id: string,
): Promise<ContactRecord | undefined> {
  const row = await contactRecords(trx, tenant).where('c.id', '=', id).forUpdate('c').executeTakeFirst();
  return row ? toContactRecord(row, tenant) : undefined;
}

/** Which of `ids` are contacts of the tenant. */
export function findContactIds(db: Executor, tenant: TenantScope, ids: string[]): Promise<string[]> {
  return idsOfTenant(db, 'contacts', tenant, ids);
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
}

/** Contacts newest first. */
export async function listContactRecords(
  db: Executor,
  tenant: TenantScope,
  filter: ContactListFilter,
  page: PageRequest<string>,
) {
  let query = contactRecords(db, tenant);
  if (filter.predicate !== undefined) query = query.where(filter.predicate);
  if (filter.namePattern !== undefined) query = query.where(NAMES_EXPRESSION, 'ilike', filter.namePattern);
  if (filter.lifecycle !== undefined) query = query.where('c.lifecycle_stage', '=', filter.lifecycle);
  if (filter.owner !== undefined) query = query.where('c.owner_user_id', '=', filter.owner);
  if (filter.companyId !== undefined) query = query.where('c.company_id', '=', filter.companyId);
  if (filter.email !== undefined)
    query = query.where('c.id', 'in', holders(EMAIL_VALUES, tenant, filter.email));
  if (filter.phone !== undefined)
    query = query.where('c.id', 'in', holders(PHONE_VALUES, tenant, filter.phone));
  if (!filter.includeArchived) query = query.where('c.archived_at', 'is', null);
  if (page.after !== undefined) query = query.where('c.id', '<', page.after);
  const rows = await query.orderBy('c.id', 'desc').limit(page.limit).execute();
  return rows.map((row) => toContactRecord(row, tenant));
}

const EMAIL_VALUES = { table: sql.table('contact_emails'), column: sql.ref('email') };
const PHONE_VALUES = { table: sql.table('contact_phones'), column: sql.ref('phone_e164') };

/** The ids of the tenant's contacts that have this email or phone. */
function holders(values: typeof EMAIL_VALUES, tenant: TenantScope, value: string) {
  return sql<string>`(SELECT contact_id FROM ${values.table}
    WHERE org_id = ${tenant.orgId} AND client_id = ${tenant.clientId} AND ${values.column} = ${value})`;
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
  company: ContactRecord['company'];
}

type InsertParams = TenantScope &
  Omit<NewContact, 'fields'> &
  Required<Omit<ContactFields, 'archived_at' | 'primary_email' | 'primary_phone'>>;

/** The INSERT of a new contact's row from the parameters; the caller adds its condition (`WHERE`). */
function newContactRow(p: InsertParams) {
  return sql`INSERT INTO contacts (id, org_id, client_id, full_name, first_name, last_name, title, lifecycle_stage,
        company_id, owner_user_id, tags, source, timezone, primary_email, primary_phone, created_at, updated_at)
      SELECT ${p.id}::uuid, ${p.orgId}::uuid, ${p.clientId}::uuid, ${p.full_name}::text,
        ${p.first_name}::text, ${p.last_name}::text, ${p.title}::text, ${p.lifecycle_stage}::text,
        ${p.company_id}::uuid, ${p.owner_user_id}::uuid, ${p.tags}::text[], ${p.source}::text,
        ${p.timezone}::text, ${p.email}::text, ${p.phone}::text, ${p.at}::timestamptz, ${p.at}::timestamptz`;
}

/** A new contact as the parameters of its statements: the tenant, the identities and the fields side by side. */
function insertParams(tenant: TenantScope, { fields, ...identity }: NewContact): InsertParams {
  return { orgId: tenant.orgId, clientId: tenant.clientId, ...identity, ...fields };
}

/**
 * One statement for the upsert's common cases: looks the identities up and, when neither is known,
 * inserts the contact with its email and phone. The identity inserts use the unique indexes as the
 * lock: a concurrent insert of the same identity makes them wait, then insert nothing (the caller
 * then undoes its contact and merges into the winner).
 */
const insertContactStatement = prepare(
  (_db, p: InsertParams) => sql<InsertOutcome>`
    WITH found AS (
      SELECT 'email' AS matched_by, contact_id FROM contact_emails
        WHERE org_id = ${p.orgId} AND client_id = ${p.clientId} AND email = ${p.email}
      UNION ALL
      SELECT 'phone', contact_id FROM contact_phones
        WHERE org_id = ${p.orgId} AND client_id = ${p.clientId} AND phone_e164 = ${p.phone}
    ), contact AS (
      ${newContactRow(p)}
      WHERE NOT EXISTS (SELECT 1 FROM found)
      RETURNING id
    ), email AS (
      INSERT INTO contact_emails (id, org_id, client_id, contact_id, email, is_primary, source, created_at, updated_at)
      SELECT ${p.emailId}::uuid, ${p.orgId}::uuid, ${p.clientId}::uuid, contact.id,
        ${p.email}::text, true, ${p.source}::text, ${p.at}::timestamptz, ${p.at}::timestamptz
      FROM contact WHERE ${p.email}::text IS NOT NULL
      ON CONFLICT (org_id, client_id, email) DO NOTHING
      RETURNING id
    ), phone AS (
      INSERT INTO contact_phones (id, org_id, client_id, contact_id, phone_e164, is_primary, source, created_at, updated_at)
      SELECT ${p.phoneId}::uuid, ${p.orgId}::uuid, ${p.clientId}::uuid, contact.id,
        ${p.phone}::text, true, ${p.source}::text, ${p.at}::timestamptz, ${p.at}::timestamptz
      FROM contact WHERE ${p.phone}::text IS NOT NULL
      ON CONFLICT (org_id, client_id, phone_e164) DO NOTHING
      RETURNING id
    )
    SELECT
      (SELECT contact_id FROM found WHERE matched_by = 'email') AS email_contact_id,
      (SELECT contact_id FROM found WHERE matched_by = 'phone') AS phone_contact_id,
      EXISTS (SELECT 1 FROM contact) AS contact_inserted,
      EXISTS (SELECT 1 FROM email) AS email_inserted,
      EXISTS (SELECT 1 FROM phone) AS phone_inserted,
      (SELECT row_to_json(co) FROM ${companyCard(p.orgId, p.clientId, p.company_id)} co) AS company`,
);

export async function insertContactUnlessKnown(
  trx: Trx,
  tenant: TenantScope,
  contact: NewContact,
): Promise<InsertOutcome> {
  const [outcome] = await insertContactStatement.run(trx, insertParams(tenant, contact));
  return outcome;
}

export interface CreateOutcome {
  /** False when an identity is known (or was taken meanwhile): nothing was written. */
  created: boolean;
  company: ContactRecord['company'];
}

type CreateParams = InsertParams & { eventId: string; eventData: string };

/**
 * The create of a new identity as one statement, committed on its own: the email and phone, the
 * contact, and its `contact.created` event (its data is `eventData` with the company card added).
 * The identities go first and the contact only when each one was claimed, so a known identity
 * writes nothing; an email claimed while its phone was taken (or the reverse), by a request that
 * committed meanwhile, leaves an identity without its contact, which the foreign key refuses at the
 * end of the statement: the whole statement fails (`identityRaceLost`) and nothing is written.
 */
const createContactStatement = prepare(
  (_db, p: CreateParams) => sql<CreateOutcome>`
    WITH found AS (
      SELECT 1 FROM contact_emails
        WHERE org_id = ${p.orgId} AND client_id = ${p.clientId} AND email = ${p.email}
      UNION ALL
      SELECT 1 FROM contact_phones
        WHERE org_id = ${p.orgId} AND client_id = ${p.clientId} AND phone_e164 = ${p.phone}
    ), email AS (
      INSERT INTO contact_emails (id, org_id, client_id, contact_id, email, is_primary, source, created_at, updated_at)
      SELECT ${p.emailId}::uuid, ${p.orgId}::uuid, ${p.clientId}::uuid, ${p.id}::uuid,
        ${p.email}::text, true, ${p.source}::text, ${p.at}::timestamptz, ${p.at}::timestamptz
      WHERE ${p.email}::text IS NOT NULL AND NOT EXISTS (SELECT 1 FROM found)
      ON CONFLICT (org_id, client_id, email) DO NOTHING
      RETURNING id
    ), phone AS (
      INSERT INTO contact_phones (id, org_id, client_id, contact_id, phone_e164, is_primary, source, created_at, updated_at)
      SELECT ${p.phoneId}::uuid, ${p.orgId}::uuid, ${p.clientId}::uuid, ${p.id}::uuid,
        ${p.phone}::text, true, ${p.source}::text, ${p.at}::timestamptz, ${p.at}::timestamptz
      WHERE ${p.phone}::text IS NOT NULL AND NOT EXISTS (SELECT 1 FROM found)
      ON CONFLICT (org_id, client_id, phone_e164) DO NOTHING
      RETURNING id
    ), contact AS (
      ${newContactRow(p)}
      WHERE NOT EXISTS (SELECT 1 FROM found)
        AND (${p.email}::text IS NULL OR EXISTS (SELECT 1 FROM email))
        AND (${p.phone}::text IS NULL OR EXISTS (SELECT 1 FROM phone))
      RETURNING id
    ), company AS (
      SELECT (SELECT row_to_json(co) FROM ${companyCard(p.orgId, p.clientId, p.company_id)} co) AS card
    ), event AS (
      ${eventInsert(
        {
          id: p.eventId,
          orgId: p.orgId,
          clientId: p.clientId,
          type: 'contact.created',
          data: sql`(${p.eventData}::jsonb || jsonb_build_object('company', (SELECT card FROM company)))`,
          metadata: '{}',
        },
        sql<boolean>`EXISTS (SELECT 1 FROM contact)`,
      )}
    )
    SELECT EXISTS (SELECT 1 FROM event) AS created, (SELECT card FROM company) AS company`,
);

/** See `createContactStatement`. */
export async function createContactAtOnce(
  db: Db,
  tenant: TenantScope,
  contact: NewContact & { eventId: string; eventData: string },
): Promise<CreateOutcome> {
  const { eventId, eventData, ...newContact } = contact;
  const [outcome] = await createContactStatement.run(db, {
    ...insertParams(tenant, newContact),
    eventId,
    eventData,
  });
  return outcome;
}

/** The failure of `createContactAtOnce` whose email or phone was taken meanwhile: it wrote nothing. */
export function identityRaceLost(error: unknown): boolean {
  const pgError = error as { code?: string; constraint?: string };
  return (
    pgError.code === '23503' &&
    (pgError.constraint?.startsWith('contact_emails_') === true ||
      pgError.constraint?.startsWith('contact_phones_') === true)
  );
}

/** The contacts that hold these identities now (a new statement: it sees what committed meanwhile). */
export async function findIdentityOwners(
  trx: Trx,
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

export function deleteContact(trx: Trx, tenant: TenantScope, id: string) {
  return trx.deleteFrom('contacts').$call(whereOwned(tenant, id)).execute();
}

export function updateContact(trx: Trx, tenant: TenantScope, id: string, changes: ContactFields, at: Date) {
  return trx
    .updateTable('contacts')
    .set({ ...changes, updated_at: at })
    .$call(whereOwned(tenant, id))
    .execute();
}

/** What a list may leave out of its contacts. */
export interface ContactExclusions {
  exclude_dnc: boolean;
  exclude_unsubscribed: boolean;
  exclude_archived: boolean;
}

/**
 * True when the contact `contactId` (a value or a column reference) is left out by the exclusions:
 * archived; on the do-not-call list (a phone marked do_not_call or with a DNC scope); unsubscribed
 * (a phone that opted out).
 */
export function contactExcluded(exclusions: ContactExclusions, contactId: unknown): RawBuilder<boolean> {
  const conditions: RawBuilder<unknown>[] = [sql`false`];
  if (exclusions.exclude_archived) {
    conditions.push(
      sql`EXISTS (SELECT 1 FROM contacts ca WHERE ca.id = ${contactId} AND ca.archived_at IS NOT NULL)`,
    );
  }
  if (exclusions.exclude_dnc) {
    conditions.push(sql`EXISTS (SELECT 1 FROM contact_phones cp WHERE cp.contact_id = ${contactId}
      AND (cp.consent_status = 'do_not_call' OR cp.dnc_scope IS NOT NULL))`);
  }
  if (exclusions.exclude_unsubscribed) {
    conditions.push(sql`EXISTS (SELECT 1 FROM contact_phones cp WHERE cp.contact_id = ${contactId}
      AND cp.consent_status = 'opt_out')`);
  }
  return sql<boolean>`(${sql.join(conditions, sql` OR `)})`;
}

// What AI gists read of contacts, as SQL pieces the gist statement embeds (see src/modules/ai/store.ts).

/** A contact as a gist reads it (its fields, up to 10 phones with consent and 10 emails), as jsonb; null when absent. */
export function contactGistJson(orgId: unknown, clientId: unknown, contactId: unknown) {
  return sql<unknown>`(SELECT jsonb_build_object(
      'id', c.id, 'full_name', c.full_name, 'first_name', c.first_name, 'last_name', c.last_name,
      'title', c.title, 'lifecycle_stage', c.lifecycle_stage, 'tags', to_jsonb(c.tags),
      'phones', coalesce((SELECT jsonb_agg(jsonb_build_object('phone', p.phone_e164, 'phone_type', p.phone_type,
          'is_primary', p.is_primary, 'status', p.status, 'consent_status', p.consent_status, 'dnc_scope', p.dnc_scope)
          ORDER BY NOT p.is_primary, p.id)
        FROM (SELECT * FROM contact_phones p
              WHERE p.org_id = c.org_id AND p.client_id = c.client_id AND p.contact_id = c.id
              ORDER BY NOT p.is_primary, p.id LIMIT 10) p), '[]'::jsonb),
      'emails', coalesce((SELECT jsonb_agg(jsonb_build_object('email', e.email, 'is_primary', e.is_primary,
          'status', e.status) ORDER BY NOT e.is_primary, e.id)
        FROM (SELECT * FROM contact_emails e
              WHERE e.org_id = c.org_id AND e.client_id = c.client_id AND e.contact_id = c.id
              ORDER BY NOT e.is_primary, e.id LIMIT 10) e), '[]'::jsonb))
    FROM contacts c WHERE c.org_id = ${orgId} AND c.client_id = ${clientId} AND c.id = ${contactId})`;
}

/** The company id of a contact (null when it has none or is absent). */
export function contactCompanyId(orgId: unknown, clientId: unknown, contactId: unknown) {
  return sql<string | null>`(SELECT c.company_id FROM contacts c
    WHERE c.org_id = ${orgId} AND c.client_id = ${clientId} AND c.id = ${contactId})`;
}

/** Up to `limit` unarchived contacts of a company, newest first, each as `contactGistJson`, as a jsonb array. */
export function companyContactsGistJson(
  orgId: unknown,
  clientId: unknown,
  companyId: unknown,
  limit: number,
) {
  return sql<unknown>`coalesce((SELECT jsonb_agg(${contactGistJson(sql.ref('cc.org_id'), sql.ref('cc.client_id'), sql.ref('cc.id'))} ORDER BY cc.id DESC)
    FROM (SELECT c.org_id, c.client_id, c.id FROM contacts c
          WHERE c.org_id = ${orgId} AND c.client_id = ${clientId} AND c.company_id = ${companyId}
            AND c.archived_at IS NULL
          ORDER BY c.id DESC LIMIT ${sql.lit(limit)}) cc), '[]'::jsonb)`;
}

/** Contacts of any client of the org, as a dialer needs them: their client, primary phone and zone. */
export function findOrgContactsForDialing(db: Executor, orgId: string, ids: string[]) {
  return db
    .selectFrom('contacts')
    .select(['id', 'client_id', 'primary_phone', 'timezone', 'archived_at'])
    .where('org_id', '=', orgId)
    .where('id', '=', sql<string>`any(${ids}::uuid[])`)
    .execute();
}
