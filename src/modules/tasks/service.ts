import type { TenantScope } from '../../platform/auth/tenant.ts';
import { newId } from '../../platform/db/ids.ts';
import type { Db, Executor, Trx } from '../../platform/db/pool.ts';
import { emit } from '../../platform/events/emit.ts';
import { changedFields, hasChanges } from '../../platform/fields.ts';
import { errors } from '../../platform/http/errors.ts';
import type { PageRequest } from '../../platform/http/pagination.ts';
import { assertReferences, referenceRefused } from '../../platform/http/references.ts';
import { COMPANY } from '../companies/service.ts';
import { CONTACT } from '../contacts/service.ts';
import { DEAL } from '../deals/service.ts';
import {
  deleteTask as deleteTaskRow,
  findTask,
  insertTask,
  listTasks,
  lockTask,
  type TaskChanges,
  type TaskFilter,
  type TaskPriority,
  type TaskRow,
  type TaskStatus,
  updateTask as updateTaskRow,
} from './store.ts';

/** SQL pieces of what an AI gist reads (src/modules/ai/store.ts). */
export { openTasksGistJson } from './store.ts';

/** A task as the API returns it: its row without the tenant. */
export type Task = Omit<TaskRow, 'org_id' | 'client_id'>;

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
  const { org_id: _orgId, client_id: _clientId, ...task } = row;
  return task;
}

/** The contact, company and deal a task links to must be records of the tenant. */
function assertLinks(trx: Trx, tenant: TenantScope, input: TaskPatch) {
  return assertReferences(trx, tenant, [
    { field: 'contact_id', id: input.contact_id, kind: CONTACT },
    { field: 'company_id', id: input.company_id, kind: COMPANY },
    { field: 'deal_id', id: input.deal_id, kind: DEAL },
  ]);
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
export async function createTask(trx: Trx, tenant: TenantScope, input: TaskInput): Promise<Task> {
  await assertLinks(trx, tenant, input);
  const task = toTask(await insertTask(trx, tenant, newTaskRow(input)));
  if (task.status === 'completed') await emit(trx, tenant, 'task.completed', { ...task });
  return task;
}

/**
 * The create of a task that is not yet completed (so emits no event) as one INSERT committed on its
 * own (the edge runs it before `createTask`'s transaction, without an Idempotency-Key: see
 * `runIdempotent`). Null when the request needs `createTask`, having written nothing: a task created
 * completed, or a link that is not the tenant's (whose error `createTask` words).
 */
export async function createTaskInOneStatement(
  db: Db,
  tenant: TenantScope,
  input: TaskInput,
): Promise<Task | null> {
  if (input.status === 'completed') return null;
  try {
    return toTask(await insertTask(db, tenant, newTaskRow(input)));
  } catch (error) {
    if (referenceRefused('tasks', error)) return null;
    throw error;
  }
}

function newTaskRow(input: TaskInput) {
  const now = new Date();
  const status = input.status ?? 'open';
  return {
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
  };
}

export async function getTask(db: Executor, tenant: TenantScope, id: string): Promise<Task> {
  const row = await findTask(db, tenant, id);
  if (!row) throw errors.notFound('Task', id);
  return toTask(row);
}

/**
 * Applies a partial update under a row lock, so of concurrent PATCHes that complete a task exactly
 * one sees it open and emits `task.completed`. A new due time re-arms the due-soon reminder.
 */
export async function updateTask(trx: Trx, tenant: TenantScope, id: string, patch: TaskPatch): Promise<Task> {
  const row = await lockTask(trx, tenant, id);
  if (!row) throw errors.notFound('Task', id);
  const current = toTask(row);
  const status = requestedStatus(patch, current.status);
  await assertLinks(trx, tenant, patch);

  const now = new Date();
  const changes: TaskChanges = changedFields<Task>(current, {
    title: patch.title,
    body: patch.body,
    task_type: patch.task_type,
    priority: patch.priority,
    assignee_user_id: patch.assignee_user_id,
    contact_id: patch.contact_id,
    company_id: patch.company_id,
    deal_id: patch.deal_id,
    due_at: patch.due_at === undefined ? undefined : patch.due_at === null ? null : new Date(patch.due_at),
    status,
  });
  if (changes.due_at !== undefined) changes.reminded_at = null;
  if (changes.status !== undefined) changes.completed_at = changes.status === 'completed' ? now : null;
  if (!hasChanges(changes)) return current;

  const task = toTask(await updateTaskRow(trx, tenant, id, { ...changes, updated_at: now }));
  if (task.status === 'completed' && current.status !== 'completed') {
    await emit(trx, tenant, 'task.completed', { ...task });
  }
  return task;
}

export async function deleteTask(trx: Trx, tenant: TenantScope, id: string): Promise<void> {
  if (!(await deleteTaskRow(trx, tenant, id))) throw errors.notFound('Task', id);
}

/** `GET /crm/tasks`: newest first. */
export async function searchTasks(
  db: Executor,
  tenant: TenantScope,
  filter: TaskFilter,
  page: PageRequest<string>,
): Promise<Task[]> {
  return (await listTasks(db, tenant, filter, page)).map(toTask);
}
