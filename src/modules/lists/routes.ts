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
  Query,
  Uuid,
} from '../../platform/http/schemas.ts';
import { EntityType, Ids, ListSchema, listFields, MemberSchema, Name, ProcessingType } from './schemas.ts';
import {
  addMembers,
  createList,
  getList,
  listMembers,
  memberKeyset,
  patchList,
  removeList,
  removeMember,
  searchLists,
} from './service.ts';

const ListEnvelope = Type.Object({ list: ListSchema });
const MemberParams = Type.Object({ id: Uuid(), entityId: Uuid() }, { additionalProperties: false });
const tags = ['crm.lists'];

export const listRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { db, config } = app.platform;

  app.get(
    '/crm/lists',
    {
      schema: {
        operationId: 'crm.lists.list',
        tags,
        summary: 'List CRM lists, newest first',
        querystring: Query({ ...pageQuerySchema, processing_type: Type.Optional(ProcessingType) }),
        response: { 200: pageSchema(ListSchema), ...errorResponses() },
      },
    },
    async (request) =>
      paginate(request, byId, (page) => searchLists(db, request.tenant, request.query, page)),
  );

  app.post(
    '/crm/lists',
    {
      schema: {
        operationId: 'crm.lists.create',
        tags,
        summary: 'Create a static or smart list',
        headers: IdempotencyHeaders,
        body: Body({ name: Name, ...listFields }),
        response: { 201: ListEnvelope, ...errorResponses(409, 422) },
      },
    },
    async (request, reply) =>
      runIdempotent(db, request, reply, config.idempotencyTtlHours, async (trx) => ({
        status: 201,
        body: { list: await createList(trx, request.tenant, request.body, config.phoneDefaultCountry) },
      })),
  );

  app.get(
    '/crm/lists/:id',
    {
      schema: {
        operationId: 'crm.lists.get',
        tags,
        summary: 'Retrieve a list, with its filter_branch when smart',
        params: IdParams,
        response: { 200: ListEnvelope, ...errorResponses(404) },
      },
    },
    async (request) => ({ list: await getList(db, request.tenant, request.params.id) }),
  );

  app.patch(
    '/crm/lists/:id',
    {
      schema: {
        operationId: 'crm.lists.update',
        tags,
        summary: 'Update a list',
        params: IdParams,
        body: Body({ name: Type.Optional(Name), ...listFields }),
        response: { 200: ListEnvelope, ...errorResponses(404) },
      },
    },
    async (request) => ({
      list: await inTransaction(db, (trx) =>
        patchList(trx, request.tenant, request.params.id, request.body, config.phoneDefaultCountry),
      ),
    }),
  );

  app.delete(
    '/crm/lists/:id',
    {
      schema: {
        operationId: 'crm.lists.delete',
        tags,
        summary: 'Delete a list and its members',
        params: IdParams,
        response: { 204: Type.Null({ description: 'Deleted' }), ...errorResponses(404) },
      },
    },
    async (request, reply) => {
      await inTransaction(db, (trx) => removeList(trx, request.tenant, request.params.id));
      reply.code(204).send(null);
    },
  );

  app.get(
    '/crm/lists/:id/members',
    {
      schema: {
        operationId: 'crm.lists.members.list',
        tags,
        summary: "List a list's members, newest record first, exclusions applied",
        params: IdParams,
        querystring: Query({ ...pageQuerySchema }),
        response: { 200: pageSchema(MemberSchema), ...errorResponses(404) },
      },
    },
    async (request) =>
      paginate(request, memberKeyset, (page) => listMembers(db, request.tenant, request.params.id, page)),
  );

  app.post(
    '/crm/lists/:id/members',
    {
      schema: {
        operationId: 'crm.lists.members.create',
        tags,
        summary: 'Add up to 10,000 contacts, companies or deals to a static list',
        description:
          'Send {contact_ids} or {entity_ids, entity_type}. Ids that are not records of this client are reported in not_found_ids and not added.',
        headers: IdempotencyHeaders,
        params: IdParams,
        body: Body({
          contact_ids: Type.Optional(Ids),
          entity_ids: Type.Optional(Ids),
          entity_type: Type.Optional(EntityType),
        }),
        response: {
          200: Type.Object({
            entity_type: EntityType,
            added: Type.Integer(),
            already_present: Type.Integer(),
            not_found: Type.Integer(),
            not_found_ids: Type.Array(Uuid()),
          }),
          ...errorResponses(404, 409, 422),
        },
      },
    },
    async (request, reply) =>
      runIdempotent(db, request, reply, config.idempotencyTtlHours, async (trx) => ({
        status: 200,
        body: await addMembers(trx, request.tenant, request.params.id, request.body),
      })),
  );

  app.delete(
    '/crm/lists/:id/members/:entityId',
    {
      schema: {
        operationId: 'crm.lists.members.delete',
        tags,
        summary: 'Remove one member from a static list',
        params: MemberParams,
        response: { 204: Type.Null({ description: 'Removed' }), ...errorResponses(404) },
      },
    },
    async (request, reply) => {
      await inTransaction(db, (trx) =>
        removeMember(trx, request.tenant, request.params.id, request.params.entityId),
      );
      reply.code(204).send(null);
    },
  );
};
