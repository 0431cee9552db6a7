import type { Tenant } from '../../platform/auth/tenant.ts';
import { newId } from '../../platform/db/ids.ts';
import type { Db, Executor } from '../../platform/db/pool.ts';
import { errors } from '../../platform/http/errors.ts';
import { decodePageToken, type Page, pageScope, toPage } from '../../platform/http/pagination.ts';
import { assertReferences } from '../references/store.ts';
import {
  type ActivityChanges,
  type ActivityRow,
  type ActivityType,
  type Direction,
  deleteActivity as deleteActivityRow,
  findActivity,
  insertActivity,
  listTimeline,
  type TimelineFilter,
  updateActivity as updateActivityRow,
  type Visibility,
} from './store.ts';

export interface Activity {
  id: string;
  activity_type: ActivityType;
  direction: Direction | null;
  contact_id: string | null;
  company_id: string | null;
  deal_id: string | null;
  subject: string | null;
  body: string | null;
  outcome: string | null;
  duration_seconds: number | null;
  pinned: boolean;
  visibility: Visibility;
  performed_at: Date;
  created_at: Date;
  updated_at: Date;
}

export interface ActivityInput {
  activity_type: ActivityType;
  direction?: Direction | null;
  contact_id?: string | null;
  company_id?: string | null;
  deal_id?: string | null;
  subject?: string | null;
  body?: string | null;
  outcome?: string | null;
  duration_seconds?: number | null;
  pinned?: boolean;
  visibility?: Visibility;
  performed_at?: string;
}

export type ActivityPatch = Partial<Omit<ActivityInput, 'activity_type'>>;

export function toActivity(row: ActivityRow): Activity {
  return {
    id: row.id,
    activity_type: row.activity_type,
    direction: row.direction,
    contact_id: row.contact_id,
    company_id: row.company_id,
    deal_id: row.deal_id,
    subject: row.subject,
    body: row.body,
    outcome: row.outcome,
    duration_seconds: row.duration_seconds,
    pinned: row.pinned,
    visibility: row.visibility,
    performed_at: row.performed_at,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

function linkedRecords(input: ActivityPatch) {
  return [
    { field: 'contact_id', kind: 'contact' as const, id: input.contact_id },
    { field: 'company_id', kind: 'company' as const, id: input.company_id },
    { field: 'deal_id', kind: 'deal' as const, id: input.deal_id },
  ];
}

/** Timestamps are kept at millisecond precision, the precision of the timeline's page tokens. */
const toMillis = (value: string) => new Date(value);

/** Logs an activity in the caller's transaction. */
export async function createActivity(trx: Executor, tenant: Tenant, input: ActivityInput): Promise<Activity> {
  await assertReferences(trx, tenant, linkedRecords(input));
  const now = new Date();
  const row = await insertActivity(trx, tenant, {
    id: newId(),
    activity_type: input.activity_type,
    direction: input.direction ?? null,
    contact_id: input.contact_id ?? null,
    company_id: input.company_id ?? null,
    deal_id: input.deal_id ?? null,
    subject: input.subject ?? null,
    body: input.body ?? null,
    outcome: input.outcome ?? null,
    duration_seconds: input.duration_seconds ?? null,
    pinned: input.pinned ?? false,
    visibility: input.visibility ?? 'internal',
    performed_at: input.performed_at === undefined ? now : toMillis(input.performed_at),
    created_at: now,
    updated_at: now,
  });
  return toActivity(row);
}

export async function getActivity(db: Executor, tenant: Tenant, id: string): Promise<Activity> {
  const row = await findActivity(db, tenant, id);
  if (!row) throw errors.notFound('Activity', id);
  return toActivity(row);
}

export async function updateActivity(
  db: Db,
  tenant: Tenant,
  id: string,
  patch: ActivityPatch,
): Promise<Activity> {
  const { performed_at, ...rest } = patch;
  const changes: ActivityChanges = Object.fromEntries(
    Object.entries(rest).filter(([, value]) => value !== undefined),
  );
  if (performed_at !== undefined) changes.performed_at = toMillis(performed_at);
  if (Object.keys(changes).length === 0) return getActivity(db, tenant, id);
  const row = await db.transaction().execute(async (trx) => {
    if (!(await findActivity(trx, tenant, id))) throw errors.notFound('Activity', id);
    await assertReferences(trx, tenant, linkedRecords(patch));
    return updateActivityRow(trx, tenant, id, { ...changes, updated_at: new Date() });
  });
  if (!row) throw errors.notFound('Activity', id);
  return toActivity(row);
}

export async function deleteActivity(db: Db, tenant: Tenant, id: string): Promise<void> {
  if (!(await deleteActivityRow(db, tenant, id))) throw errors.notFound('Activity', id);
}

export async function listTimelinePage(
  db: Executor,
  tenant: Tenant,
  query: TimelineFilter & { limit: number; page_token?: string },
): Promise<Page<Activity>> {
  const { limit, page_token, ...filter } = query;
  // The token is bound to the filters it was issued for, in a fixed order.
  const filterKey = [filter.contact_id, filter.company_id, filter.deal_id, filter.activity_type].join(',');
  const scope = pageScope(`crm.activities.list:${filterKey}`, tenant);
  const cursor = decodePageToken(page_token, scope);
  const before =
    cursor && typeof cursor[0] === 'string' && typeof cursor[1] === 'string'
      ? { performedAt: new Date(cursor[0]), id: cursor[1] }
      : undefined;
  const rows = await listTimeline(db, tenant, filter, { before, limit });
  const page = toPage(rows, limit, scope, (row) => [row.performed_at.toISOString(), row.id]);
  return { ...page, data: page.data.map(toActivity) };
}
