import type { TenantScope } from '../../platform/auth/tenant.ts';
import { newId } from '../../platform/db/ids.ts';
import type { Executor, Trx } from '../../platform/db/pool.ts';
import { errors } from '../../platform/http/errors.ts';
import type { PageRequest } from '../../platform/http/pagination.ts';
import { assertReferences, type Referable } from '../../platform/http/references.ts';
import {
  demoteDefaultPipeline,
  findDefaultStart,
  findPipeline,
  findPipelineIds,
  findPipelines,
  findStageInPipeline,
  firstStage,
  insertPipeline,
  insertStages,
  lockDefaultPipeline,
  type PipelineRow,
  type StageRow,
  stagesOf,
} from './store.ts';

/** SQL pieces of what an AI gist reads (src/modules/ai/store.ts). */
export { defaultStart, pipelineName, stageName } from './store.ts';

/** The pipeline every client starts with, modelled on the stock sales pipeline of HubSpot. */
export const DEFAULT_PIPELINE = {
  name: 'Sales pipeline',
  stages: [
    { name: 'Appointment scheduled', probability: 0.2 },
    { name: 'Qualified to buy', probability: 0.4 },
    { name: 'Presentation scheduled', probability: 0.6 },
    { name: 'Decision maker bought-in', probability: 0.8 },
    { name: 'Contract sent', probability: 0.9 },
    { name: 'Closed won', probability: 1 },
    { name: 'Closed lost', probability: 0 },
  ],
};

export interface Stage {
  id: string;
  name: string;
  position: number;
  probability: number | null;
}

export interface Pipeline {
  id: string;
  name: string;
  is_default: boolean;
  stages: Stage[];
  created_at: Date;
}

export interface PipelineInput {
  name: string;
  is_default?: boolean;
  stages: { name: string; probability?: number | null }[];
}

/** Pipelines as request bodies refer to them (`pipeline_id`). */
const PIPELINE: Referable = { noun: 'a pipeline', existing: findPipelineIds };

/** Where a deal sits: a pipeline of the tenant and one of its stages. */
export interface Placement {
  pipelineId: string;
  stageId: string;
}

function toPipeline(row: PipelineRow, stages: StageRow[]): Pipeline {
  return {
    id: row.id,
    name: row.name,
    is_default: row.is_default,
    stages: stages.map((stage) => ({
      id: stage.id,
      name: stage.name,
      position: stage.position,
      probability: stage.probability,
    })),
    created_at: row.created_at,
  };
}

/**
 * The default pipeline's first stage, creating the default pipeline on first use. Race-safe: every
 * change of a client's default pipeline holds the same advisory lock, and the partial unique index
 * `pipelines_one_default` stands behind it.
 */
export async function defaultPlacement(trx: Trx, tenant: TenantScope): Promise<Placement> {
  let start = await findDefaultStart(trx, tenant);
  if (!start) {
    await lockDefaultPipeline(trx, tenant);
    if (!(await findDefaultStart(trx, tenant))) {
      const created = await insertPipeline(trx, tenant, {
        id: newId(),
        name: DEFAULT_PIPELINE.name,
        isDefault: true,
      });
      if (created) {
        await insertStages(
          trx,
          tenant,
          created.id,
          DEFAULT_PIPELINE.stages.map((stage) => ({ id: newId(), ...stage })),
        );
      }
    }
    start = await findDefaultStart(trx, tenant);
  }
  if (!start) throw new Error(`no default pipeline for client ${tenant.clientId} after creating one`);
  return { pipelineId: start.pipeline_id, stageId: start.stage_id };
}

/**
 * Resolves where a deal goes from an optional pipeline and stage. `current` is the deal's placement on
 * update. A pipeline that is not the tenant's, or a stage outside the deal's pipeline, is a 400.
 */
export async function placeDeal(
  trx: Trx,
  tenant: TenantScope,
  given: { pipelineId?: string; stageId?: string },
  current?: Placement,
): Promise<Placement> {
  let pipelineId = given.pipelineId ?? current?.pipelineId;
  if (given.pipelineId !== undefined && given.pipelineId !== current?.pipelineId) {
    await assertReferences(trx, tenant, [{ field: 'pipeline_id', id: given.pipelineId, kind: PIPELINE }]);
  }
  if (pipelineId === undefined) {
    const start = await defaultPlacement(trx, tenant);
    if (given.stageId === undefined) return start;
    pipelineId = start.pipelineId;
  }
  if (given.stageId !== undefined) {
    if (given.stageId === current?.stageId && pipelineId === current.pipelineId) return current;
    const stage = await findStageInPipeline(trx, tenant, pipelineId, given.stageId);
    if (!stage) {
      throw errors.invalidField('stage_id', `is not a stage of the deal's pipeline ${pipelineId}`);
    }
    return { pipelineId, stageId: stage.id };
  }
  if (current && pipelineId === current.pipelineId) return current;
  const first = await firstStage(trx, tenant, pipelineId);
  if (!first) throw errors.invalidField('pipeline_id', `is not a pipeline of this client (${pipelineId})`);
  return { pipelineId, stageId: first.id };
}

/** The tenant's pipelines with their stages in order, oldest first; the default pipeline is created on first use. */
export async function listPipelines(
  trx: Trx,
  tenant: TenantScope,
  page: PageRequest<string>,
): Promise<Pipeline[]> {
  if (page.after === undefined) await defaultPlacement(trx, tenant);
  const rows = await findPipelines(trx, tenant, page);
  const stages = await stagesOf(
    trx,
    tenant,
    rows.map((row) => row.id),
  );
  return rows.map((row) =>
    toPipeline(
      row,
      stages.filter((s) => s.pipeline_id === row.id),
    ),
  );
}

export async function getPipeline(db: Executor, tenant: TenantScope, id: string): Promise<Pipeline> {
  const row = await findPipeline(db, tenant, id);
  if (!row) throw errors.notFound('Pipeline', id);
  return toPipeline(row, await stagesOf(db, tenant, [row.id]));
}

/**
 * Creates a pipeline with its stages in the given order. `is_default: true` makes it the default in
 * place of the previous one; otherwise the built-in default is created first if the client has none,
 * so a client always has exactly one default pipeline.
 */
export async function createPipeline(trx: Trx, tenant: TenantScope, input: PipelineInput): Promise<Pipeline> {
  const names = new Set<string>();
  input.stages.forEach((stage, i) => {
    const key = stage.name.trim().toLowerCase();
    if (names.has(key)) throw errors.invalidField(`stages.${i}.name`, 'repeats the name of another stage');
    names.add(key);
  });
  if (input.is_default) {
    await lockDefaultPipeline(trx, tenant);
    await demoteDefaultPipeline(trx, tenant);
  } else {
    await defaultPlacement(trx, tenant);
  }
  const row = await insertPipeline(trx, tenant, {
    id: newId(),
    name: input.name,
    isDefault: input.is_default ?? false,
  });
  if (!row) throw new Error('pipeline insert conflicted although the default was demoted under lock');
  const stages = await insertStages(
    trx,
    tenant,
    row.id,
    input.stages.map((stage) => ({
      id: newId(),
      name: stage.name,
      probability: stage.probability ?? null,
    })),
  );
  return toPipeline(row, stages);
}
