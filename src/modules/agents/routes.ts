import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { inTransaction } from '../../platform/db/transaction.ts';
import { runIdempotent } from '../../platform/http/idempotency.ts';
import { byId, pageSchema, paginate } from '../../platform/http/pagination.ts';
import { errorResponses, IdempotencyHeaders } from '../../platform/http/schemas.ts';
import { AgentParams, AgentSchema, CreateAgentBody, ListAgentsQuery, UpdateAgentBody } from './schemas.ts';
import { createAgent, getAgent, searchAgents, updateAgent } from './service.ts';

const tags = ['agents'];
const AgentEnvelope = Type.Object({ agent: AgentSchema });

export const agentRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { db, config } = app.platform;

  app.get(
    '/agents',
    {
      schema: {
        operationId: 'agents.list',
        tags,
        summary: 'List agents, newest first (archived ones only with state=archived)',
        querystring: ListAgentsQuery,
        response: { 200: pageSchema(AgentSchema), ...errorResponses() },
      },
    },
    async (request) =>
      paginate(request, byId, (page) => searchAgents(db, request.tenant, request.query, page)),
  );

  app.post(
    '/agents',
    {
      schema: {
        operationId: 'agents.create',
        tags,
        summary: 'Create an agent; a missing slug is derived from the name',
        headers: IdempotencyHeaders,
        body: CreateAgentBody,
        response: { 201: AgentEnvelope, ...errorResponses(409, 422) },
      },
    },
    async (request, reply) =>
      runIdempotent(db, request, reply, config.idempotencyTtlHours, async (trx) => ({
        status: 201,
        body: { agent: await createAgent(trx, request.tenant, request.body) },
      })),
  );

  app.get(
    '/agents/:idOrSlug',
    {
      schema: {
        operationId: 'agents.get',
        tags,
        summary: 'Retrieve an agent by id, slug or a past slug (410 when archived)',
        params: AgentParams,
        response: { 200: AgentEnvelope, ...errorResponses(404, 410) },
      },
    },
    async (request) => ({ agent: await getAgent(db, request.tenant, request.params.idOrSlug) }),
  );

  app.patch(
    '/agents/:idOrSlug',
    {
      schema: {
        operationId: 'agents.update',
        tags,
        summary: 'Update an agent: rename (the old slug stays an alias), change state, or edit its fields',
        params: AgentParams,
        body: UpdateAgentBody,
        response: { 200: AgentEnvelope, ...errorResponses(404, 409) },
      },
    },
    async (request) => ({
      agent: await inTransaction(db, (trx) =>
        updateAgent(trx, request.tenant, request.params.idOrSlug, request.body, config.agentSlugAliasTtlMs),
      ),
    }),
  );
};
