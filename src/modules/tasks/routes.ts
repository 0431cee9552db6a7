import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { inTransaction } from '../../platform/db/transaction.ts';
import { runIdempotent } from '../../platform/http/idempotency.ts';
import { byId, pageSchema, paginate } from '../../platform/http/pagination.ts';
import { errorResponses, IdempotencyHeaders, IdParams } from '../../platform/http/schemas.ts';
import { CreateTaskBody, ListTasksQuery, TaskSchema, UpdateTaskBody } from './schemas.ts';
import {
  createTask,
  createTaskInOneStatement,
  deleteTask,
  getTask,
  searchTasks,
  updateTask,
} from './service.ts';

const tags = ['crm'];
const TaskEnvelope = Type.Object({ task: TaskSchema });

export const taskRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { db, config } = app.platform;

  app.get(
    '/crm/tasks',
    {
      schema: {
        operationId: 'crm.tasks.list',
        tags,
        summary: 'List tasks, newest first',
        querystring: ListTasksQuery,
        response: { 200: pageSchema(TaskSchema), ...errorResponses() },
      },
    },
    async (request) =>
      paginate(request, byId, (page) => searchTasks(db, request.tenant, request.query, page)),
  );

  app.post(
    '/crm/tasks',
    {
      schema: {
        operationId: 'crm.tasks.create',
        tags,
        summary: 'Create a task',
        headers: IdempotencyHeaders,
        body: CreateTaskBody,
        response: { 201: TaskEnvelope, ...errorResponses(409, 422) },
      },
    },
    async (request, reply) =>
      runIdempotent(
        db,
        request,
        reply,
        config.idempotencyTtlHours,
        async (trx) => ({ status: 201, body: { task: await createTask(trx, request.tenant, request.body) } }),
        async (db) => {
          const task = await createTaskInOneStatement(db, request.tenant, request.body);
          return task && { status: 201, body: { task } };
        },
      ),
  );

  app.get(
    '/crm/tasks/:id',
    {
      schema: {
        operationId: 'crm.tasks.get',
        tags,
        summary: 'Retrieve one task',
        params: IdParams,
        response: { 200: TaskEnvelope, ...errorResponses(404) },
      },
    },
    async (request) => ({ task: await getTask(db, request.tenant, request.params.id) }),
  );

  app.patch(
    '/crm/tasks/:id',
    {
      schema: {
        operationId: 'crm.tasks.update',
        tags,
        summary: 'Update a task; completed=true completes it',
        params: IdParams,
        body: UpdateTaskBody,
        response: { 200: TaskEnvelope, ...errorResponses(404) },
      },
    },
    async (request) => ({
      task: await inTransaction(db, (trx) =>
        updateTask(trx, request.tenant, request.params.id, request.body),
      ),
    }),
  );

  app.delete(
    '/crm/tasks/:id',
    {
      schema: {
        operationId: 'crm.tasks.delete',
        tags,
        summary: 'Delete a task',
        params: IdParams,
        response: { 204: Type.Null(), ...errorResponses(404) },
      },
    },
    async (request, reply) => {
      await inTransaction(db, (trx) => deleteTask(trx, request.tenant, request.params.id));
      reply.code(204).send(null);
    },
  );
};
