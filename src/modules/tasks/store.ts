import { type Generated, type Insertable, type Selectable, sql, type Updateable } from 'kysely';
import type { TenantScope } from '../../platform/auth/tenant.ts';
import { isoText } from '../../platform/db/json-text.ts';
import type { Executor, Trx } from '../../platform/db/pool.ts';
import type { NullableTimestamp } from '../../platform/db/schema.ts';
import { whereOwned, whereTenant } from '../../platform/db/tenant-rows.ts';
import type { PageRequest } from '../../platform/http/pagination.ts';

declare module '../../platform/db/schema.ts' {
  interface Database {
    tasks: TasksTable;
  }
}

export type TaskStatus = 'open' | 'in_progress' | 'completed' | 'cancelled';
export type TaskPriority = 'low' | 'normal' | 'high' | 'urgent';

export interface TasksTable {
  id: string;
  org_id: string;
  client_id: string;
  title: string;
  body: string | null;
  task_type: string;
  priority: TaskPriority;
  assignee_user_id: string | null;
  contact_id: string | null;
  company_id: string | null;
  deal_id: string | null;
  due_at: NullableTimestamp;
  status: TaskStatus;
  completed_at: NullableTimestamp;
  reminded_at: NullableTimestamp;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

export type TaskRow = Selectable<TasksTable>;
export type TaskChanges = Omit<Updateable<TasksTable>, 'id' | 'org_id' | 'client_id' | 'created_at'>;

export interface TaskFilter {
  status?: TaskStatus;
  assignee_user_id?: string;
  due_before?: string;
}

function tasksOf(db: Executor, tenant: TenantScope) {
  return db.selectFrom('tasks').selectAll().$call(whereTenant(tenant));
}

export function insertTask(
  db: Executor,
  tenant: TenantScope,
  task: Omit<Insertable<TasksTable>, 'org_id' | 'client_id'>,
) {
  return db
    .insertInto('tasks')
    .values({ ...task, org_id: tenant.orgId, client_id: tenant.clientId })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export function findTask(db: Executor, tenant: TenantScope, id: string) {
  return tasksOf(db, tenant).where('id', '=', id).executeTakeFirst();
}

/** Reads and locks the task for the rest of the transaction: concurrent updates apply one after another. */
export function lockTask(trx: Trx, tenant: TenantScope, id: string) {
  return tasksOf(trx, tenant).where('id', '=', id).forUpdate().executeTakeFirst();
}

export function updateTask(trx: Trx, tenant: TenantScope, id: string, changes: TaskChanges) {
  return trx
    .updateTable('tasks')
    .set(changes)
    .$call(whereOwned(tenant, id))
    .returningAll()
    .executeTakeFirstOrThrow();
}

export function deleteTask(trx: Trx, tenant: TenantScope, id: string) {
  return trx.deleteFrom('tasks').$call(whereOwned(tenant, id)).returning('id').executeTakeFirst();
}

/** Tasks newest first. */
export function listTasks(db: Executor, tenant: TenantScope, filter: TaskFilter, page: PageRequest<string>) {
  let query = tasksOf(db, tenant);
  if (filter.status) query = query.where('status', '=', filter.status);
  if (filter.assignee_user_id) query = query.where('assignee_user_id', '=', filter.assignee_user_id);
  if (filter.due_before) query = query.where('due_at', '<', new Date(filter.due_before));
  if (page.after !== undefined) query = query.where('id', '<', page.after);
  return query.orderBy('id', 'desc').limit(page.limit).execute();
}

/**
 * Claims up to `batch` open tasks, of every tenant, whose due time is between `from` and `until` and
 * that were not reminded yet: marks them reminded and returns them. The predicate repeats the partial
 * index `tasks_due_unreminded`; SKIP LOCKED lets several workers claim side by side.
 */
export function claimDueTasks(trx: Trx, window: { from: Date; until: Date }, now: Date, batch: number) {
  return trx
    .updateTable('tasks')
    .set({ reminded_at: now })
    .where('id', 'in', (eb) =>
      eb
        .selectFrom('tasks')
        .select('id')
        .where('reminded_at', 'is', null)
        .where('status', 'in', ['open', 'in_progress'])
        .where('due_at', 'is not', null)
        .where('due_at', '>', window.from)
        .where('due_at', '<=', window.until)
        .orderBy('due_at')
        .limit(batch)
        .forUpdate()
        .skipLocked(),
    )
    .where('reminded_at', 'is', null)
    .returningAll()
    .execute();
}

/**
 * Up to `limit` open and in-progress tasks about a contact, company or deal, newest first, as an AI
 * gist reads them, as a jsonb array (see src/modules/ai/store.ts).
 */
export function openTasksGistJson(
  orgId: unknown,
  clientId: unknown,
  of: 'contact_id' | 'company_id' | 'deal_id',
  id: unknown,
  limit: number,
) {
  return sql<unknown>`coalesce((SELECT jsonb_agg(jsonb_build_object('title', t.title, 'task_type', t.task_type,
      'priority', t.priority, 'status', t.status, 'due_at', ${isoText(sql.ref('t.due_at'))}) ORDER BY t.id DESC)
    FROM (SELECT * FROM tasks t
          WHERE t.org_id = ${orgId} AND t.client_id = ${clientId} AND ${sql.ref(`t.${of}`)} = ${id}
            AND t.status IN ('open', 'in_progress')
          ORDER BY t.id DESC LIMIT ${sql.lit(limit)}) t), '[]'::jsonb)`;
}
