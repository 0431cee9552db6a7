import type { TenantScope } from '../../platform/auth/tenant.ts';
import { newId } from '../../platform/db/ids.ts';
import type { Db, Executor, Trx } from '../../platform/db/pool.ts';
import { errors } from '../../platform/http/errors.ts';
import type { Keyset, PageRequest } from '../../platform/http/pagination.ts';
import { assertReferences, referenceRefused } from '../../platform/http/references.ts';
import { COMPANY } from '../companies/service.ts';
import { CONTACT } from '../contacts/service.ts';
import { DEAL } from '../deals/service.ts';
import {
  type ActivityChanges,
  type ActivityRow,
  type ActivityType,
  type Direction,
  deleteActivity as deleteActivityRow,
  findActivity,
  insertActivity,
  listTimeline,
  type TimelineCursor,
  type TimelineFilter,
  updateActivity as updateActivityRow,
  type Visibility,
} from './store.ts';

/** SQL pieces of what an AI gist reads (src/modules/ai/store.ts). */
export { recentActivitiesGistJson } from './store.ts';

/** An activity as the API returns it: its row without the tenant. */
export type Activity = Omit<ActivityRow, 'org_id' | 'client_id'>;

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
  const { org_id: _orgId, client_id: _clientId, ...activity } = row;
  return activity;
}

/** The contact, company and deal an activity links to must be records of the tenant. */
function assertLinks(trx: Trx, tenant: TenantScope, input: ActivityPatch) {
  return assertReferences(trx, tenant, [
    { field: 'contact_id', id: input.contact_id, kind: CONTACT },
    { field: 'company_id', id: input.company_id, kind: COMPANY },
    { field: 'deal_id', id: input.deal_id, kind: DEAL },
  ]);
}

/** A time given as text, as stored: at millisecond precision, the precision of the timeline's page tokens. */
const parseInstant = (value: string) => new Date(value);

/** The timeline pages newest `performed_at` first; the cursor is the last row's time and id. */
export const timelineKeyset: Keyset<Activity, TimelineCursor> = {
  key: (activity) => [activity.performed_at.toISOString(), activity.id],
  cursor: ([performedAt, id]) =>
    typeof performedAt === 'string' && typeof id === 'string'
      ? { performedAt: new Date(performedAt), id }
      : undefined,
};

/**
 * Logs an activity in the caller's transaction. `linksRead`: the caller has read the linked records
 * for this tenant in the same transaction (a sequence step, its enrollment's contact), so they are not
 * looked up again; the tenant-scoped foreign keys still hold either way.
 */
export async function createActivity(
  trx: Trx,
  tenant: TenantScope,
  input: ActivityInput,
  options: { linksRead?: boolean } = {},
): Promise<Activity> {
  if (!options.linksRead) await assertLinks(trx, tenant, input);
  return toActivity(await insertActivity(trx, tenant, newActivityRow(input)));
}

/**
 * The create as one INSERT committed on its own (an activity emits no event; the edge runs it before
 * `createActivity`'s transaction, without an Idempotency-Key: see `runIdempotent`). Null when a link
 * is not the tenant's, having written nothing: `createActivity` words that error.
 */
export async function createActivityInOneStatement(
  db: Db,
  tenant: TenantScope,
  input: ActivityInput,
): Promise<Activity | null> {
  try {
    return toActivity(await insertActivity(db, tenant, newActivityRow(input)));
  } catch (error) {
    if (referenceRefused('activities', error)) return null;
    throw error;
  }
}

function newActivityRow(input: ActivityInput) {
  const now = new Date();
  return {
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
    performed_at: input.performed_at === undefined ? now : parseInstant(input.performed_at),
    created_at: now,
    updated_at: now,
  };
}

export async function getActivity(db: Executor, tenant: TenantScope, id: string): Promise<Activity> {
  const row = await findActivity(db, tenant, id);
  if (!row) throw errors.notFound('Activity', id);
  return toActivity(row);
}

export async function updateActivity(
  trx: Trx,
  tenant: TenantScope,
  id: string,
  patch: ActivityPatch,
): Promise<Activity> {
  const { performed_at, ...rest } = patch;
  const changes: ActivityChanges = Object.fromEntries(
    Object.entries(rest).filter(([, value]) => value !== undefined),
  );
  if (performed_at !== undefined) changes.performed_at = parseInstant(performed_at);
  if (Object.keys(changes).length === 0) return getActivity(trx, tenant, id);
  if (!(await findActivity(trx, tenant, id))) throw errors.notFound('Activity', id);
  await assertLinks(trx, tenant, patch);
  const row = await updateActivityRow(trx, tenant, id, { ...changes, updated_at: new Date() });
  if (!row) throw errors.notFound('Activity', id);
  return toActivity(row);
}

export async function deleteActivity(trx: Trx, tenant: TenantScope, id: string): Promise<void> {
  if (!(await deleteActivityRow(trx, tenant, id))) throw errors.notFound('Activity', id);
}

/** `GET /crm/activities`: the timeline, newest `performed_at` first. */
export async function searchActivities(
  db: Executor,
  tenant: TenantScope,
  filter: TimelineFilter,
  page: PageRequest<TimelineCursor>,
): Promise<Activity[]> {
  return (await listTimeline(db, tenant, filter, page)).map(toActivity);
}
