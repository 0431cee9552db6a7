import { type RawBuilder, sql } from 'kysely';
import type { TenantScope } from '../../platform/auth/tenant.ts';
import { newId } from '../../platform/db/ids.ts';
import type { Db, Executor } from '../../platform/db/pool.ts';
import { errors } from '../../platform/http/errors.ts';
import type { CompanyRecord } from '../companies/service.ts';
import { getCompanies } from '../companies/service.ts';
import { contactsByIds, contactsWhere } from '../contacts/service.ts';
import type { ContactRecord } from '../contacts/store.ts';
import { compileFilter, type FilterNode, validateFilter } from './filter.ts';
import {
  addMembersChunk,
  DNC_PHONE,
  deleteAllMembers,
  deleteList,
  deleteMember,
  type EntityType,
  type Exclusions,
  findList,
  insertList,
  type ListFields,
  type ListRecord,
  listLists,
  listStaticMembers,
  lockList,
  shareList,
  UNSUBSCRIBED_PHONE,
  updateList,
} from './store.ts';

export const MAX_IDS_PER_CALL = 10_000;
export const CHUNK_SIZE = 100;

export interface ListInput {
  name: string;
  description?: string | null;
  processing_type?: 'static' | 'smart';
  filter_branch?: unknown;
  exclude_dnc?: boolean;
  exclude_unsubscribed?: boolean;
  exclude_archived?: boolean;
  emit_flow_triggers?: boolean;
}

export async function createList(
  trx: Executor,
  tenant: TenantScope,
  input: ListInput,
  defaultCountry: string,
): Promise<ListRecord> {
  const processingType = input.processing_type ?? 'static';
  const filter = filterFor(processingType, input.filter_branch, null, defaultCountry);
  return insertList(trx, tenant, {
    ...input,
    id: newId(),
    processing_type: processingType,
    filter_branch: filter,
    at: new Date(),
  });
}

/**
 * A smart list needs a valid filter; a static one has none. Returns the filter the list will have:
 * the given one, or else the one it has (`current`).
 */
function filterFor(
  processingType: 'static' | 'smart',
  given: unknown,
  current: FilterNode | null,
  defaultCountry: string,
): FilterNode | null {
  if (processingType === 'static') {
    if (given !== undefined && given !== null) {
      throw errors.invalidField('filter_branch', 'is only for smart lists (processing_type smart)');
    }
    return null;
  }
  if (given === undefined && current !== null) return current;
  if (given === undefined || given === null) {
    throw errors.invalidField('filter_branch', 'is required for a smart list');
  }
  return validateFilter(given, defaultCountry);
}

export async function getList(db: Executor, tenant: TenantScope, id: string): Promise<ListRecord> {
  const list = await findList(db, tenant, id);
  if (!list) throw errors.notFound('List', id);
  return list;
}

export function searchLists(
  db: Executor,
  tenant: TenantScope,
  query: { processing_type?: string; before?: string; limit: number },
) {
  return listLists(db, tenant, {
    processingType: query.processing_type,
    before: query.before,
    limit: query.limit,
  });
}

/**
 * PATCH. Turning a static list smart drops its static members (a smart list's members come from its
 * filter); turning a smart list static drops its filter, and it starts empty.
 */
export async function patchList(
  db: Db,
  tenant: TenantScope,
  id: string,
  patch: Partial<ListInput>,
  defaultCountry: string,
): Promise<ListRecord> {
  return db.transaction().execute(async (trx) => {
    const list = await lockList(trx, tenant, id);
    if (!list) throw errors.notFound('List', id);
    const { filter_branch: givenFilter, ...fields } = patch;
    const processingType = patch.processing_type ?? list.processing_type;
    const filter = filterFor(processingType, givenFilter, list.filter_branch, defaultCountry);
    const changes: ListFields = {};
    for (const [key, value] of Object.entries(fields) as [keyof ListFields, unknown][]) {
      if (value !== undefined && value !== list[key]) Object.assign(changes, { [key]: value });
    }
    if (JSON.stringify(filter) !== JSON.stringify(list.filter_branch)) changes.filter_branch = filter;
    if (Object.keys(changes).length === 0) return list;
    if (list.processing_type === 'static' && processingType === 'smart') await deleteAllMembers(trx, id);
    return updateList(trx, tenant, id, changes);
  });
}

