import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { inTransaction } from '../../platform/db/transaction.ts';
import { runIdempotent } from '../../platform/http/idempotency.ts';
import { byId, pageQuerySchema, pageSchema, paginate } from '../../platform/http/pagination.ts';
import {
  Body,
  errorResponses,
  IdempotencyHeaders,
  IdParams,
  Nullable,
  Query,
} from '../../platform/http/schemas.ts';
import { CompanySchema, Description, Domain, Industry, Name, Website } from './schemas.ts';
import {
  archiveCompany,
  type CompanyRecord,
  createCompany,
  getCompany,
  patchCompany,
  searchCompanies,
  upsertCompany,
} from './service.ts';

const CompanyEnvelope = Type.Object({ company: CompanySchema });
const tags = ['crm.companies'];

export const companyRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { db, config } = app.platform;

  app.get(
    '/crm/companies',
    {
      schema: {
        operationId: 'crm.companies.list',
        tags,
        summary: 'List companies, newest first',
        querystring: Query({
          ...pageQuerySchema,
          q: Type.Optional(
            Type.String({ minLength: 1, maxLength: 200, description: 'Substring of the name.' }),
          ),
          domain: Type.Optional(Domain),
          include_archived: Type.Optional(Type.Boolean({ default: false })),
        }),
        response: { 200: pageSchema(CompanySchema), ...errorResponses() },
      },
    },
    async (request) =>
      paginate(request, byId, (page) => searchCompanies(db, request.tenant, request.query, page)),
  );

  app.post(
    '/crm/companies',
    {
      schema: {
        operationId: 'crm.companies.create',
        tags,
        summary: 'Create a company, or update the one with the same domain',
        headers: IdempotencyHeaders,
        body: Body({
          name: Type.Optional(Name),
          domain: Type.Optional(Domain),
          website: Type.Optional(Website),
          industry: Type.Optional(Industry),
          business_description: Type.Optional(Description),
        }),
        response: {
          200: Type.Object({ company: CompanySchema, created: Type.Literal(false) }),
          201: Type.Object({ company: CompanySchema, created: Type.Literal(true) }),
          ...errorResponses(409, 422),
        },
      },
    },
    async (request, reply) =>
      runIdempotent<{ company: CompanyRecord; created: boolean }>(
        db,
        request,
        reply,
        config.idempotencyTtlHours,
        async (trx) => {
          const result = await upsertCompany(trx, request.tenant, request.body);
          return { status: result.created ? 201 : 200, body: result };
        },
        async (db) => {
          const result = await createCompany(db, request.tenant, request.body);
          return result && { status: 201, body: result };
        },
      ),
  );

  app.get(
    '/crm/companies/:id',
    {
      schema: {
        operationId: 'crm.companies.get',
        tags,
        summary: 'Retrieve a company',
        params: IdParams,
        response: { 200: CompanyEnvelope, ...errorResponses(404) },
      },
    },
    async (request) => ({ company: await getCompany(db, request.tenant, request.params.id) }),
  );

  app.patch(
    '/crm/companies/:id',
    {
      schema: {
        operationId: 'crm.companies.update',
        tags,
        summary: 'Update a company; archived true/false archives or restores it',
        params: IdParams,
        body: Body({
          name: Type.Optional(Name),
          domain: Type.Optional(Nullable(Domain)),
          website: Type.Optional(Nullable(Website)),
          industry: Type.Optional(Nullable(Industry)),
          business_description: Type.Optional(Nullable(Description)),
          archived: Type.Optional(Type.Boolean()),
        }),
        response: { 200: CompanyEnvelope, ...errorResponses(404, 409) },
      },
    },
    async (request) => ({
      company: await inTransaction(db, (trx) =>
        patchCompany(trx, request.tenant, request.params.id, request.body),
      ),
    }),
  );

  app.delete(
    '/crm/companies/:id',
    {
      schema: {
        operationId: 'crm.companies.delete',
        tags,
        summary: 'Archive a company (it is kept, and restored with PATCH archived=false)',
        params: IdParams,
        response: { 204: Type.Null({ description: 'Archived' }), ...errorResponses(404) },
      },
    },
    async (request, reply) => {
      await inTransaction(db, (trx) => archiveCompany(trx, request.tenant, request.params.id));
      reply.code(204).send(null);
    },
  );
};
