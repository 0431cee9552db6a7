import type { Tenant } from '../../platform/auth/tenant.ts';
import { newId } from '../../platform/db/ids.ts';
import type { Db, Executor } from '../../platform/db/pool.ts';
import { emit } from '../../platform/events/emit.ts';
import { errors } from '../../platform/http/errors.ts';
import { decodePageToken, type Page, pageScope, toPage } from '../../platform/http/pagination.ts';
import { placeDeal } from '../pipelines/service.ts';
import { assertReferences } from '../references/store.ts';
import {
  archiveDeal as archiveDealRow,
  type DealChanges,
  type DealFilter,
  type DealRow,
  type DealStatus,
  findDeal,
  findDealForUpdate,
  insertDeal,
  listDeals,
  updateDeal as updateDealRow,
} from './store.ts';

/** Serialized custom fields above this are refused: they ride along in every read and event. */
export const MAX_CUSTOM_FIELDS_BYTES = 16_384;

export interface Deal {
  id: string;
  name: string;
  amount: number | null;
  currency: string;
  pipeline_id: string;
  stage_id: string;
  status: DealStatus;
  owner_user_id: string | null;
  primary_contact_id: string | null;
  company_id: string | null;
  expected_close_date: string | null;
  tags: string[];
  custom_fields: Record<string, unknown>;
  archived_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

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
  return {
    id: row.id,
    name: row.name,
    amount: row.amount,
    currency: row.currency,
    pipeline_id: row.pipeline_id,
    stage_id: row.stage_id,
    status: row.status,
    owner_user_id: row.owner_user_id,
    primary_contact_id: row.primary_contact_id,
    company_id: row.company_id,
    expected_close_date: calendarDate(row.expected_close_date),
    tags: row.tags,
    custom_fields: row.custom_fields,
    archived_at: row.archived_at,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

function checkCustomFields(fields: Record<string, unknown>): void {
  if (Buffer.byteLength(JSON.stringify(fields)) > MAX_CUSTOM_FIELDS_BYTES) {
    throw errors.invalidField('custom_fields', `must serialize to at most ${MAX_CUSTOM_FIELDS_BYTES} bytes`);
  }
}

const uniqueTags = (tags: string[]) => [...new Set(tags)];

function linkedRecords(input: { primary_contact_id?: string | null; company_id?: string | null }) {
  return [
    { field: 'primary_contact_id', kind: 'contact' as const, id: input.primary_contact_id },
    { field: 'company_id', kind: 'company' as const, id: input.company_id },
  ];
}

/** Creates a deal in the caller's transaction and emits `deal.created`. */
export async function createDeal(trx: Executor, tenant: Tenant, input: DealInput): Promise<Deal> {
  const customFields = input.custom_fields ?? {};
  checkCustomFields(customFields);
  await assertReferences(trx, tenant, linkedRecords(input));
  const placement = await placeDeal(trx, tenant, { pipelineId: input.pipeline_id, stageId: input.stage_id });
  const row = await insertDeal(trx, tenant, {
    id: newId(),
    name: input.name,
    amount: input.amount ?? null,
    currency: (input.currency ?? 'USD').toUpperCase(),
    pipeline_id: placement.pipelineId,
    stage_id: placement.stageId,
    status: input.status ?? 'open',
    owner_user_id: input.owner_user_id ?? null,
    primary_contact_id: input.primary_contact_id ?? null,
    company_id: input.company_id ?? null,
    expected_close_date: input.expected_close_date ?? null,
    tags: uniqueTags(input.tags ?? []),
    custom_fields: customFields,
    created_at: new Date(),
  });
  const deal = toDeal(row);
  await emit(trx, tenant, 'deal.created', { ...deal });
  return deal;
}

export async function getDeal(db: Executor, tenant: Tenant, id: string): Promise<Deal> {
  const row = await findDeal(db, tenant, id);
  if (!row) throw errors.notFound('Deal', id);
  return toDeal(row);
}

/**
 * Applies a partial update under a row lock. A change of stage (directly, or by moving the deal to
 * another pipeline, which puts it in that pipeline's first stage) emits `deal.stage_changed`.
 */
export async function updateDeal(db: Db, tenant: Tenant, id: string, patch: DealPatch): Promise<Deal> {
  return db.transaction().execute(async (trx) => {
    const row = await findDealForUpdate(trx, tenant, id);
    if (!row) throw errors.notFound('Deal', id);
    const current = toDeal(row);
    await assertReferences(trx, tenant, linkedRecords(patch));
    const placement = await placeDeal(
      trx,
      tenant,
      { pipelineId: patch.pipeline_id, stageId: patch.stage_id },
      { pipelineId: row.pipeline_id, stageId: row.stage_id },
    );

    const changes: DealChanges = {};
    const wanted: Partial<Deal> = {
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
    };
    for (const [field, value] of Object.entries(wanted) as [keyof DealChanges & keyof Deal, unknown][]) {
      if (value !== undefined && value !== current[field]) Object.assign(changes, { [field]: value });
    }
    if (patch.tags !== undefined) {
      const tags = uniqueTags(patch.tags);
      if (tags.join('\0') !== current.tags.join('\0') || tags.length !== current.tags.length)
        changes.tags = tags;
    }
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
    if (Object.keys(changes).length === 0) return current;

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
  });
}

/** Archives the deal (kept, and still readable by id); archiving an archived deal changes nothing. */
export async function archiveDeal(db: Db, tenant: Tenant, id: string): Promise<void> {
  if (!(await archiveDealRow(db, tenant, id, new Date()))) throw errors.notFound('Deal', id);
}

export async function listDealsPage(
  db: Executor,
  tenant: Tenant,
  query: DealFilter & { limit: number; page_token?: string },
): Promise<Page<Deal>> {
  const { limit, page_token, ...filter } = query;
  // The token is bound to the filters it was issued for, in a fixed order.
  const filterKey = [
    filter.pipeline_id,
    filter.stage_id,
    filter.status,
    filter.company_id,
    filter.contact_id,
    filter.owner_user_id,
    filter.include_archived,
  ].join(',');
  const scope = pageScope(`crm.deals.list:${filterKey}`, tenant);
  const cursor = decodePageToken(page_token, scope);
  const rows = await listDeals(db, tenant, filter, { before: cursor?.[0] as string | undefined, limit });
  const page = toPage(rows, limit, scope, (row) => [row.id]);
  return { ...page, data: page.data.map(toDeal) };
}