/** DELETE removes the list and its members. */
export async function removeList(db: Executor, tenant: TenantScope, id: string): Promise<void> {
  const result = await deleteList(db, tenant, id);
  if (result.numDeletedRows === 0n) throw errors.notFound('List', id);
}

export interface BulkAddResult {
  entity_type: EntityType;
  added: number;
  already_present: number;
  not_found: number;
  not_found_ids: string[];
}

/**
 * Adds members to a static list, in chunks of 100 ids, each one statement that inserts only the
 * tenant's records. Repeated ids count once.
 */
export async function addMembers(
  trx: Executor,
  tenant: TenantScope,
  listId: string,
  entityType: EntityType,
  ids: string[],
): Promise<BulkAddResult> {
  const list = await shareList(trx, tenant, listId);
  if (!list) throw errors.notFound('List', listId);
  assertStatic(list);
  const distinct = [...new Set(ids.map((id) => id.toLowerCase()))];
  const result: BulkAddResult = {
    entity_type: entityType,
    added: 0,
    already_present: 0,
    not_found: 0,
    not_found_ids: [],
  };
  for (let start = 0; start < distinct.length; start += CHUNK_SIZE) {
    const chunk = distinct.slice(start, start + CHUNK_SIZE);
    const outcome = await addMembersChunk(trx, tenant, listId, entityType, chunk);
    result.added += outcome.added;
    result.already_present += outcome.owned - outcome.added;
    result.not_found_ids.push(...outcome.not_found);
  }
  result.not_found = result.not_found_ids.length;
  return result;
}

export async function removeMember(
  db: Db,
  tenant: TenantScope,
  listId: string,
  entityId: string,
): Promise<void> {
  const list = await getList(db, tenant, listId);
  assertStatic(list);
  const result = await deleteMember(db, tenant, listId, entityId);
  if (result.numDeletedRows === 0n) throw errors.notFound('List member', entityId);
}

function assertStatic(list: ListRecord): void {
  if (list.processing_type === 'smart') {
    throw errors.invalidRequest(
      "A smart list's members come from its filter_branch; they cannot be added or removed one by one.",
    );
  }
}

export interface Member {
  entity_type: EntityType;
  entity_id: string;
  added_at: Date | null;
  contact: ContactRecord | null;
  company: CompanyRecord | null;
}

/** A page of members: a static list's stored members, or the contacts a smart list's filter matches now. */
export async function listMembers(
  db: Executor,
  tenant: TenantScope,
  listId: string,
  page: { before?: string; limit: number },
): Promise<Member[]> {
  const list = await getList(db, tenant, listId);
  if (list.processing_type === 'smart' && list.filter_branch) {
    const predicate = sql<boolean>`${compileFilter(list.filter_branch)} AND ${contactExclusions(list)}`;
    const contacts = await contactsWhere(db, tenant, predicate, page);
    return contacts.map((contact) => ({
      entity_type: 'contact',
      entity_id: contact.id,
      added_at: null,
      contact,
      company: null,
    }));
  }
  const rows = await listStaticMembers(db, tenant, listId, list, page);
  const idsOf = (type: EntityType) =>
    rows.filter((row) => row.entity_type === type).map((row) => row.entity_id);
  const [contacts, companies] = await Promise.all([
    contactsByIds(db, tenant, idsOf('contact')),
    getCompanies(db, tenant, idsOf('company')),
  ]);
  const contactById = new Map(contacts.map((contact) => [contact.id, contact]));
  const companyById = new Map(companies.map((company) => [company.id, company]));
  return rows.map((row) => ({
    ...row,
    contact: contactById.get(row.entity_id) ?? null,
    company: companyById.get(row.entity_id) ?? null,
  }));
}

/** The list's exclusions as a predicate over `contacts AS c`. */
function contactExclusions(list: Exclusions): RawBuilder<boolean> {
  const conditions: RawBuilder<unknown>[] = [sql`true`];
  if (list.exclude_archived) conditions.push(sql`c.archived_at IS NULL`);
  if (list.exclude_dnc) {
    conditions.push(
      sql`NOT EXISTS (SELECT 1 FROM contact_phones cp WHERE cp.contact_id = c.id AND ${DNC_PHONE})`,
    );
  }
  if (list.exclude_unsubscribed) {
    conditions.push(
      sql`NOT EXISTS (SELECT 1 FROM contact_phones cp WHERE cp.contact_id = c.id AND ${UNSUBSCRIBED_PHONE})`,
    );
  }
  return sql<boolean>`(${sql.join(conditions, sql` AND `)})`;
}
