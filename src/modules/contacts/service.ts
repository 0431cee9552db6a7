import { sql } from 'kysely';
import type { TenantScope } from '../../platform/auth/tenant.ts';
import { newEventId, newId } from '../../platform/db/ids.ts';
import { containsPattern } from '../../platform/db/like.ts';
import type { Db, Executor, Trx } from '../../platform/db/pool.ts';
import { countEvent } from '../../platform/events/emit.ts';
import { changedFields, hasChanges, uniqueTags } from '../../platform/fields.ts';
import { errors } from '../../platform/http/errors.ts';
import type { PageRequest } from '../../platform/http/pagination.ts';
import type { Referable } from '../../platform/http/references.ts';
import { type CompanyRecord, getCompany, resolveCompanyForContact } from '../companies/service.ts';
import { EMAIL, insertChannel, PHONE } from './channel-store.ts';
import {
  emitContactArchived,
  emitContactCreated,
  emitContactUpdated,
  type SubRecordChange,
} from './events.ts';
import { compileFilter, type FilterNode, hasRelativeTimeCondition, validateFilter } from './filter.ts';
import { companyDomainOfEmail, deriveFullName, normalizeEmail, normalizePhone } from './identity.ts';
import {
  type ContactExclusions,
  type ContactFields,
  type ContactRecord,
  contactExcluded,
  createContactAtOnce,
  deleteContact,
  findContactIds,
  findContactRecord,
  findContactRecords,
  findIdentityOwners,
  findOrgContactsForDialing,
  identityRaceLost,
  insertContactUnlessKnown,
  listContactRecords,
  lockContactRecord,
  updateContact,
} from './store.ts';

export type { ContactExclusions, ContactRecord } from './store.ts';
/** SQL pieces of what an AI gist reads (src/modules/ai/store.ts). */
/** A SQL piece for a list's members (see docs/architecture.md): true when the contact is left out. */
export { companyContactsGistJson, contactCompanyId, contactExcluded, contactGistJson } from './store.ts';

/** A contact filter: a tree of and/or groups of conditions on a contact's fields. */
export type ContactFilter = FilterNode;
/** A SQL piece: true when a stored filter has a condition relative to now (its matches move with time). */
/** The platform's one phone rule (E.164 with libphonenumber-js), for every module that takes a phone number. */
export { hasRelativeTimeCondition, normalizePhone };

export interface ContactUpsertInput {
  email?: string;
  phone?: string;
  first_name?: string;
  last_name?: string;
  full_name?: string;
  title?: string;
  lifecycle_stage?: string;
  company_id?: string;
  company_name?: string;
  owner_user_id?: string;
  tags?: string[];
  source?: string;
  timezone?: string;
}

export type UpsertResult =
  | { status: 201; body: { contact: ContactRecord; created: true } }
  | { status: 200; body: { contact: ContactRecord; created: false; matched_by: 'email' | 'phone' } };

interface Identity {
  email: string | null;
  phone: string | null;
}

/** How many times a lost race on a new identity is replayed before giving up. */
const MAX_ATTEMPTS = 3;

/**
 * `POST /crm/contacts`: upsert by identity. A new identity creates the contact with its email and
 * phone (201, `contact.created`); a known one merges the given fields into its contact (200,
 * `contact.updated` when something changed). An email of one contact with a phone of another is
 * 409 `identity_conflict`, with nothing written.
 */
