import type { Tenant } from '../../platform/auth/tenant.ts';
import { newId } from '../../platform/db/ids.ts';
import type { Db, Executor } from '../../platform/db/pool.ts';
import { emit } from '../../platform/events/emit.ts';
import { errors } from '../../platform/http/errors.ts';
import { decodePageToken, type Page, pageScope, toPage } from '../../platform/http/pagination.ts';
import { assertReferences } from '../references/store.ts';
import {
  deleteTask as deleteTaskRow,
  findTask,
  findTaskForUpdate,
  insertTask,
  listTasks,
  type TaskChanges,
  type TaskFilter,
  type TaskPriority,
  type TaskRow,
  type TaskStatus,
  updateTask as updateTaskRow,
} from './store.ts';

export interface Task {
  id: string;
  title: string;
  body: string | null;
  task_type: string;
  priority: TaskPriority;
  assignee_user_id: string | null;
  contact_id: string | null;
  company_id: string | null;
  deal_id: string | null;
  due_at: Date | null;
  status: TaskStatus;
  completed_at: Date | null;
  reminded_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export interface TaskInput {
  title: string;
  body?: string | null;
  task_type?: string;
  priority?: TaskPriority;
  assignee_user_id?: string | null;
  contact_id?: string | null;
  company_id?: string | null;
  deal_id?: string | null;
  due_at?: string | null;
  status?: TaskStatus;
}

export interface TaskPatch extends Partial<TaskInput> {
  /** true completes the task; false reopens a completed one. */
  completed?: boolean;
}

export function toTask(row: TaskRow): Task {
  return {
    id: row.id,
    title: row.title,
    body: row.body,
    task_type: row.task_type,
    priority: row.priority,
    assignee_user_id: row.assignee_user_id,
    contact_id: row.contact_id,
    company_id: row.company_id,
    deal_id: row.deal_id,
    due_at: row.due_at,
    status: row.status,
    completed_at: row.completed_at,
    reminded_at: row.reminded_at,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

function linkedRecords(input: TaskPatch) {
  return [
    { field: 'contact_id', kind: 'contact' as const, id: input.contact_id },
    { field: 'company_id', kind: 'company' as const, id: input.company_id },
    { field: 'deal_id', kind: 'deal' as const, id: input.deal_id },
  ];
}

/** The status a PATCH asks for: `completed` is shorthand for a status, and may not contradict one. */
function requestedStatus(patch: TaskPatch, current: TaskStatus): TaskStatus | undefined {
  if (patch.completed === undefined) return patch.status;
  if (patch.completed && patch.status !== undefined && patch.status !== 'completed') {
    throw errors.invalidField('completed', `true contradicts status ${patch.status}`);
  }
  if (!patch.completed && patch.status === 'completed') {
    throw errors.invalidField('completed', 'false contradicts status completed');
  }
  if (patch.completed) return 'completed';
  if (patch.status !== undefined) return patch.status;
  return current === 'completed' ? 'open' : undefined;
}

/** Creates a task in the caller's transaction; one created as completed emits `task.completed`. */
export async function createTask(trx: Executor, tenant: Tenant, input: TaskInput): Promise<Task> {
  await assertReferences(trx, tenant, linkedRecords(input));
  const now = new Date();
  const status = input.status ?? 'open';
  const row = await insertTask(trx, tenant, {
    id: newId(),
    title: input.title,
    body: input.body ?? null,
    task_type: input.task_type ?? 'todo',
    priority: input.priority ?? 'normal',
    assignee_user_id: input.assignee_user_id ?? null,
    contact_id: input.contact_id ?? null,
    company_id: input.company_id ?? null,
    deal_id: input.deal_id ?? null,
    due_at: input.due_at ? new Date(input.due_at) : null,
    status,
    completed_at: status === 'completed' ? now : null,
    created_at: now,
    updated_at: now,
  });
  const task = toTask(row);
  if (task.status === 'completed') await emit(trx, tenant, 'task.completed', { ...task });
  return task;
}

export async function getTask(db: Executor, tenant: Tenant, id: string): Promise<Task> {
  const row = await findTask(db, tenant, id);
  if (!row) throw errors.notFound('Task', id);
  return toTask(row);
}

/**
 * Applies a partial update under a row lock, so of concurrent PATCHes that complete a task exactly
 * one sees it open and emits `task.completed`. A new due time re-arms the due-soon reminder.
 */
export async function updateTask(db: Db, tenant: Tenant, id: string, patch: TaskPatch): Promise<Task> {
  return db.transaction().execute(async (trx) => {
    const row = await findTaskForUpdate(trx, tenant, id);
    if (!row) throw errors.notFound('Task', id);
    const current = toTask(row);
    const status = requestedStatus(patch, current.status);
    await assertReferences(trx, tenant, linkedRecords(patch));

    const changes: TaskChanges = {};
    const wanted: Partial<Task> = {
      title: patch.title,
      body: patch.body,
      task_type: patch.task_type,
      priority: patch.priority,
      assignee_user_id: patch.assignee_user_id,
      contact_id: patch.contact_id,
      company_id: patch.company_id,
      deal_id: patch.deal_id,
    };
    for (const [field, value] of Object.entries(wanted) as [keyof TaskChanges & keyof Task, unknown][]) {
      if (value !== undefined && value !== current[field]) Object.assign(changes, { [field]: value });
    }
    if (patch.due_at !== undefined) {
      const dueAt = patch.due_at === null ? null : new Date(patch.due_at);
      if (dueAt?.getTime() !== current.due_at?.getTime()) {
        changes.due_at = dueAt;
        changes.reminded_at = null;
      }
    }
    const now = new Date();
    if (status !== undefined && status !== current.status) {
      changes.status = status;
      changes.completed_at = status === 'completed' ? now : null;
    }
    if (Object.keys(changes).length === 0) return current;

    const task = toTask(await updateTaskRow(trx, tenant, id, { ...changes, updated_at: now }));
    if (task.status === 'completed' && current.status !== 'completed') {
      await emit(trx, tenant, 'task.completed', { ...task });
    }
    return task;
  });
}

export async function deleteTask(db: Db, tenant: Tenant, id: string): Promise<void> {
  if (!(await deleteTaskRow(db, tenant, id))) throw errors.notFound('Task', id);
}

export async function listTasksPage(
  db: Executor,
  tenant: Tenant,
  query: TaskFilter & { limit: number; page_token?: string },
): Promise<Page<Task>> {
  const { limit, page_token, ...filter } = query;
  // The token is bound to the filters it was issued for, in a fixed order.
  const filterKey = [filter.status, filter.assignee_user_id, filter.due_before].join(',');
  const scope = pageScope(`crm.tasks.list:${filterKey}`, tenant);
  const cursor = decodePageToken(page_token, scope);
  const rows = await listTasks(db, tenant, filter, { before: cursor?.[0] as string | undefined, limit });
  const page = toPage(rows, limit, scope, (row) => [row.id]);
  return { ...page, data: page.data.map(toTask) };
}
