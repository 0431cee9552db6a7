import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { errors } from '../../platform/http/errors.ts';
import { runIdempotent } from '../../platform/http/idempotency.ts';
import {
  decodePageToken,
  pageQuerySchema,
  pageSchema,
  pageScope,
  toPage,
} from '../../platform/http/pagination.ts';
import {
  Body,
  errorResponses,
  IdempotencyHeaders,
  IdParams,
  Nullable,
  Query,
  Timestamp,
  Uuid,
} from '../../platform/http/schemas.ts';
import { CompanySchema } from '../companies/routes.ts';
import { ContactSchema } from '../contacts/schemas.ts';
import { LIMITS } from './filter.ts';
import {
  addMembers,
  createList,
  getList,
  listMembers,
  MAX_IDS_PER_CALL,
  patchList,
  removeList,
  removeMember,
  searchLists,
} from './service.ts';

const ProcessingType = Type.Union([Type.Literal('static'), Type.Literal('smart')], {
  description: 'static (members added by id) or smart (members are the contacts matching filter_branch).',
});
const EntityType = Type.Union([Type.Literal('contact'), Type.Literal('company'), Type.Literal('deal')]);

const FilterBranch = Type.Object(
  {},
  {
    additionalProperties: true,
    description: `A condition tree: {"and": [...]} or {"or": [...]} groups (up to ${LIMITS.depth} deep) whose leaves are {"field", "operator", "value"} conditions on a contact (up to ${LIMITS.conditions}). See the lists guide for fields and operators.`,
  },
);

const ListSchema = Type.Object(
  {
    id: Uuid(),
    name: Type.String(),
    description: Nullable(Type.String()),
    processing_type: ProcessingType,
    filter_branch: Nullable(FilterBranch),
    exclude_dnc: Type.Boolean(),
    exclude_unsubscribed: Type.Boolean(),
    exclude_archived: Type.Boolean(),
    emit_flow_triggers: Type.Boolean(),
    created_at: Timestamp(),
    updated_at: Timestamp(),
  },
  { description: 'A CRM list of contacts, companies or deals.' },
);

const MemberSchema = Type.Object(
  {
    entity_type: EntityType,
    entity_id: Uuid(),
    added_at: Nullable(Timestamp('When it was added; null for a smart list.')),
    contact: Nullable(ContactSchema),
    company: Nullable(CompanySchema),
  },
  { description: 'A member of a list, with the contact or company it is.' },
);

const Name = Type.String({ minLength: 1, maxLength: 200 });
const Description = Type.String({ maxLength: 2000 });
const Ids = Type.Array(Uuid(), { minItems: 1, maxItems: MAX_IDS_PER_CALL });
const ListEnvelope = Type.Object({ list: ListSchema });
const MemberParams = Type.Object({ id: Uuid(), entityId: Uuid() }, { additionalProperties: false });
const tags = ['crm.lists'];

const listFields = {
  description: Type.Optional(Nullable(Description)),
  processing_type: Type.Optional(ProcessingType),
  filter_branch: Type.Optional(Nullable(FilterBranch)),
  exclude_dnc: Type.Optional(Type.Boolean()),
  exclude_unsubscribed: Type.Optional(Type.Boolean()),
  exclude_archived: Type.Optional(Type.Boolean()),
  emit_flow_triggers: Type.Optional(Type.Boolean()),
};

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
    async (request) => {
      const { limit = 50, page_token, processing_type } = request.query;
      const scope = pageScope(`crm.lists.list:${processing_type ?? ''}`, request.tenant);
      const cursor = decodePageToken(page_token, scope);
      const rows = await searchLists(db, request.tenant, {
        processing_type,
        before: cursor?.[0] as string | undefined,
        limit,
      });
      return toPage(rows, limit, scope, (row) => [row.id]);
    },
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
      list: await patchList(db, request.tenant, request.params.id, request.body, config.phoneDefaultCountry),
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
      await removeList(db, request.tenant, request.params.id);
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
    async (request) => {
      const { limit = 50, page_token } = request.query;
      const scope = pageScope(`crm.lists.members:${request.params.id}`, request.tenant);
      const cursor = decodePageToken(page_token, scope);
      const rows = await listMembers(db, request.tenant, request.params.id, {
        before: cursor?.[0] as string | undefined,
        limit,
      });
      return toPage(rows, limit, scope, (row) => [row.entity_id]);
    },
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
    async (request, reply) => {
      const { contact_ids, entity_ids, entity_type } = request.body;
      if ((contact_ids === undefined) === (entity_ids === undefined)) {
        throw errors.invalidField('contact_ids', 'or entity_ids (with entity_type) is required, not both');
      }
      if (contact_ids !== undefined && entity_type !== undefined && entity_type !== 'contact') {
        throw errors.invalidField('entity_type', 'must be contact (or absent) with contact_ids');
      }
      if (entity_ids !== undefined && entity_type === undefined) {
        throw errors.invalidField('entity_type', 'is required with entity_ids');
      }
      const ids = (contact_ids ?? entity_ids) as string[];
      return runIdempotent(db, request, reply, config.idempotencyTtlHours, async (trx) => ({
        status: 200,
        body: await addMembers(trx, request.tenant, request.params.id, entity_type ?? 'contact', ids),
      }));
    },
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
      await removeMember(db, request.tenant, request.params.id, request.params.entityId);
      reply.code(204).send(null);
    },
  );
};