export async function upsertContact(
  trx: Trx,
  tenant: TenantScope,
  input: ContactUpsertInput,
  defaultCountry: string,
): Promise<UpsertResult> {
  const identity = identityOf(input, defaultCountry);
  const company = await companyOfInput(trx, tenant, input, identity);
  const fields = newContactFields(input, company?.id ?? input.company_id ?? null);

  for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
    const at = new Date();
    const contactId = newId();
    const outcome = await insertContactUnlessKnown(trx, tenant, {
      id: contactId,
      emailId: newId(),
      phoneId: newId(),
      email: identity.email,
      phone: identity.phone,
      fields,
      at,
    }).catch(companyReferenceError);

    let owners: Identity = { email: outcome.email_contact_id, phone: outcome.phone_contact_id };
    if (outcome.contact_inserted) {
      const won =
        (identity.email === null || outcome.email_inserted) &&
        (identity.phone === null || outcome.phone_inserted);
      if (won) {
        const contact: ContactRecord = {
          id: contactId,
          client_id: tenant.clientId,
          ...fields,
          company: outcome.company,
          email: identity.email,
          phone: identity.phone,
          archived_at: null,
          created_at: at,
          updated_at: at,
        };
        await emitContactCreated(trx, tenant, contact);
        return { status: 201, body: { contact, created: true } };
      }
      // A concurrent request created this identity first: undo ours and merge into theirs.
      await deleteContact(trx, tenant, contactId);
      owners = await findIdentityOwners(trx, tenant, identity);
    }
    if (owners.email !== null || owners.phone !== null) {
      return mergeIntoContact(trx, tenant, owners, identity, input, company);
    }
  }
  throw new Error('contact upsert kept losing races on a new identity');
}

/**
 * The upsert's common case, a new identity, as one statement committed on its own (the edge runs it
 * before the transaction of `upsertContact`, without an Idempotency-Key: see `runIdempotent`): the
 * contact, its email and phone and its `contact.created` event, written together or not at all.
 * Null when the request needs `upsertContact`: a known identity (a merge), a company to find or
 * create by name, or an identity taken by a concurrent request meanwhile.
 */
export async function createContact(
  db: Db,
  tenant: TenantScope,
  input: ContactUpsertInput,
  defaultCountry: string,
): Promise<UpsertResult | null> {
  if (input.company_id === undefined && input.company_name !== undefined) return null;
  const identity = identityOf(input, defaultCountry);
  const fields = newContactFields(input, input.company_id ?? null);
  const at = new Date();
  const contact: ContactRecord = {
    id: newId(),
    client_id: tenant.clientId,
    ...fields,
    company: null,
    email: identity.email,
    phone: identity.phone,
    archived_at: null,
    created_at: at,
    updated_at: at,
  };
  const { company: _company, ...eventData } = contact;
  const outcome = await createContactAtOnce(db, tenant, {
    id: contact.id,
    emailId: newId(),
    phoneId: newId(),
    email: identity.email,
    phone: identity.phone,
    fields,
    at,
    eventId: newEventId(),
    eventData: JSON.stringify(eventData),
  }).catch((error: unknown) => {
    if (identityRaceLost(error)) return null;
    return companyReferenceError(error);
  });
  if (!outcome?.created) return null;
  countEvent('contact.created');
  contact.company = outcome.company;
  return { status: 201, body: { contact, created: true } };
}

function identityOf(input: ContactUpsertInput, defaultCountry: string): Identity {
  const identity: Identity = {
    email: input.email !== undefined ? normalizeEmail(input.email) : null,
    phone: input.phone !== undefined ? normalizePhone(input.phone, defaultCountry) : null,
  };
  if (identity.email === null && identity.phone === null) {
    throw errors.validation([
      { field: 'email', message: 'or phone is required: a contact is upserted by its identity' },
    ]);
  }
  return identity;
}

/** The fields of a contact an upsert creates. */
function newContactFields(input: ContactUpsertInput, companyId: string | null) {
  return {
    full_name: input.full_name ?? deriveFullName(input.first_name ?? null, input.last_name ?? null),
    first_name: input.first_name ?? null,
    last_name: input.last_name ?? null,
    title: input.title ?? null,
    lifecycle_stage: input.lifecycle_stage ?? null,
    company_id: companyId,
    owner_user_id: input.owner_user_id ?? null,
    tags: uniqueTags(input.tags ?? []),
    source: input.source ?? null,
    timezone: input.timezone !== undefined ? ianaTimeZone(input.timezone) : null,
  };
}

async function companyOfInput(
  trx: Trx,
  tenant: TenantScope,
  input: ContactUpsertInput,
  identity: Identity,
): Promise<CompanyRecord | null> {
  if (input.company_id !== undefined || input.company_name === undefined) return null;
  const domain = identity.email !== null ? companyDomainOfEmail(identity.email) : null;
  return resolveCompanyForContact(trx, tenant, input.company_name, domain);
}

