import type { Tenant } from '../../platform/auth/tenant.ts';
import { newId } from '../../platform/db/ids.ts';
import type { Executor } from '../../platform/db/pool.ts';
import { errors } from '../../platform/http/errors.ts';
import { decodePageToken, type Page, pageScope, toPage } from '../../platform/http/pagination.ts';
import { assertReferences } from '../references/store.ts';
import {
  demoteDefaultPipeline,
  findDefaultStart,
  findPipeline,
  findStageInPipeline,
  firstStage,
  insertPipeline,
  insertStages,
  listPipelines,
  lockDefaultPipeline,
  type PipelineRow,
  type StageRow,
  stagesOf,
} from './store.ts';

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

async function inTransaction<T>(db: Executor, work: (trx: Executor) => Promise<T>): Promise<T> {
  return db.isTransaction ? work(db) : db.transaction().execute(work);
}

/**
 * The default pipeline's first stage, creating the default pipeline on first use. Race-safe: every
 * change of a client's default pipeline holds the same advisory lock, and the partial unique index
 * `pipelines_one_default` stands behind it.
 */
export async function defaultPlacement(db: Executor, tenant: Tenant): Promise<Placement> {
  let start = await findDefaultStart(db, tenant);
  if (!start) {
    await inTransaction(db, async (trx) => {
      await lockDefaultPipeline(trx, tenant);
      if (await findDefaultStart(trx, tenant)) return;
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
    });
    start = await findDefaultStart(db, tenant);
  }
  if (!start) throw new Error(`no default pipeline for client ${tenant.clientId} after creating one`);
  return { pipelineId: start.pipeline_id, stageId: start.stage_id };
}

/**
 * Resolves where a deal goes from an optional pipeline and stage. `current` is the deal's placement on
 * update. A pipeline that is not the tenant's, or a stage outside the deal's pipeline, is a 400.
 */
export async function placeDeal(
  db: Executor,
  tenant: Tenant,
  given: { pipelineId?: string; stageId?: string },
  current?: Placement,
): Promise<Placement> {
  let pipelineId = given.pipelineId ?? current?.pipelineId;
  if (given.pipelineId !== undefined && given.pipelineId !== current?.pipelineId) {
    await assertReferences(db, tenant, [{ field: 'pipeline_id', kind: 'pipeline', id: given.pipelineId }]);
  }
  if (pipelineId === undefined) {
    const start = await defaultPlacement(db, tenant);
    if (given.stageId === undefined) return start;
    pipelineId = start.pipelineId;
  }
  if (given.stageId !== undefined) {
    if (given.stageId === current?.stageId && pipelineId === current.pipelineId) return current;
    const stage = await findStageInPipeline(db, tenant, pipelineId, given.stageId);
    if (!stage) {
      throw errors.invalidField('stage_id', `is not a stage of the deal's pipeline ${pipelineId}`);
    }
    return { pipelineId, stageId: stage.id };
  }
  if (current && pipelineId === current.pipelineId) return current;
  const first = await firstStage(db, tenant, pipelineId);
  if (!first) throw errors.invalidField('pipeline_id', `is not a pipeline of this client (${pipelineId})`);
  return { pipelineId, stageId: first.id };
}

/** The tenant's pipelines with their stages in order; the default pipeline is created on first use. */
export async function listPipelinesPage(
  db: Executor,
  tenant: Tenant,
  query: { limit: number; page_token?: string },
): Promise<Page<Pipeline>> {
  const scope = pageScope('crm.pipelines.list', tenant);
  const cursor = decodePageToken(query.page_token, scope);
  if (!cursor) await defaultPlacement(db, tenant);
  const rows = await listPipelines(db, tenant, {
    after: cursor?.[0] as string | undefined,
    limit: query.limit,
  });
  const page = toPage(rows, query.limit, scope, (row) => [row.id]);
  const stages = await stagesOf(
    db,
    tenant,
    page.data.map((row) => row.id),
  );
  return {
    ...page,
    data: page.data.map((row) =>
      toPipeline(
        row,
        stages.filter((s) => s.pipeline_id === row.id),
      ),
    ),
  };
}

export async function getPipeline(db: Executor, tenant: Tenant, id: string): Promise<Pipeline> {
  const row = await findPipeline(db, tenant, id);
  if (!row) throw errors.notFound('Pipeline', id);
  return toPipeline(row, await stagesOf(db, tenant, [row.id]));
}

/**
 * Creates a pipeline with its stages in the given order. `is_default: true` makes it the default in
 * place of the previous one; otherwise the built-in default is created first if the client has none,
 * so a client always has exactly one default pipeline.
 */
export async function createPipeline(db: Executor, tenant: Tenant, input: PipelineInput): Promise<Pipeline> {
  const names = new Set<string>();
  input.stages.forEach((stage, i) => {
    const key = stage.name.trim().toLowerCase();
    if (names.has(key)) throw errors.invalidField(`stages.${i}.name`, 'repeats the name of another stage');
    names.add(key);
  });
  if (!input.is_default) await defaultPlacement(db, tenant);
  return inTransaction(db, async (trx) => {
    if (input.is_default) {
      await lockDefaultPipeline(trx, tenant);
      await demoteDefaultPipeline(trx, tenant);
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
  });
}
