import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { inTransaction } from '../../platform/db/transaction.ts';
import { runIdempotent } from '../../platform/http/idempotency.ts';
import { pageSchema, paginate } from '../../platform/http/pagination.ts';
import { errorResponses, IdempotencyHeaders, IdParams } from '../../platform/http/schemas.ts';
import { ActivitySchema, CreateActivityBody, TimelineQuery, UpdateActivityBody } from './schemas.ts';
import {
  createActivity,
  createActivityInOneStatement,
  deleteActivity,
  getActivity,
  searchActivities,
  timelineKeyset,
  updateActivity,
} from './service.ts';

const tags = ['crm'];
const ActivityEnvelope = Type.Object({ activity: ActivitySchema });

export const activityRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { db, config } = app.platform;

  app.get(
    '/crm/activities',
    {
      schema: {
        operationId: 'crm.activities.list',
        tags,
        summary: 'The activity timeline, newest performed_at first',
        querystring: TimelineQuery,
        response: { 200: pageSchema(ActivitySchema), ...errorResponses() },
      },
    },
    async (request) =>
      paginate(request, timelineKeyset, (page) => searchActivities(db, request.tenant, request.query, page)),
  );

  app.post(
    '/crm/activities',
    {
      schema: {
        operationId: 'crm.activities.create',
        tags,
        summary: 'Log a call, note, email, meeting, SMS or task activity',
        headers: IdempotencyHeaders,
        body: CreateActivityBody,
        response: { 201: ActivityEnvelope, ...errorResponses(409, 422) },
      },
    },
    async (request, reply) =>
      runIdempotent(
        db,
        request,
        reply,
        config.idempotencyTtlHours,
        async (trx) => ({
          status: 201,
          body: { activity: await createActivity(trx, request.tenant, request.body) },
        }),
        async (db) => {
          const activity = await createActivityInOneStatement(db, request.tenant, request.body);
          return activity && { status: 201, body: { activity } };
        },
      ),
  );

  app.get(
    '/crm/activities/:id',
    {
      schema: {
        operationId: 'crm.activities.get',
        tags,
        summary: 'Retrieve one activity',
        params: IdParams,
        response: { 200: ActivityEnvelope, ...errorResponses(404) },
      },
    },
    async (request) => ({ activity: await getActivity(db, request.tenant, request.params.id) }),
  );

  app.patch(
    '/crm/activities/:id',
    {
      schema: {
        operationId: 'crm.activities.update',
        tags,
        summary: 'Update an activity',
        params: IdParams,
        body: UpdateActivityBody,
        response: { 200: ActivityEnvelope, ...errorResponses(404) },
      },
    },
    async (request) => ({
      activity: await inTransaction(db, (trx) =>
        updateActivity(trx, request.tenant, request.params.id, request.body),
      ),
    }),
  );

  app.delete(
    '/crm/activities/:id',
    {
      schema: {
        operationId: 'crm.activities.delete',
        tags,
        summary: 'Delete an activity for good',
        params: IdParams,
        response: { 204: Type.Null(), ...errorResponses(404) },
      },
    },
    async (request, reply) => {
      await inTransaction(db, (trx) => deleteActivity(trx, request.tenant, request.params.id));
      reply.code(204).send(null);
    },
  );
};
