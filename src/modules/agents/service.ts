import type { Tenant, TenantScope } from '../../platform/auth/tenant.ts';
import { isUuid, newId } from '../../platform/db/ids.ts';
import { containsPattern } from '../../platform/db/like.ts';
import type { Executor, Trx } from '../../platform/db/pool.ts';
import { changedFields, hasChanges, uniqueTags } from '../../platform/fields.ts';
import { errors } from '../../platform/http/errors.ts';
import type { PageRequest } from '../../platform/http/pagination.ts';
import type { Referable } from '../../platform/http/references.ts';
import { SLUG_PATTERN } from './schemas.ts';
import {
  type AgentChanges,
  type AgentFilter,
  type AgentKind,
  type AgentRecord,
  type AgentRef,
  type AgentScope,
  type AgentState,
  claimSlug,
  findAgent,
  findAgentIds,
  findTenantAgent,
  insertAgent,
  listAgents,
  lockAgent,
  retireSlug,
  updateAgent as updateAgentRow,
} from './store.ts';

/**
 * Agents: the voice, SMS and business-listing identities of a client. Slugs are unique in the org,
 * counting the aliases renames leave for a while (GitHub's rename redirects), so a stored slug keeps
 * working. An agency key acting as itself sees and manages every client's agents of its org.
 */

export type Agent = AgentRecord;
export type { AgentKind, AgentState };

export interface AgentInput {
  name: string;
  slug?: string;
  kind: string;
  purpose?: string | null;
  labels?: string[];
  state?: string;
  location_label?: string | null;
  greeting?: string;
  voice_id?: string | null;
}

export interface AgentPatch extends Partial<Omit<AgentInput, 'kind'>> {
  kind?: string;
}

export type AgentQuery = Omit<AgentFilter, 'pattern'> & { q?: string };

const SLUG = new RegExp(SLUG_PATTERN);

function scopeOf(tenant: Tenant): AgentScope {
  return { orgId: tenant.orgId, clientId: tenant.clientId, allClients: !tenant.isClientScoped };
}

/** A path value as an agent reference: a UUID is an id, anything else a slug (or nothing). */
function refOf(idOrSlug: string): AgentRef | null {
  if (isUuid(idOrSlug)) return { id: idOrSlug.toLowerCase(), slug: null };
  return SLUG.test(idOrSlug) ? { id: null, slug: idOrSlug } : null;
}

/** A slug shaped like a UUID would read as an id in `/agents/{idOrSlug}`. */
function assertSlugReadable(slug: string): void {
  if (isUuid(slug))
    throw errors.invalidField('slug', 'must not have the form of a UUID, which reads as an id');
}

/**
 * The slug a name gives: lower-case ASCII letters and digits, other runs of characters turned into
 * `-`, at least 3 and at most 64 characters.
 */
export function slugFromName(name: string): string {
  const base = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+/, '')
    .slice(0, 64)
    .replace(/-+$/, '');
  if (base.length === 0) return 'agent';
  if (base.length < 3) return `${base}-agent`;
  return isUuid(base) ? `agent-${base}` : base;
}

/** The derived slug, or the first of `slug-2`, `slug-3`, … that is free, claimed for the agent. */
async function claimDerivedSlug(trx: Trx, orgId: string, agentId: string, base: string): Promise<string> {
  for (let n = 1; ; n++) {
    const suffix = n === 1 ? '' : `-${n}`;
    const candidate = `${base.slice(0, 64 - suffix.length)}${suffix}`;
    if (await claimSlug(trx, orgId, agentId, candidate)) return candidate;
  }
}