/** The merge of an upsert whose identity is known: given fields win, tags are added, `source` is kept. */
async function mergeIntoContact(
  trx: Trx,
  tenant: TenantScope,
  owners: Identity,
  identity: Identity,
  input: ContactUpsertInput,
  company: CompanyRecord | null,
): Promise<UpsertResult> {
  if (owners.email !== null && owners.phone !== null && owners.email !== owners.phone) {
    throw identityConflict(owners.email, owners.phone);
  }
  const contactId = (owners.email ?? owners.phone) as string;
  const matchedBy = owners.email !== null ? 'email' : 'phone';
  const before = await lockContactRecord(trx, tenant, contactId);
  if (!before) throw new Error(`contact ${contactId} holds an identity but does not exist`);

  const wanted: ContactFields = {
    first_name: input.first_name,
    last_name: input.last_name,
    title: input.title,
    lifecycle_stage: input.lifecycle_stage,
    owner_user_id: input.owner_user_id,
    company_id: company?.id ?? input.company_id,
    full_name: input.full_name,
    timezone: input.timezone,
  };
  if (input.full_name === undefined && (input.first_name !== undefined || input.last_name !== undefined)) {
    wanted.full_name = deriveFullName(
      input.first_name ?? before.first_name,
      input.last_name ?? before.last_name,
    );
  }
  if (input.tags !== undefined) wanted.tags = uniqueTags([...before.tags, ...input.tags]);
  if (before.source === null && input.source !== undefined) wanted.source = input.source;
  const changes = changedFields<ContactFields>(before, wanted);
  const after: ContactRecord = { ...before, ...changes };
  if (changes.company_id !== undefined)
    after.company = await companyLink(trx, tenant, changes.company_id, company);

  const subRecords: SubRecordChange[] = [];
  if (identity.email !== null && owners.email === null) {
    const record = await attachIdentity(trx, tenant, 'email', before, identity);
    subRecords.push({ type: 'email', action: 'added', record });
    if (record.is_primary) after.email = identity.email;
  }
  if (identity.phone !== null && owners.phone === null) {
    const record = await attachIdentity(trx, tenant, 'phone', before, identity);
    subRecords.push({ type: 'phone', action: 'added', record });
    if (record.is_primary) after.phone = identity.phone;
  }

  if (hasChanges(changes) || subRecords.length > 0) {
    after.updated_at = new Date();
    await updateContact(
      trx,
      tenant,
      contactId,
      { ...changes, primary_email: after.email, primary_phone: after.phone },
      after.updated_at,
    ).catch(companyReferenceError);
    await emitContactUpdated(trx, tenant, before, after, subRecords);
  }
  return { status: 200, body: { contact: after, created: false, matched_by: matchedBy } };
}

/** Adds the upsert's unknown identity to the matched contact; primary when the contact has none. */
async function attachIdentity(
  trx: Trx,
  tenant: TenantScope,
  kind: 'email' | 'phone',
  contact: ContactRecord,
  identity: Identity,
) {
  const channel = kind === 'email' ? EMAIL : PHONE;
  const value = identity[kind] as string;
  const record = await insertChannel(trx, channel, tenant, {
    id: newId(),
    contactId: contact.id,
    value,
    isPrimary: contact[kind] === null,
    fields: { source: contact.source },
  });
  if (record) return record;
  // Taken since the lookup, by a request that committed meanwhile.
  const owners = await findIdentityOwners(trx, tenant, identity);
  throw kind === 'email'
    ? identityConflict(owners.email ?? contact.id, contact.id)
    : identityConflict(contact.id, owners.phone ?? contact.id);
}

function identityConflict(emailContactId: string, phoneContactId: string) {
  return errors.conflict(
    'identity_conflict',
    `The email belongs to contact ${emailContactId} and the phone to contact ${phoneContactId}; nothing was written.`,
    { email_contact_id: emailContactId, phone_contact_id: phoneContactId },
  );
}

export interface ContactPatch {
  first_name?: string | null;
  last_name?: string | null;
  full_name?: string | null;
  title?: string | null;
  lifecycle_stage?: string | null;
  company_id?: string | null;
  owner_user_id?: string | null;
  tags?: string[];
  archived?: boolean;
  timezone?: string | null;
}

