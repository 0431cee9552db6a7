import type { TenantScope } from '../../platform/auth/tenant.ts';
import { newEventId, newId } from '../../platform/db/ids.ts';
import type { Db, Executor, Trx } from '../../platform/db/pool.ts';
import { countEvent, emit } from '../../platform/events/emit.ts';
import { changedFields, hasChanges, uniqueTags } from '../../platform/fields.ts';
import { errors } from '../../platform/http/errors.ts';
import type { PageRequest } from '../../platform/http/pagination.ts';
import { assertReferences, type Referable, referenceRefused } from '../../platform/http/references.ts';
import { COMPANY } from '../companies/service.ts';
import { CONTACT } from '../contacts/service.ts';
import { placeDeal } from '../pipelines/service.ts';
import {
  archiveDeal as archiveDealRow,
  createDealAtOnce,
  type DealChanges,
  type DealFilter,
  type DealRow,
  type DealStatus,
  findDeal,
  findDealIds,
  findDeals,
  insertDeal,
  listDeals,
  lockDeal,
  updateDeal as updateDealRow,
} from './store.ts';

/** SQL pieces of what an AI gist reads (src/modules/ai/store.ts). */
/** A SQL piece for a list's members (see docs/architecture.md): true when the deal is archived. */
export { dealArchived, dealGistJson, dealLink, openDealsGistJson, wonDealsCount } from './store.ts';

/** Serialized custom fields above this are refused: they ride along in every read and event. */
export const MAX_CUSTOM_FIELDS_BYTES = 16_384;

/** A deal as the API returns it: its row without the tenant, the close date as `YYYY-MM-DD`. */
export type Deal = Omit<DealRow, 'org_id' | 'client_id' | 'expected_close_date'> & {
  expected_close_date: string | null;
};

export interface DealInput {
  name: string;
  amount?: number | null;
  currency?: string;
  pipeline_id?: string;
  stage_id?: string;
  status?: DealStatus;
  owner_user_id?: string | null;
  primary_contact_id?: string | null;
  company_id?: string | null;
  expected_close_date?: string | null;
  tags?: string[];
  custom_fields?: Record<string, unknown>;
}

export interface DealPatch extends Partial<Omit<DealInput, 'custom_fields'>> {
  /** Merged into the stored fields; a key set to null is removed. */
  custom_fields?: Record<string, unknown>;
  archived?: boolean;
}

const pad = (n: number) => String(n).padStart(2, '0');

/** A `date` column comes back as local midnight, so its local parts are the calendar date. */
function calendarDate(value: Date | null): string | null {
  if (!value) return null;
  return `${value.getFullYear()}-${pad(value.getMonth() + 1)}-${pad(value.getDate())}`;
}

export function toDeal(row: DealRow): Deal {
  const { org_id: _orgId, client_id: _clientId, expected_close_date, ...deal } = row;
  return { ...deal, expected_close_date: calendarDate(expected_close_date) };
}

function checkCustomFields(fields: Record<string, unknown>): void {
  if (Buffer.byteLength(JSON.stringify(fields)) > MAX_CUSTOM_FIELDS_BYTES) {
    throw errors.invalidField('custom_fields', `must serialize to at most ${MAX_CUSTOM_FIELDS_BYTES} bytes`);
  }
}

/** The contact and company a deal links to must be records of the tenant. */
function assertLinks(
  trx: Trx,
  tenant: TenantScope,
  input: { primary_contact_id?: string | null; company_id?: string | null },
) {
  return assertReferences(trx, tenant, [
    { field: 'primary_contact_id', id: input.primary_contact_id, kind: CONTACT },
    { field: 'company_id', id: input.company_id, kind: COMPANY },
  ]);
}

/** The columns of a new deal given by its input (all but where it is placed). */
function newDealFields(input: DealInput) {
  const customFields = input.custom_fields ?? {};
  checkCustomFields(customFields);
  return {
    id: newId(),
    name: input.name,
    amount: input.amount ?? null,
    currency: (input.currency ?? 'USD').toUpperCase(),
    status: input.status ?? 'open',
    owner_user_id: input.owner_user_id ?? null,
    primary_contact_id: input.primary_contact_id ?? null,
    company_id: input.company_id ?? null,
    expected_close_date: input.expected_close_date ?? null,
    tags: uniqueTags(input.tags ?? []),
    custom_fields: customFields,
    created_at: new Date(),
  };
}

/** Creates a deal in the caller's transaction and emits `deal.created`. */
export async function createDeal(trx: Trx, tenant: TenantScope, input: DealInput): Promise<Deal> {
  const fields = newDealFields(input);
  await assertLinks(trx, tenant, input);
  const placement = await placeDeal(trx, tenant, { pipelineId: input.pipeline_id, stageId: input.stage_id });
  const row = await insertDeal(trx, tenant, {
    ...fields,
    pipeline_id: placement.pipelineId,
    stage_id: placement.stageId,
  });
  const deal = toDeal(row);
  await emit(trx, tenant, 'deal.created', { ...deal });
  return deal;
}

