import { type Generated, type Insertable, type Selectable, sql, type Updateable } from 'kysely';
import type { TenantScope } from '../../platform/auth/tenant.ts';
import type { Db, Executor, Trx } from '../../platform/db/pool.ts';
import { prepare } from '../../platform/db/prepared.ts';
import { idsOfTenant } from '../../platform/db/tenant-rows.ts';
import type { PageRequest } from '../../platform/http/pagination.ts';

declare module '../../platform/db/schema.ts' {
  interface Database {
    agents: AgentsTable;
    agent_slugs: AgentSlugsTable;
  }
}

export type AgentKind = 'inbound_voice' | 'outbound_voice' | 'sms' | 'google_my_business';
export type AgentState = 'active' | 'paused' | 'archived';

export interface AgentsTable {
  id: string;
  org_id: string;
  client_id: string;
  name: string;
  slug: string;
  kind: AgentKind;
  purpose: string | null;
  labels: string[];
  state: AgentState;
  location_label: string | null;
  greeting: string;
  voice_id: string | null;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

export interface AgentSlugsTable {
  org_id: string;
  slug: string;
  agent_id: string;
  /** Null for the agent's current slug; an alias answers until then. */
  expires_at: Date | null;
}

export type AgentChanges = Omit<
  Updateable<AgentsTable>,
  'id' | 'org_id' | 'client_id' | 'kind' | 'created_at'
>;

/**
 * Which agents a caller sees: one client's, or (`allClients`, an agency key acting as itself) every
 * client's of the org.
 */
export interface AgentScope {
  orgId: string;
  clientId: string;
  allClients: boolean;
}

/** An agent named by id or by slug (current or a live alias): exactly one of the two is set. */
export interface AgentRef {
  id: string | null;
  slug: string | null;
}

export type AgentRecord = Omit<Selectable<AgentsTable>, 'org_id'> & { previous_slugs: string[] };

const live = sql<boolean>`(s.expires_at IS NULL OR s.expires_at > now())`;

function agentRecords(db: Executor) {
  return db.selectFrom('agents as a').select([
    'a.id',
    'a.client_id',
    'a.name',
    'a.slug',
    'a.kind',
    'a.purpose',
    'a.labels',
    'a.state',
    'a.location_label',
    'a.greeting',
    'a.voice_id',
    'a.created_at',
    'a.updated_at',
    sql<string[]>`array(
        SELECT s.slug FROM agent_slugs s WHERE s.agent_id = a.id AND s.expires_at > now()
        ORDER BY s.expires_at DESC)`.as('previous_slugs'),
  ]);
}

function agentsIn(db: Executor, scope: AgentScope) {
  const query = agentRecords(db).where('a.org_id', '=', scope.orgId);
  return scope.allClients ? query : query.where('a.client_id', '=', scope.clientId);
}

/** The agent an id or a slug names; the slug is looked up among the org's live slugs. */
function byRef(scope: { orgId: string }, ref: { id: string | null; slug: string | null }) {
  return sql<string>`coalesce(${ref.id}::uuid, (
    SELECT s.agent_id FROM agent_slugs s WHERE s.org_id = ${scope.orgId} AND s.slug = ${ref.slug} AND ${live}))`;
}

/** The hot read, `GET /v1/agents/{idOrSlug}`: one prepared statement for an id, a slug or an alias. */
const agentByRef = prepare((db, p: AgentScope & AgentRef) =>
  agentRecords(db)
    .where('a.org_id', '=', p.orgId)
    .where((eb) => eb.or([sql<boolean>`${p.allClients}::boolean`, eb('a.client_id', '=', p.clientId)]))
    .where('a.id', '=', byRef(p, p)),
);

export async function findAgent(db: Executor, scope: AgentScope, ref: AgentRef) {
  const [row] = await agentByRef.run(db, { ...scope, ...ref });
  return row;
}

/** Reads and locks the agent for the rest of the transaction. */
export function lockAgent(trx: Trx, scope: AgentScope, ref: AgentRef) {
  return agentsIn(trx, scope).where('a.id', '=', byRef(scope, ref)).forUpdate('a').executeTakeFirst();
}

/** A client's agent by id, for other modules (numbers, calls): null when it is not the tenant's. */
export function findTenantAgent(db: Executor, tenant: TenantScope, id: string) {
  return agentsIn(db, { ...tenant, allClients: false })
    .where('a.id', '=', id)
    .executeTakeFirst();
}

export function findAgentIds(db: Executor, tenant: TenantScope, ids: string[]): Promise<string[]> {
  return idsOfTenant(db, 'agents', tenant, ids);
}

export async function insertAgent(trx: Trx, row: Insertable<AgentsTable>): Promise<void> {
  await trx.insertInto('agents').values(row).execute();
}

export async function updateAgent(trx: Trx, id: string, changes: AgentChanges): Promise<void> {
  await trx.updateTable('agents').set(changes).where('id', '=', id).execute();
}

/**
 * Makes `slug` the agent's current slug in the org, unless another agent holds it (now or as a live
 * alias): false then. An expired alias is removed first, so its slug is free again; the agent's own
 * alias is taken back.
 */
export async function claimSlug(trx: Trx, orgId: string, agentId: string, slug: string): Promise<boolean> {
  await trx
    .deleteFrom('agent_slugs')
    .where('org_id', '=', orgId)
    .where('slug', '=', slug)
    .where('expires_at', '<=', sql<Date>`now()`)
    .execute();
  const claimed = await trx
    .insertInto('agent_slugs')
    .values({ org_id: orgId, slug, agent_id: agentId, expires_at: null })
    .onConflict((conflict) =>
      conflict
        .columns(['org_id', 'slug'])
        .doUpdateSet({ expires_at: null })
        .where('agent_slugs.agent_id', '=', agentId),
    )
    .returning('agent_id')
    .executeTakeFirst();
  return claimed !== undefined;
}

/** Turns the agent's current slug into an alias that answers for `ttlMs` more. */
export async function retireSlug(trx: Trx, orgId: string, slug: string, ttlMs: number): Promise<void> {
  await trx
    .updateTable('agent_slugs')
    .set({ expires_at: sql<Date>`now() + ${ttlMs} * interval '1 millisecond'` })
    .where('org_id', '=', orgId)
    .where('slug', '=', slug)
    .execute();
}

export interface AgentFilter {
  client_id?: string;
  kind?: string;
  purpose?: string;
  label?: string;
  state?: string;
  /** A LIKE pattern over the name, slug and purpose. */
  pattern?: string;
}

/** Agents newest first; archived ones only when `state` asks for them. */
export function listAgents(db: Executor, scope: AgentScope, filter: AgentFilter, page: PageRequest<string>) {
  let query = agentsIn(db, scope);
  if (filter.client_id) query = query.where('a.client_id', '=', filter.client_id);
  if (filter.kind) query = query.where('a.kind', '=', filter.kind as AgentKind);
  if (filter.purpose) query = query.where('a.purpose', '=', filter.purpose);
  if (filter.label) query = query.where(sql<boolean>`a.labels @> ARRAY[${filter.label}]::text[]`);
  query = filter.state
    ? query.where('a.state', '=', filter.state as AgentState)
    : query.where('a.state', '<>', 'archived');
  if (filter.pattern) {
    const pattern = filter.pattern;
    query = query.where((eb) =>
      eb.or([
        eb('a.name', 'ilike', pattern),
        eb('a.slug', 'ilike', pattern),
        eb('a.purpose', 'ilike', pattern),
      ]),
    );
  }
  if (page.after !== undefined) query = query.where('a.id', '<', page.after);
  return query.orderBy('a.id', 'desc').limit(page.limit).execute();
}

/** Drops aliases past their expiry; reads ignore them already, this only keeps the table small. */
export async function deleteExpiredAliases(db: Db): Promise<number> {
  const result = await db
    .deleteFrom('agent_slugs')
    .where('expires_at', '<=', sql<Date>`now()`)
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
