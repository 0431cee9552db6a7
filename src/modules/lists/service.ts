import type { TenantScope } from '../../platform/auth/tenant.ts';
import { newId } from '../../platform/db/ids.ts';
import type { Executor, Trx } from '../../platform/db/pool.ts';
import { idsOfTenant } from '../../platform/db/tenant-rows.ts';
import { changedFields, hasChanges } from '../../platform/fields.ts';
import { errors } from '../../platform/http/errors.ts';
import type { Keyset, PageRequest } from '../../platform/http/pagination.ts';
import type { Referable } from '../../platform/http/references.ts';
import { COMPANY, type CompanyRecord, getCompanies } from '../companies/service.ts';
import {
  CONTACT,
  type ContactFilter,
  type ContactRecord,
  contactsByIds,
  contactsMatching,
  validateContactFilter,
} from '../contacts/service.ts';
import { DEAL, type Deal, getDeals } from '../deals/service.ts';
import {
  deleteAllMembers,
  deleteList,
  deleteMember,
  type EntityType,
  findList,
  insertList,
  insertMembers,
  type ListFields,
  type ListRecord,
  listContactIds,
  listLists,
  listStaticMembers,
  listTimeRelative,
  listVersion,
  lockList,
  shareList,
  updateList,
} from './store.ts';

export type { ListRecord } from './store.ts';
/**
 * SQL pieces for a sequence that follows a list (see docs/architecture.md): its members now, its version,
 * whether time alone moves its members.
 */
export { listContactIds, listTimeRelative, listVersion };

/** Lists as request bodies of other modules refer to them (a sequence's `list_id`). */
export const LIST: Referable = {
  noun: 'a list',
  existing: (db, tenant, ids) => idsOfTenant(db, 'crm_lists', tenant, ids),
};

/** The list, or undefined when it is not one of the tenant's. */
export function findListRecord(
  db: Executor,
  tenant: TenantScope,
  id: string,
): Promise<ListRecord | undefined> {
  return findList(db, tenant, id);
}

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
  trx: Trx,
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
  current: ContactFilter | null,
  defaultCountry: string,
): ContactFilter | null {
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
  return validateContactFilter(given, defaultCountry);
}

export async function getList(db: Executor, tenant: TenantScope, id: string): Promise<ListRecord> {
  const list = await findList(db, tenant, id);
  if (!list) throw errors.notFound('List', id);
  return list;
}

export function searchLists(
  db: Executor,
  tenant: TenantScope,
  query: { processing_type?: 'static' | 'smart' },
  page: PageRequest<string>,
) {
  return listLists(db, tenant, { processingType: query.processing_type }, page);
}

/**
 * PATCH. Turning a static list smart drops its static members (a smart list's members come from its
 * filter); turning a smart list static drops its filter, and it starts empty.
 */
export async function patchList(
  trx: Trx,
  tenant: TenantScope,
  id: string,
  patch: Partial<ListInput>,
  defaultCountry: string,
): Promise<ListRecord> {
  const list = await lockList(trx, tenant, id);
  if (!list) throw errors.notFound('List', id);
  const { filter_branch: givenFilter, ...fields } = patch;
  const processingType = patch.processing_type ?? list.processing_type;
  const filter = filterFor(processingType, givenFilter, list.filter_branch, defaultCountry);
  const changes: ListFields = changedFields<ListFields>(list, fields);
  if (JSON.stringify(filter) !== JSON.stringify(list.filter_branch)) changes.filter_branch = filter;
  if (!hasChanges(changes)) return list;
  if (list.processing_type === 'static' && processingType === 'smart') await deleteAllMembers(trx, id);
  return updateList(trx, tenant, id, changes);
}

/** DELETE removes the list and its members. */
export async function removeList(trx: Trx, tenant: TenantScope, id: string): Promise<void> {
  const result = await deleteList(trx, tenant, id);
  if (result.numDeletedRows === 0n) throw errors.notFound('List', id);
}

export interface BulkAddResult {
  entity_type: EntityType;
  added: number;
  already_present: number;
  not_found: number;
  not_found_ids: string[];
}

/** Which of `ids` are records of the tenant, asked of the module that owns each kind. */
/** Each kind of member, as the module that owns it lets other modules refer to it. */
const MEMBER_KINDS: Record<EntityType, Referable> = { contact: CONTACT, company: COMPANY, deal: DEAL };

