import { Type } from '@sinclair/typebox';
import { pageQuerySchema } from '../../platform/http/pagination.ts';
import { Body, DateTime, Nullable, Query, Timestamp, Uuid } from '../../platform/http/schemas.ts';

const Status = Type.Union(
  [Type.Literal('open'), Type.Literal('in_progress'), Type.Literal('completed'), Type.Literal('cancelled')],
  { description: 'open, in_progress, completed or cancelled.' },
);
const Priority = Type.Union(
  [Type.Literal('low'), Type.Literal('normal'), Type.Literal('high'), Type.Literal('urgent')],
  { description: 'low, normal (the default), high or urgent.' },
);
const TaskType = Type.String({
  pattern: '^[a-z][a-z0-9_]{0,49}$',
  description: 'Free-form kind such as todo (the default), call, email, meeting or follow_up.',
});

export const TaskSchema = Type.Object(
  {
    id: Uuid(),
    title: Type.String(),
    body: Nullable(Type.String()),
    task_type: Type.String(),
    priority: Priority,
    assignee_user_id: Nullable(Uuid()),
    contact_id: Nullable(Uuid()),
    company_id: Nullable(Uuid()),
    deal_id: Nullable(Uuid()),
    due_at: Nullable(Timestamp()),
    status: Status,
    completed_at: Nullable(Timestamp('Set when the task was completed.')),
    reminded_at: Nullable(Timestamp('When task.due_soon was emitted for the current due time.')),
    created_at: Timestamp(),
    updated_at: Timestamp(),
  },
  { description: 'A to-do for a user, optionally linked to a contact, company or deal.' },
);

const taskFields = {
  title: Type.String({ minLength: 1, maxLength: 500 }),
  body: Type.Optional(Nullable(Type.String({ maxLength: 65_536 }))),
  task_type: Type.Optional(TaskType),
  priority: Type.Optional(Priority),
  assignee_user_id: Type.Optional(Nullable(Uuid())),
  contact_id: Type.Optional(Nullable(Uuid('A contact of this client.'))),
  company_id: Type.Optional(Nullable(Uuid('A company of this client.'))),
  deal_id: Type.Optional(Nullable(Uuid('A deal of this client.'))),
  due_at: Type.Optional(Nullable(DateTime('Kept to the millisecond.'))),
  status: Type.Optional(Status),
};

export const CreateTaskBody = Body(taskFields);

export const UpdateTaskBody = Body({
  ...taskFields,
  title: Type.Optional(taskFields.title),
  completed: Type.Optional(
    Type.Boolean({ description: 'true completes the task (status completed); false reopens it.' }),
  ),
});

export const ListTasksQuery = Query({
  ...pageQuerySchema,
  status: Type.Optional(Status),
  assignee_user_id: Type.Optional(Uuid()),
  due_before: Type.Optional(DateTime('Tasks due strictly before this time.')),
});
