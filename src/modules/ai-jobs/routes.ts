import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { runIdempotent } from '../../platform/http/idempotency.ts';
import { byId, pageSchema, paginate } from '../../platform/http/pagination.ts';
import { errorResponses, IdempotencyHeaders, IdParams } from '../../platform/http/schemas.ts';
import { AiJobEnvelope, AiJobSchema, EnrichBody, ListAiJobsQuery, PrecallBriefBody } from './schemas.ts';
import { getJob, type JobRequest, requestJob, searchJobs } from './service.ts';

const tags = ['ai'];

export const aiJobRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { db, config } = app.platform;
  const accept = (
    request: Parameters<typeof runIdempotent>[1],
    reply: Parameters<typeof runIdempotent>[2],
    job: JobRequest,
  ) =>
    runIdempotent(db, request, reply, config.idempotencyTtlHours, async (trx) => ({
      status: 202,
      body: { job: await requestJob(trx, request.tenant, job, config.aiJobFuelCost) },
    }));

  app.post(
    '/ai/contacts/:id/precall-brief',
    {
      schema: {
        operationId: 'ai.contacts.precall_brief',
        tags,
        summary: 'Ask for a pre-call brief of a contact (1 FUEL, refunded if it fails)',
        description:
          'Answers 202 with the job; `ai.precall_brief.completed` carries it with its brief when written, `ai.job.failed` when it failed.',
        params: IdParams,
        headers: IdempotencyHeaders,
        body: PrecallBriefBody,
        response: { 202: AiJobEnvelope, ...errorResponses(402, 404, 409, 422) },
      },
    },
    async (request, reply) =>
      accept(request, reply, {
        kind: 'precall_brief',
        subject: { type: 'contact', id: request.params.id },
        input: { purpose: request.body?.purpose ?? null },
        metadata: request.body?.metadata ?? {},
      }),
  );

  for (const subject of [
    { path: 'contacts', type: 'contact', noun: 'contact' },
    { path: 'companies', type: 'company', noun: 'company' },
  ] as const) {
    app.post(
      `/ai/${subject.path}/:id/enrich`,
      {
        schema: {
          operationId: `ai.${subject.path}.enrich`,
          tags,
          summary: `Ask for values for a ${subject.noun}'s empty fields (1 FUEL, refunded if it fails)`,
          description:
            'Answers 202 with the job; `ai.lead_enrichment.completed` carries its proposals and what was applied, `ai.job.failed` a failure.',
          params: IdParams,
          headers: IdempotencyHeaders,
          body: EnrichBody,
          response: { 202: AiJobEnvelope, ...errorResponses(402, 404, 409, 422) },
        },
      },
      async (request, reply) =>
        accept(request, reply, {
          kind: 'lead_enrichment',
          subject: { type: subject.type, id: request.params.id },
          input: { apply: request.body?.apply ?? false },
          metadata: request.body?.metadata ?? {},
        }),
    );
  }

  app.get(
    '/ai/jobs',
    {
      schema: {
        operationId: 'ai.jobs.list',
        tags,
        summary: 'List AI jobs (pre-call briefs, lead enrichments), newest first',
        querystring: ListAiJobsQuery,
        response: { 200: pageSchema(AiJobSchema), ...errorResponses() },
      },
    },
    async (request) => paginate(request, byId, (page) => searchJobs(db, request.tenant, request.query, page)),
  );

  app.get(
    '/ai/jobs/:id',
    {
      schema: {
        operationId: 'ai.jobs.get',
        tags,
        summary: 'Retrieve one AI job with its result',
        params: IdParams,
        response: { 200: AiJobEnvelope, ...errorResponses(404) },
      },
    },
    async (request) => ({ job: await getJob(db, request.tenant, request.params.id) }),
  );
};
