import { domainToASCII } from 'node:url';
import type { TenantScope } from '../../platform/auth/tenant.ts';
import { newEventId, newId } from '../../platform/db/ids.ts';
import { containsPattern } from '../../platform/db/like.ts';
import type { Db, Executor, Trx } from '../../platform/db/pool.ts';
import { countEvent, emit } from '../../platform/events/emit.ts';
import { changedFields, hasChanges } from '../../platform/fields.ts';
import { errors } from '../../platform/http/errors.ts';
import type { PageRequest } from '../../platform/http/pagination.ts';
import type { Referable } from '../../platform/http/references.ts';
import {
  type CompanyFields,
  type CompanyRecord,
  createCompanyAtOnce,
  findCompanies,
  findCompany,
  findCompanyByName,
  findCompanyIds,
  insertCompany,
  listCompanies,
  lockCompany,
  lockCompanyByDomain,
  lockCompanyName,
  updateCompany,
} from './store.ts';

export type { CompanyRecord } from './store.ts';
/** SQL pieces of what an AI gist reads (src/modules/ai/store.ts). */
/** SQL pieces for other modules' statements over contacts and list members (see docs/architecture.md). */
export { companyArchived, companyCard, companyGistJson, companyOfContact } from './store.ts';

const HOSTNAME = /^(?=.{1,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z][a-z0-9-]{0,61}[a-z0-9]$/;

/**
 * A company's identity: lower case, no scheme, no `www.`, no port, no path; international names in
 * their ASCII (punycode) form. Returns null when what is left is not a host name.
 */
export function normalizeDomain(input: string): string | null {
  let host = input.trim().toLowerCase();
  host = host.replace(/^[a-z][a-z0-9+.-]*:\/\//, '').replace(/^\/\//, '');
  host = host.split(/[/?#]/, 1)[0];
  host = host.slice(host.lastIndexOf('@') + 1);
  host = host.replace(/:\d*$/, '').replace(/\.$/, '');
  host = host.replace(/^www\./, '');
  const ascii = domainToASCII(host);
  return HOSTNAME.test(ascii) ? ascii : null;
}

function domainField(input: string, field: string): string {
  const domain = normalizeDomain(input);
  if (domain === null) throw errors.invalidField(field, 'is not a domain name (for example acme.com)');
  return domain;
}

export interface CompanyInput {
  name?: string;
  domain?: string;
  website?: string;
  industry?: string;
  business_description?: string;
}

/**
 * Create-or-upsert, idempotent on the normalized domain (taken from `website` when `domain` is not
 * given): an existing company gets the given fields merged in. `company.created` on creation,
 * `company.updated` when a merge changed a field.
 */
export async function upsertCompany(
  trx: Trx,
  tenant: TenantScope,
  input: CompanyInput,
): Promise<{ company: CompanyRecord; created: boolean }> {
  const { name, domain, fields } = identityOf(input);
  const inserted = await insertCompany(trx, tenant, { id: newId(), ...fields, name, domain });
  if (inserted) {
    await emit(trx, tenant, 'company.created', companyEventData(inserted));
    return { company: inserted, created: true };
  }
  // The domain is taken: the statement above saw the committed row, so this one finds it.
  const existing = await lockCompanyByDomain(trx, tenant, domain as string);
  if (!existing) throw new Error(`company with domain ${domain} vanished`);
  const changes = changedFields<CompanyFields>(existing, { ...fields, name: input.name });
  if (!hasChanges(changes)) return { company: existing, created: false };
  const company = await updateCompany(trx, tenant, existing.id, changes);
  await emitCompanyUpdated(trx, tenant, existing, company);
  return { company, created: false };
}

/**
 * The upsert's common case, a new company, as one statement committed on its own (the edge runs it
 * before `upsertCompany`'s transaction, without an Idempotency-Key: see `runIdempotent`): the company
 * and its `company.created` event. Null when the domain is the tenant's already, having written
 * nothing: the merge is `upsertCompany`'s.
 */
export async function createCompany(
  db: Db,
  tenant: TenantScope,
  input: CompanyInput,
): Promise<{ company: CompanyRecord; created: true } | null> {
  const { name, domain, fields } = identityOf(input);
  const at = new Date();
  const company: CompanyRecord = {
    id: newId(),
    name,
    domain,
    website: fields.website ?? null,
    industry: fields.industry ?? null,
    business_description: fields.business_description ?? null,
    archived_at: null,
    created_at: at,
    updated_at: at,
  };
  const created = await createCompanyAtOnce(db, tenant, {
    ...company,
    at,
    eventId: newEventId(),
    eventData: JSON.stringify(companyEventData(company)),
  });
  if (!created) return null;
  countEvent('company.created');
  return { company, created: true };
}

/** The name, the normalized domain (from `website` when `domain` is not given) and the other fields. */
function identityOf(input: CompanyInput): { name: string; domain: string | null; fields: CompanyFields } {
  const domain =
    input.domain !== undefined
      ? domainField(input.domain, 'domain')
      : input.website !== undefined
        ? normalizeDomain(input.website)
        : null;
  const name = input.name ?? domain;
  if (!name) throw errors.invalidField('name', 'is required when no domain is given');
  const fields: CompanyFields = {
    website: input.website,
    industry: input.industry,
    business_description: input.business_description,
  };
  return { name, domain, fields };
}

/**
 * The company a contact upsert names with `company_name`: by the email's company domain when there is
 * one, otherwise by name among the tenant's companies without a domain; created when missing.
 */
export async function resolveCompanyForContact(
  trx: Trx,
  tenant: TenantScope,
  name: string,
  domain: string | null,
): Promise<CompanyRecord> {
  if (domain) {
    const inserted = await insertCompany(trx, tenant, { id: newId(), name, domain });
    if (inserted) {
      await emit(trx, tenant, 'company.created', companyEventData(inserted));
      return inserted;
    }
    const existing = await lockCompanyByDomain(trx, tenant, domain);
    if (!existing) throw new Error(`company with domain ${domain} vanished`);
    return existing;
  }
  await lockCompanyName(trx, tenant, name);
  const existing = await findCompanyByName(trx, tenant, name);
  if (existing) return existing;
  const created = await insertCompany(trx, tenant, { id: newId(), name });
  if (!created) throw new Error('a company without a domain cannot conflict');
  await emit(trx, tenant, 'company.created', companyEventData(created));
  return created;
}

export async function getCompany(db: Executor, tenant: TenantScope, id: string): Promise<CompanyRecord> {
  const company = await findCompany(db, tenant, id);
  if (!company) throw errors.notFound('Company', id);
  return company;
}

/** Companies by id; ids not of this tenant are left out. */
export function getCompanies(db: Executor, tenant: TenantScope, ids: string[]): Promise<CompanyRecord[]> {
  return findCompanies(db, tenant, ids);
}

/** Companies as request bodies of other modules refer to them (`company_id`). */
export const COMPANY: Referable = { noun: 'a company', existing: findCompanyIds };

export interface CompanyPatch {
  name?: string;
  domain?: string | null;
  website?: string | null;
  industry?: string | null;
  business_description?: string | null;
  archived?: boolean;
}

/**
 * `PATCH /crm/companies/{id}` (and DELETE, as `archived: true`); `company.updated`, with `metadata`,
 * when a field changed.
 */
export async function patchCompany(
  trx: Trx,
  tenant: TenantScope,
  id: string,
  patch: CompanyPatch,
  metadata: Record<string, unknown> = {},
): Promise<CompanyRecord> {
  const { archived, domain, ...rest } = patch;
  const wanted: CompanyFields & { archived_at?: Date | null } = { ...rest };
  if (domain !== undefined) wanted.domain = domain === null ? null : domainField(domain, 'domain');
  const company = await lockCompany(trx, tenant, id);
  if (!company) throw errors.notFound('Company', id);
  if (archived !== undefined && archived !== (company.archived_at !== null)) {
    wanted.archived_at = archived ? new Date() : null;
  }
  const changes = changedFields<CompanyFields & { archived_at?: Date | null }>(company, wanted);
  if (!hasChanges(changes)) return company;
  try {
    const updated = await updateCompany(trx, tenant, id, changes);
    await emitCompanyUpdated(trx, tenant, company, updated, metadata);
    return updated;
  } catch (error) {
    if ((error as { code?: string }).code === '23505') {
      throw errors.conflict(
        'domain_in_use',
        `Another company of this client has the domain ${wanted.domain}.`,
        { domain: wanted.domain },
      );
    }
    throw error;
  }
}

/** DELETE: archives; archiving an archived company changes nothing. */
export async function archiveCompany(trx: Trx, tenant: TenantScope, id: string): Promise<void> {
  await patchCompany(trx, tenant, id, { archived: true });
}

export function searchCompanies(
  db: Executor,
  tenant: TenantScope,
  query: { q?: string; domain?: string; include_archived?: boolean },
  page: PageRequest<string>,
) {
  return listCompanies(
    db,
    tenant,
    {
      namePattern: query.q ? containsPattern(query.q) : undefined,
      domain: query.domain !== undefined ? domainField(query.domain, 'domain') : undefined,
      includeArchived: query.include_archived ?? false,
    },
    page,
  );
}

/** The event's data: the company as the REST API returns it. */
export function companyEventData(company: CompanyRecord): Record<string, unknown> {
  return { ...company };
}

/**
 * `company.updated`: the company as it is now, the names of the fields that changed with their
 * previous values, as `contact.updated` reports a contact.
 */
function emitCompanyUpdated(
  trx: Trx,
  tenant: TenantScope,
  before: CompanyRecord,
  after: CompanyRecord,
  metadata: Record<string, unknown> = {},
) {
  const { updated_at: _updatedAt, ...fields } = after;
  const changed = Object.keys(changedFields<Partial<CompanyRecord>>(before, fields));
  const previous = Object.fromEntries(changed.map((key) => [key, before[key as keyof CompanyRecord]]));
  return emit(
    trx,
    tenant,
    'company.updated',
    { ...companyEventData(after), changed_fields: changed, previous_attributes: previous },
    metadata,
  );
}
