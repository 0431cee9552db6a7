import { type Generated, type Selectable, sql } from 'kysely';
import type { TenantScope } from '../../platform/auth/tenant.ts';
import type { Executor, Trx } from '../../platform/db/pool.ts';
import { idsOfTenant, whereTenant } from '../../platform/db/tenant-rows.ts';
import type { PageRequest } from '../../platform/http/pagination.ts';

declare module '../../platform/db/schema.ts' {
  interface Database {
    pipelines: PipelinesTable;
    pipeline_stages: PipelineStagesTable;
  }
}

export interface PipelinesTable {
  id: string;
  org_id: string;
  client_id: string;
  name: string;
  is_default: boolean;
  created_at: Generated<Date>;
}

export interface PipelineStagesTable {
  id: string;
  org_id: string;
  client_id: string;
  pipeline_id: string;
  name: string;
  position: number;
  probability: number | null;
  created_at: Generated<Date>;
}

export type PipelineRow = Selectable<PipelinesTable>;
export type StageRow = Selectable<PipelineStagesTable>;

export interface NewStage {
  id: string;
  name: string;
  probability: number | null;
}

function pipelinesOf(db: Executor, tenant: TenantScope) {
  return db.selectFrom('pipelines').selectAll().$call(whereTenant(tenant));
}

/** The default pipeline and its first stage: where a deal lands when it names neither. */
export function findDefaultStart(db: Executor, tenant: TenantScope) {
  return db
    .selectFrom('pipelines as p')
    .innerJoin('pipeline_stages as s', (join) =>
      join.onRef('s.org_id', '=', 'p.org_id').onRef('s.pipeline_id', '=', 'p.id'),
    )
    .select(['p.id as pipeline_id', 's.id as stage_id'])
    .where('p.org_id', '=', tenant.orgId)
    .where('p.client_id', '=', tenant.clientId)
    .where('p.is_default', '=', true)
    .orderBy('s.position')
    .limit(1)
    .executeTakeFirst();
}

/**
 * Inserts a pipeline. A default one that loses the race against another default (the partial unique
 * index `pipelines_one_default`) is not inserted: the result is then undefined.
 */
export function insertPipeline(
  trx: Trx,
  tenant: TenantScope,
  pipeline: { id: string; name: string; isDefault: boolean },
) {
  return trx
    .insertInto('pipelines')
    .values({
      id: pipeline.id,
      org_id: tenant.orgId,
      client_id: tenant.clientId,
      name: pipeline.name,
      is_default: pipeline.isDefault,
    })
    .onConflict((oc) => oc.doNothing())
    .returningAll()
    .executeTakeFirst();
}

export function insertStages(trx: Trx, tenant: TenantScope, pipelineId: string, stages: NewStage[]) {
  return trx
    .insertInto('pipeline_stages')
    .values(
      stages.map((stage, position) => ({
        id: stage.id,
        org_id: tenant.orgId,
        client_id: tenant.clientId,
        pipeline_id: pipelineId,
        name: stage.name,
        position,
        probability: stage.probability,
      })),
    )
    .returningAll()
    .execute();
}

/** Serializes changes of a tenant's default pipeline, so two of them cannot both demote and insert. */
export async function lockDefaultPipeline(trx: Trx, tenant: TenantScope): Promise<void> {
  await sql`SELECT pg_advisory_xact_lock(hashtextextended(${`pipelines:${tenant.orgId}:${tenant.clientId}`}, 0))`.execute(
    trx,
  );
}

export function demoteDefaultPipeline(trx: Trx, tenant: TenantScope) {
  return trx
    .updateTable('pipelines')
    .set({ is_default: false })
    .$call(whereTenant(tenant))
    .where('is_default', '=', true)
    .execute();
}

/** Pipelines in creation order (id ascending). */
export function findPipelines(db: Executor, tenant: TenantScope, page: PageRequest<string>) {
  let query = pipelinesOf(db, tenant);
  if (page.after !== undefined) query = query.where('id', '>', page.after);
  return query.orderBy('id').limit(page.limit).execute();
}

export function findPipelineIds(db: Executor, tenant: TenantScope, ids: string[]): Promise<string[]> {
  return idsOfTenant(db, 'pipelines', tenant, ids);
}

export function findPipeline(db: Executor, tenant: TenantScope, id: string) {
  return pipelinesOf(db, tenant).where('id', '=', id).executeTakeFirst();
}

/** The stages of the given pipelines, in pipeline order then stage position. */
export function stagesOf(db: Executor, tenant: TenantScope, pipelineIds: string[]) {
  if (pipelineIds.length === 0) return Promise.resolve([] as StageRow[]);
  return db
    .selectFrom('pipeline_stages')
    .selectAll()
    .$call(whereTenant(tenant))
    .where('pipeline_id', 'in', pipelineIds)
    .orderBy('pipeline_id')
    .orderBy('position')
    .execute();
}

/** The stage `stageId` if it belongs to `pipelineId` of this tenant. */
export function findStageInPipeline(db: Executor, tenant: TenantScope, pipelineId: string, stageId: string) {
  return db
    .selectFrom('pipeline_stages')
    .select(['id', 'pipeline_id'])
    .$call(whereTenant(tenant))
    .where('pipeline_id', '=', pipelineId)
    .where('id', '=', stageId)
    .executeTakeFirst();
}

/** The first stage of a pipeline of this tenant, or undefined when the pipeline is not the tenant's. */
export function firstStage(db: Executor, tenant: TenantScope, pipelineId: string) {
  return db
    .selectFrom('pipeline_stages')
    .select(['id', 'pipeline_id'])
    .$call(whereTenant(tenant))
    .where('pipeline_id', '=', pipelineId)
    .orderBy('position')
    .limit(1)
    .executeTakeFirst();
}

/**
 * `findDefaultStart` as a SQL piece for a statement that places a deal itself (a create in one
 * statement): no row when the client has no default pipeline yet.
 */
export function defaultStart(orgId: unknown, clientId: unknown) {
  return sql<{ pipeline_id: string; stage_id: string }>`SELECT p.id AS pipeline_id, s.id AS stage_id
    FROM pipelines p JOIN pipeline_stages s ON s.org_id = p.org_id AND s.pipeline_id = p.id
    WHERE p.org_id = ${orgId} AND p.client_id = ${clientId} AND p.is_default
    ORDER BY s.position LIMIT 1`;
}

/** The names of a deal's stage and pipeline, for an AI gist's source (see src/modules/ai/store.ts). */
export function stageName(stageId: unknown) {
  return sql<string | null>`(SELECT s.name FROM pipeline_stages s WHERE s.id = ${stageId})`;
}

export function pipelineName(pipelineId: unknown) {
  return sql<string | null>`(SELECT p.name FROM pipelines p WHERE p.id = ${pipelineId})`;
}
