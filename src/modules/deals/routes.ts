import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { inTransaction } from '../../platform/db/transaction.ts';
import { runIdempotent } from '../../platform/http/idempotency.ts';
import { byId, pageSchema, paginate } from '../../platform/http/pagination.ts';
import { errorResponses, IdempotencyHeaders, IdParams } from '../../platform/http/schemas.ts';
import { CreateDealBody, DealSchema, ListDealsQuery, UpdateDealBody } from './schemas.ts';
import {
  archiveDeal,
  createDeal,
  createDealInOneStatement,
  getDeal,
  searchDeals,
  updateDeal,
} from './service.ts';

const tags = ['crm'];
const DealEnvelope = Type.Object({ deal: DealSchema });

export const dealRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { db, config } = app.platform;

  app.get(
    '/crm/deals',
    {
      schema: {
        operationId: 'crm.deals.list',
        tags,
        summary: 'List deals, newest first',
        querystring: ListDealsQuery,
        response: { 200: pageSchema(DealSchema), ...errorResponses() },
      },
    },
    async (request) =>
      paginate(request, byId, (page) => searchDeals(db, request.tenant, request.query, page)),
  );

  app.post(
    '/crm/deals',
    {
      schema: {
        operationId: 'crm.deals.create',
        tags,
        summary: 'Create a deal',
        headers: IdempotencyHeaders,
        body: CreateDealBody,
        response: { 201: DealEnvelope, ...errorResponses(409, 422) },
      },
    },
    async (request, reply) =>
      runIdempotent(
        db,
        request,
        reply,
        config.idempotencyTtlHours,
        async (trx) => ({ status: 201, body: { deal: await createDeal(trx, request.tenant, request.body) } }),
        async (db) => {
          const deal = await createDealInOneStatement(db, request.tenant, request.body);
          return deal && { status: 201, body: { deal } };
        },
      ),
  );

  app.get(
    '/crm/deals/:id',
    {
      schema: {
        operationId: 'crm.deals.get',
        tags,
        summary: 'Retrieve one deal (archived ones included)',
        params: IdParams,
        response: { 200: DealEnvelope, ...errorResponses(404) },
      },
    },
    async (request) => ({ deal: await getDeal(db, request.tenant, request.params.id) }),
  );

  app.patch(
    '/crm/deals/:id',
    {
      schema: {
        operationId: 'crm.deals.update',
        tags,
        summary: 'Update a deal; a new stage_id emits deal.stage_changed',
        params: IdParams,
        body: UpdateDealBody,
        response: { 200: DealEnvelope, ...errorResponses(404) },
      },
    },
    async (request) => ({
      deal: await inTransaction(db, (trx) =>
        updateDeal(trx, request.tenant, request.params.id, request.body),
      ),
    }),
  );

  app.delete(
    '/crm/deals/:id',
    {
      schema: {
        operationId: 'crm.deals.delete',
        tags,
        summary: 'Archive a deal',
        params: IdParams,
        response: { 204: Type.Null(), ...errorResponses(404) },
      },
    },
    async (request, reply) => {
      await inTransaction(db, (trx) => archiveDeal(trx, request.tenant, request.params.id));
      reply.code(204).send(null);
    },
  );
};