/**
 * The create's common case, a deal in the default pipeline, as one statement committed on its own
 * (the edge runs it before `createDeal`'s transaction, without an Idempotency-Key: see
 * `runIdempotent`). Null when the request needs `createDeal`, having written nothing: a pipeline or
 * stage named, no default pipeline yet, or a contact or company that is not the tenant's (whose
 * error `createDeal` words).
 */
export async function createDealInOneStatement(
  db: Db,
  tenant: TenantScope,
  input: DealInput,
): Promise<Deal | null> {
  if (input.pipeline_id !== undefined || input.stage_id !== undefined) return null;
  const fields = newDealFields(input);
  const eventData: Omit<Deal, 'pipeline_id' | 'stage_id'> = {
    ...fields,
    archived_at: null,
    updated_at: fields.created_at,
  };
  const row = await createDealAtOnce(db, tenant, {
    ...fields,
    eventId: newEventId(),
    eventData: JSON.stringify(eventData),
  }).catch((error: unknown) => {
    if (referenceRefused('deals', error)) return undefined;
    throw error;
  });
  if (!row) return null;
  countEvent('deal.created');
  return toDeal(row);
}

export async function getDeal(db: Executor, tenant: TenantScope, id: string): Promise<Deal> {
  const row = await findDeal(db, tenant, id);
  if (!row) throw errors.notFound('Deal', id);
  return toDeal(row);
}

/** Deals by id, for other modules (list members); ids not of this tenant are left out. */
export async function getDeals(db: Executor, tenant: TenantScope, ids: string[]): Promise<Deal[]> {
  return (await findDeals(db, tenant, ids)).map(toDeal);
}

/** Deals as request bodies of other modules refer to them (`deal_id`). */
export const DEAL: Referable = { noun: 'a deal', existing: findDealIds };

/**
 * Applies a partial update under a row lock. A change of stage (directly, or by moving the deal to
 * another pipeline, which puts it in that pipeline's first stage) emits `deal.stage_changed`.
 */
export async function updateDeal(trx: Trx, tenant: TenantScope, id: string, patch: DealPatch): Promise<Deal> {
  const row = await lockDeal(trx, tenant, id);
  if (!row) throw errors.notFound('Deal', id);
  const current = toDeal(row);
  await assertLinks(trx, tenant, patch);
  const placement = await placeDeal(
    trx,
    tenant,
    { pipelineId: patch.pipeline_id, stageId: patch.stage_id },
    { pipelineId: row.pipeline_id, stageId: row.stage_id },
  );

  const changes: DealChanges = changedFields<Deal>(current, {
    name: patch.name,
    amount: patch.amount,
    currency: patch.currency?.toUpperCase(),
    pipeline_id: placement.pipelineId,
    stage_id: placement.stageId,
    status: patch.status,
    owner_user_id: patch.owner_user_id,
    primary_contact_id: patch.primary_contact_id,
    company_id: patch.company_id,
    expected_close_date: patch.expected_close_date,
    tags: patch.tags && uniqueTags(patch.tags),
  });
  if (patch.custom_fields !== undefined) {
    const merged: Record<string, unknown> = { ...current.custom_fields };
    for (const [key, value] of Object.entries(patch.custom_fields)) {
      if (value === null) delete merged[key];
      else merged[key] = value;
    }
    checkCustomFields(merged);
    if (JSON.stringify(merged) !== JSON.stringify(current.custom_fields))
      changes.custom_fields = JSON.stringify(merged);
  }
  if (patch.archived === true && !current.archived_at) changes.archived_at = new Date();
  if (patch.archived === false && current.archived_at) changes.archived_at = null;
  if (!hasChanges(changes)) return current;

  const deal = toDeal(await updateDealRow(trx, tenant, id, { ...changes, updated_at: new Date() }));
  if (deal.stage_id !== current.stage_id) {
    await emit(trx, tenant, 'deal.stage_changed', {
      ...deal,
      prior_stage_id: current.stage_id,
      new_stage_id: deal.stage_id,
      prior_pipeline_id: current.pipeline_id,
    });
  }
  return deal;
}

/** Archives the deal (kept, and still readable by id); archiving an archived deal changes nothing. */
export async function archiveDeal(trx: Trx, tenant: TenantScope, id: string): Promise<void> {
  if (!(await archiveDealRow(trx, tenant, id, new Date()))) throw errors.notFound('Deal', id);
}

/** `GET /crm/deals`: newest first. */
export async function searchDeals(
  db: Executor,
  tenant: TenantScope,
  filter: DealFilter,
  page: PageRequest<string>,
): Promise<Deal[]> {
  return (await listDeals(db, tenant, filter, page)).map(toDeal);
}
