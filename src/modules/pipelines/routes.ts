import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { inTransaction } from '../../platform/db/transaction.ts';
import { runIdempotent } from '../../platform/http/idempotency.ts';
import { byId, pageQuerySchema, pageSchema, paginate } from '../../platform/http/pagination.ts';
import { errorResponses, IdempotencyHeaders, IdParams, Query } from '../../platform/http/schemas.ts';
import { CreatePipelineBody, PipelineSchema } from './schemas.ts';
import { createPipeline, getPipeline, listPipelines } from './service.ts';

const tags = ['crm'];

export const pipelineRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { db, config } = app.platform;

  app.get(
    '/crm/pipelines',
    {
      schema: {
        operationId: 'crm.pipelines.list',
        tags,
        summary: 'List pipelines with their stages in order',
        querystring: Query(pageQuerySchema),
        response: { 200: pageSchema(PipelineSchema), ...errorResponses() },
      },
    },
    // The first page creates the default pipeline when the client has none yet: a write.
    async (request) =>
      inTransaction(db, (trx) => paginate(request, byId, (page) => listPipelines(trx, request.tenant, page))),
  );

  app.post(
    '/crm/pipelines',
    {
      schema: {
        operationId: 'crm.pipelines.create',
        tags,
        summary: 'Create a pipeline with its stages',
        headers: IdempotencyHeaders,
        body: CreatePipelineBody,
        response: { 201: Type.Object({ pipeline: PipelineSchema }), ...errorResponses(409, 422) },
      },
    },
    async (request, reply) =>
      runIdempotent(db, request, reply, config.idempotencyTtlHours, async (trx) => ({
        status: 201,
        body: { pipeline: await createPipeline(trx, request.tenant, request.body) },
      })),
  );

  app.get(
    '/crm/pipelines/:id',
    {
      schema: {
        operationId: 'crm.pipelines.get',
        tags,
        summary: 'Retrieve one pipeline with its stages',
        params: IdParams,
        response: { 200: Type.Object({ pipeline: PipelineSchema }), ...errorResponses(404) },
      },
    },
    async (request) => ({ pipeline: await getPipeline(db, request.tenant, request.params.id) }),
  );
};