/**
 * Adds members to a static list: the owning module says which ids are records of the tenant (one
 * query), and those are inserted in chunks of 100, one statement each. Repeated ids count once.
 */
export async function addMembers(
  trx: Trx,
  tenant: TenantScope,
  listId: string,
  input: { contact_ids?: string[]; entity_ids?: string[]; entity_type?: EntityType },
): Promise<BulkAddResult> {
  const { entityType, ids } = membersToAdd(input);
  const list = await shareList(trx, tenant, listId);
  if (!list) throw errors.notFound('List', listId);
  assertStatic(list);
  const distinct = [...new Set(ids.map((id) => id.toLowerCase()))];
  const owned = new Set(await MEMBER_KINDS[entityType].existing(trx, tenant, distinct));
  const members = distinct.filter((id) => owned.has(id));
  let added = 0;
  for (let start = 0; start < members.length; start += CHUNK_SIZE) {
    added += await insertMembers(trx, tenant, listId, entityType, members.slice(start, start + CHUNK_SIZE));
  }
  const notFound = distinct.filter((id) => !owned.has(id));
  return {
    entity_type: entityType,
    added,
    already_present: members.length - added,
    not_found: notFound.length,
    not_found_ids: notFound,
  };
}

/** `{contact_ids}`, or `{entity_ids, entity_type}`: one of them. */
function membersToAdd(input: { contact_ids?: string[]; entity_ids?: string[]; entity_type?: EntityType }) {
  const { contact_ids, entity_ids, entity_type } = input;
  if ((contact_ids === undefined) === (entity_ids === undefined)) {
    throw errors.invalidField('contact_ids', 'or entity_ids (with entity_type) is required, not both');
  }
  if (contact_ids !== undefined && entity_type !== undefined && entity_type !== 'contact') {
    throw errors.invalidField('entity_type', 'must be contact (or absent) with contact_ids');
  }
  if (entity_ids !== undefined && entity_type === undefined) {
    throw errors.invalidField('entity_type', 'is required with entity_ids');
  }
  return { entityType: entity_type ?? 'contact', ids: (contact_ids ?? entity_ids) as string[] };
}

export async function removeMember(
  trx: Trx,
  tenant: TenantScope,
  listId: string,
  entityId: string,
): Promise<void> {
  const list = await getList(trx, tenant, listId);
  assertStatic(list);
  const result = await deleteMember(trx, tenant, listId, entityId);
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
  deal: Deal | null;
}

/** Members page newest record first: the cursor is the last member's entity id. */
export const memberKeyset: Keyset<Member, string> = {
  key: (member) => [member.entity_id],
  cursor: ([id]) => (typeof id === 'string' ? id : undefined),
};

/** A page of members: a static list's stored members, or the contacts a smart list's filter matches now. */
export async function listMembers(
  db: Executor,
  tenant: TenantScope,
  listId: string,
  page: PageRequest<string>,
): Promise<Member[]> {
  const list = await getList(db, tenant, listId);
  if (list.processing_type === 'smart' && list.filter_branch) {
    const contacts = await contactsMatching(db, tenant, list.filter_branch, list, page);
    return contacts.map((contact) => ({
      entity_type: 'contact',
      entity_id: contact.id,
      added_at: null,
      contact,
      company: null,
      deal: null,
    }));
  }
  const rows = await listStaticMembers(db, tenant, listId, list, page);
  const idsOf = (type: EntityType) =>
    rows.filter((row) => row.entity_type === type).map((row) => row.entity_id);
  const [contacts, companies, deals] = await Promise.all([
    contactsByIds(db, tenant, idsOf('contact')),
    getCompanies(db, tenant, idsOf('company')),
    getDeals(db, tenant, idsOf('deal')),
  ]);
  const byId = <T extends { id: string }>(records: T[]) =>
    new Map(records.map((record) => [record.id, record]));
  const [contactById, companyById, dealById] = [byId(contacts), byId(companies), byId(deals)];
  return rows.map((row) => ({
    ...row,
    contact: contactById.get(row.entity_id) ?? null,
    company: companyById.get(row.entity_id) ?? null,
    deal: dealById.get(row.entity_id) ?? null,
  }));
}