/**
 * `PATCH /crm/contacts/{id}` (and DELETE, as `archived: true`). `contact.updated`, with `metadata`,
 * when a field changed (restoring an archived contact is such a change), `contact.archived` when archived.
 */
export async function patchContact(
  trx: Trx,
  tenant: TenantScope,
  id: string,
  patch: ContactPatch,
  metadata: Record<string, unknown> = {},
): Promise<ContactRecord> {
  const before = await lockContactRecord(trx, tenant, id);
  if (!before) throw errors.notFound('Contact', id);
  const { archived, tags, ...fields } = patch;
  if (fields.timezone) ianaTimeZone(fields.timezone);
  const wanted: ContactFields = { ...fields };
  if (fields.full_name === undefined && (fields.first_name !== undefined || fields.last_name !== undefined)) {
    wanted.full_name = deriveFullName(
      fields.first_name !== undefined ? fields.first_name : before.first_name,
      fields.last_name !== undefined ? fields.last_name : before.last_name,
    );
  }
  if (tags !== undefined) wanted.tags = uniqueTags(tags);
  const archiving = archived === true && before.archived_at === null;
  if (archived !== undefined && archived !== (before.archived_at !== null)) {
    wanted.archived_at = archived ? new Date() : null;
  }
  const changes = changedFields<ContactFields>(before, wanted);
  if (!hasChanges(changes)) return before;

  const after: ContactRecord = { ...before, ...changes, updated_at: new Date() };
  if (changes.company_id !== undefined)
    after.company = await companyLink(trx, tenant, changes.company_id, null);
  await updateContact(trx, tenant, id, changes, after.updated_at);
  const { archived_at: _archivedAt, ...otherChanges } = changes;
  if (!archiving || hasChanges(otherChanges)) {
    await emitContactUpdated(
      trx,
      tenant,
      archiving ? { ...before, archived_at: after.archived_at } : before,
      after,
      [],
      metadata,
    );
  }
  if (archiving) await emitContactArchived(trx, tenant, after);
  return after;
}

/** The company link of a contact whose company_id changes; a company of another tenant is a 400. */
async function companyLink(
  trx: Trx,
  tenant: TenantScope,
  companyId: string | null,
  known: CompanyRecord | null,
): Promise<ContactRecord['company']> {
  if (companyId === null) return null;
  const company =
    known?.id === companyId
      ? known
      : await getCompany(trx, tenant, companyId).catch(() => {
          throw companyNotInTenant(companyId);
        });
  return { id: company.id, name: company.name, domain: company.domain };
}

function companyNotInTenant(companyId: string) {
  return errors.invalidField('company_id', `is not a company of this client (${companyId})`);
}

/** A foreign-key failure on the contact's company is the caller's bad company_id. */
function companyReferenceError(error: unknown): never {
  const pgError = error as { code?: string; constraint?: string; parameters?: unknown };
  if (pgError.code === '23503' && pgError.constraint?.includes('company_id')) {
    throw errors.invalidField('company_id', 'is not a company of this client');
  }
  throw error;
}

export interface ContactQuery {
  q?: string;
  lifecycle?: string;
  owner?: string;
  company_id?: string;
  email?: string;
  phone?: string;
  include_archived?: boolean;
}

/** `GET /crm/contacts`: newest first. */
export function searchContacts(
  db: Executor,
  tenant: TenantScope,
  query: ContactQuery,
  page: PageRequest<string>,
  defaultCountry: string,
): Promise<ContactRecord[]> {
  return listContactRecords(
    db,
    tenant,
    {
      namePattern: query.q !== undefined ? containsPattern(query.q) : undefined,
      lifecycle: query.lifecycle,
      owner: query.owner,
      companyId: query.company_id,
      email: query.email !== undefined ? normalizeEmail(query.email) : undefined,
      phone: query.phone !== undefined ? normalizePhone(query.phone, defaultCountry) : undefined,
      includeArchived: query.include_archived ?? false,
    },
    page,
  );
}

