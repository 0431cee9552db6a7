import { type Generated, type Insertable, type Selectable, sql, type Updateable } from 'kysely';
import type { TenantScope } from '../../platform/auth/tenant.ts';
import { isoText } from '../../platform/db/json-text.ts';
import type { Executor, Trx } from '../../platform/db/pool.ts';
import type { Timestamp } from '../../platform/db/schema.ts';
import { whereOwned, whereTenant } from '../../platform/db/tenant-rows.ts';
import type { PageRequest } from '../../platform/http/pagination.ts';

declare module '../../platform/db/schema.ts' {
  interface Database {
    activities: ActivitiesTable;
  }
}

export const ACTIVITY_TYPES = ['call', 'note', 'email', 'meeting', 'sms', 'task'] as const;
export type ActivityType = (typeof ACTIVITY_TYPES)[number];
export type Direction = 'inbound' | 'outbound' | 'internal';
export type Visibility = 'internal' | 'public';

export interface ActivitiesTable {
  id: string;
  org_id: string;
  client_id: string;
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
  performed_at: Timestamp;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

export type ActivityRow = Selectable<ActivitiesTable>;
export type ActivityChanges = Omit<Updateable<ActivitiesTable>, 'id' | 'org_id' | 'client_id' | 'created_at'>;

export interface TimelineFilter {
  contact_id?: string;
  company_id?: string;
  deal_id?: string;
  activity_type?: ActivityType;
}

function activitiesOf(db: Executor, tenant: TenantScope) {
  return db.selectFrom('activities').selectAll().$call(whereTenant(tenant));
}

export function insertActivity(
  db: Executor,
  tenant: TenantScope,
  activity: Omit<Insertable<ActivitiesTable>, 'org_id' | 'client_id'>,
) {
  return db
    .insertInto('activities')
    .values({ ...activity, org_id: tenant.orgId, client_id: tenant.clientId })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export function findActivity(db: Executor, tenant: TenantScope, id: string) {
  return activitiesOf(db, tenant).where('id', '=', id).executeTakeFirst();
}

export function updateActivity(trx: Trx, tenant: TenantScope, id: string, changes: ActivityChanges) {
  return trx
    .updateTable('activities')
    .set(changes)
    .$call(whereOwned(tenant, id))
    .returningAll()
    .executeTakeFirst();
}

export function deleteActivity(trx: Trx, tenant: TenantScope, id: string) {
  return trx.deleteFrom('activities').$call(whereOwned(tenant, id)).returning('id').executeTakeFirst();
}

/** Where a page of the timeline starts: the last row's `performed_at` and id. */
export interface TimelineCursor {
  performedAt: Date;
  id: string;
}

/** The timeline: newest `performed_at` first, keyset on (performed_at, id). */
export function listTimeline(
  db: Executor,
  tenant: TenantScope,
  filter: TimelineFilter,
  page: PageRequest<TimelineCursor>,
) {
  let query = activitiesOf(db, tenant);
  if (filter.contact_id) query = query.where('contact_id', '=', filter.contact_id);
  if (filter.company_id) query = query.where('company_id', '=', filter.company_id);
  if (filter.deal_id) query = query.where('deal_id', '=', filter.deal_id);
  if (filter.activity_type) query = query.where('activity_type', '=', filter.activity_type);
  const after = page.after;
  if (after) {
    query = query.where(({ eb, refTuple, tuple }) =>
      eb(refTuple('performed_at', 'id'), '<', tuple(after.performedAt, after.id)),
    );
  }
  return query.orderBy('performed_at', 'desc').orderBy('id', 'desc').limit(page.limit).execute();
}

/**
 * The `limit` newest activities of a contact, company or deal as an AI gist reads them, as a jsonb
 * array (see src/modules/ai/store.ts).
 */
export function recentActivitiesGistJson(
  orgId: unknown,
  clientId: unknown,
  of: 'contact_id' | 'company_id' | 'deal_id',
  id: unknown,
  limit: number,
) {
  return sql<unknown>`coalesce((SELECT jsonb_agg(jsonb_build_object('activity_type', a.activity_type,
      'direction', a.direction, 'subject', a.subject, 'body', a.body, 'outcome', a.outcome,
      'performed_at', ${isoText(sql.ref('a.performed_at'))}) ORDER BY a.performed_at DESC, a.id DESC)
    FROM (SELECT * FROM activities a
          WHERE a.org_id = ${orgId} AND a.client_id = ${clientId} AND ${sql.ref(`a.${of}`)} = ${id}
          ORDER BY a.performed_at DESC, a.id DESC LIMIT ${sql.lit(limit)}) a), '[]'::jsonb)`;
}