/** `POST /agents`: creates an agent of the tenant's client; a missing slug is derived from the name. */
export async function createAgent(trx: Trx, tenant: TenantScope, input: AgentInput): Promise<Agent> {
  const id = newId();
  let slug: string;
  if (input.slug !== undefined) {
    assertSlugReadable(input.slug);
    if (!(await claimSlug(trx, tenant.orgId, id, input.slug))) throw errors.slugConflict(input.slug);
    slug = input.slug;
  } else {
    slug = await claimDerivedSlug(trx, tenant.orgId, id, slugFromName(input.name));
  }
  const now = new Date();
  await insertAgent(trx, {
    id,
    org_id: tenant.orgId,
    client_id: tenant.clientId,
    name: input.name,
    slug,
    kind: input.kind as AgentKind,
    purpose: input.purpose ?? null,
    labels: uniqueTags(input.labels ?? []),
    state: (input.state ?? 'active') as AgentState,
    location_label: input.location_label ?? null,
    greeting: input.greeting ?? '',
    voice_id: input.voice_id ?? null,
    created_at: now,
    updated_at: now,
  });
  const created = await findAgent(trx, { ...tenant, allClients: false }, { id, slug: null });
  return created!;
}

/** `GET /agents/{idOrSlug}`: by id, slug or live alias; 404 when not the caller's, 410 when archived. */
export async function getAgent(db: Executor, tenant: Tenant, idOrSlug: string): Promise<Agent> {
  const ref = refOf(idOrSlug);
  const agent = ref && (await findAgent(db, scopeOf(tenant), ref));
  if (!agent) throw errors.notFound('Agent', idOrSlug);
  if (agent.state === 'archived') throw errors.agentArchived(agent.id, agent.slug);
  return agent;
}

/**
 * `PATCH /agents/{idOrSlug}` (archived agents included, so they can be restored). A new slug must be
 * free in the org (409 `slug_conflict`), or one of the agent's own aliases; the old slug answers as
 * an alias for `aliasTtlMs`. `kind` cannot change (400 naming `kind`).
 */
export async function updateAgent(
  trx: Trx,
  tenant: Tenant,
  idOrSlug: string,
  patch: AgentPatch,
  aliasTtlMs: number,
): Promise<Agent> {
  const ref = refOf(idOrSlug);
  const scope = scopeOf(tenant);
  const current = ref && (await lockAgent(trx, scope, ref));
  if (!current) throw errors.notFound('Agent', idOrSlug);
  if (patch.kind !== undefined && patch.kind !== current.kind) {
    throw errors.invalidField('kind', `is fixed at creation: this agent stays ${current.kind}`);
  }

  const changes: AgentChanges = changedFields(current, {
    name: patch.name,
    slug: patch.slug,
    purpose: patch.purpose,
    labels: patch.labels && uniqueTags(patch.labels),
    state: patch.state as AgentState | undefined,
    location_label: patch.location_label,
    greeting: patch.greeting,
    voice_id: patch.voice_id,
  });
  if (!hasChanges(changes)) return current;
  if (changes.slug !== undefined) {
    assertSlugReadable(changes.slug as string);
    if (!(await claimSlug(trx, tenant.orgId, current.id, changes.slug as string))) {
      throw errors.slugConflict(changes.slug as string);
    }
    await retireSlug(trx, tenant.orgId, current.slug, aliasTtlMs);
  }
  await updateAgentRow(trx, current.id, { ...changes, updated_at: new Date() });
  const updated = await findAgent(trx, scope, { id: current.id, slug: null });
  return updated!;
}

/** `GET /agents`: newest first; archived agents only with `state=archived`. */
export function searchAgents(
  db: Executor,
  tenant: Tenant,
  query: AgentQuery,
  page: PageRequest<string>,
): Promise<Agent[]> {
  const { q, ...filter } = query;
  return listAgents(db, scopeOf(tenant), { ...filter, pattern: q && containsPattern(q) }, page);
}

/** A client's agent by id, whatever its state; null when it is not an agent of this tenant. */
export async function tenantAgent(db: Executor, tenant: TenantScope, id: string): Promise<Agent | null> {
  return (await findTenantAgent(db, tenant, id)) ?? null;
}

/** Agents as request bodies of other modules refer to them (`agent_id`). */
export const AGENT: Referable = { noun: 'an agent', existing: findAgentIds };