export async function getContact(db: Executor, tenant: TenantScope, id: string): Promise<ContactRecord> {
  const contact = await findContactRecord(db, tenant, id);
  if (!contact) throw errors.notFound('Contact', id);
  return contact;
}

/** Contacts by id, for other modules (list members); ids not of this tenant are left out. */
export function contactsByIds(db: Executor, tenant: TenantScope, ids: string[]): Promise<ContactRecord[]> {
  return findContactRecords(db, tenant, ids);
}

/** An IANA time zone name the platform knows (`America/New_York`, `UTC`); 400 naming `timezone` otherwise. */
function ianaTimeZone(name: string): string {
  let known = name === 'UTC' || name.includes('/');
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
  } catch {
    known = false;
  }
  if (!known) throw errors.invalidField('timezone', 'must be an IANA time zone such as America/New_York');
  return name;
}

/** A contact as an outbound dialer sees it: its own client (the scope of its consent), primary phone and zone. */
export interface DialableContact {
  id: string;
  client_id: string;
  phone: string | null;
  timezone: string | null;
  archived: boolean;
}

/**
 * Contacts of any client of the org by id (org-wide: an agency's SDR campaign calls contacts of all its
 * clients); ids of other orgs are left out.
 */
export async function orgContactsForDialing(
  db: Executor,
  orgId: string,
  ids: string[],
): Promise<DialableContact[]> {
  if (ids.length === 0) return [];
  const rows = await findOrgContactsForDialing(db, orgId, ids);
  return rows.map((row) => ({
    id: row.id,
    client_id: row.client_id,
    phone: row.primary_phone,
    timezone: row.timezone,
    archived: row.archived_at !== null,
  }));
}

/** Contacts as request bodies of other modules refer to them (`contact_id`). */
export const CONTACT: Referable = { noun: 'a contact', existing: findContactIds };

/** Checks a contact filter (a smart list's filter_branch); returns it with values in their stored form. */
export function validateContactFilter(input: unknown, defaultCountry: string, root?: string): ContactFilter {
  return validateFilter(input, defaultCountry, root);
}

/** The contacts a filter matches now, the excluded ones left out, newest first (a smart list's members). */
export function contactsMatching(
  db: Executor,
  tenant: TenantScope,
  filter: ContactFilter,
  exclusions: ContactExclusions,
  page: PageRequest<string>,
): Promise<ContactRecord[]> {
  const excluded = contactExcluded({ ...exclusions, exclude_archived: false }, sql.ref('c.id'));
  return listContactRecords(
    db,
    tenant,
    {
      predicate: sql<boolean>`${compileFilter(filter)} AND NOT ${excluded}`,
      includeArchived: !exclusions.exclude_archived,
    },
    page,
  );
}

/**
 * A SQL piece for a smart list's members (see docs/architecture.md): the ids of the tenant's contacts the
 * filter matches, the excluded ones left out; `only` (a column reference) narrows it to that one contact,
 * so a membership check reads one contact, not the whole list.
 */
export function contactIdsMatching(
  tenant: TenantScope,
  filter: ContactFilter,
  exclusions: ContactExclusions,
  only?: unknown,
) {
  const conditions = [
    sql`c.org_id = ${tenant.orgId}`,
    sql`c.client_id = ${tenant.clientId}`,
    compileFilter(filter),
    sql`NOT ${contactExcluded({ ...exclusions, exclude_archived: false }, sql.ref('c.id'))}`,
  ];
  if (exclusions.exclude_archived) conditions.push(sql`c.archived_at IS NULL`);
  if (only !== undefined) conditions.push(sql`c.id = ${only}`);
  return sql<{ id: string }>`SELECT c.id FROM contacts c WHERE ${sql.join(conditions, sql` AND `)}`;
}

/** A SQL piece: the email addresses of the contact `contactId` (a column reference), as one column. */
export function contactEmailAddresses(contactId: unknown) {
  return sql<{ email: string }>`SELECT ce.email FROM contact_emails ce WHERE ce.contact_id = ${contactId}`;
}

export {
  applyPhoneConsentKeyword,
  type ContactBlock,
  type PhoneReach,
  phoneReach,
} from './channel-service.ts';
