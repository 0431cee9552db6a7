import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { inTransaction, retryOnDeadlock } from '../../platform/db/transaction.ts';
import { runIdempotent } from '../../platform/http/idempotency.ts';
import { byId, pageQuerySchema, pageSchema, paginate } from '../../platform/http/pagination.ts';
import {
  Body,
  errorResponses,
  IdempotencyHeaders,
  IdParams,
  Nullable,
  Query,
  Uuid,
} from '../../platform/http/schemas.ts';
import { channelRoutes } from './channel-routes.ts';
import {
  ContactSchema,
  ContactTimeZone,
  Email,
  LifecycleStage,
  PersonName,
  Phone,
  Source,
  Tags,
  Title,
} from './schemas.ts';
import {
  createContact,
  getContact,
  patchContact,
  searchContacts,
  type UpsertResult,
  upsertContact,
} from './service.ts';

const ContactEnvelope = Type.Object({ contact: ContactSchema });
const tags = ['crm.contacts'];

export const contactRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { db, config } = app.platform;

  app.get(
    '/crm/contacts',
    {
      schema: {
        operationId: 'crm.contacts.list',
        tags,
        summary: 'List contacts, newest first',
        querystring: Query({
          ...pageQuerySchema,
          q: Type.Optional(
            Type.String({
              minLength: 1,
              maxLength: 200,
              description: 'Substring of full_name, first_name or last_name, case-insensitive.',
            }),
          ),
          lifecycle: Type.Optional(LifecycleStage),
          owner: Type.Optional(Uuid('Owner user id.')),
          company_id: Type.Optional(Uuid()),
          email: Type.Optional(Email),
          phone: Type.Optional(Phone),
          include_archived: Type.Optional(Type.Boolean({ default: false })),
        }),
        response: { 200: pageSchema(ContactSchema), ...errorResponses() },
      },
    },
    async (request) =>
      paginate(request, byId, (page) =>
        searchContacts(db, request.tenant, request.query, page, config.phoneDefaultCountry),
      ),
  );

  app.post(
    '/crm/contacts',
    {
      schema: {
        operationId: 'crm.contacts.create',
        tags,
        summary: 'Upsert a contact by email or phone',
        description:
          'Creates the contact (201) or merges the given fields into the contact that has the email or phone (200).',
        headers: IdempotencyHeaders,
        body: Body({
          email: Type.Optional(Email),
          phone: Type.Optional(Phone),
          first_name: Type.Optional(PersonName),
          last_name: Type.Optional(PersonName),
          full_name: Type.Optional(PersonName),
          title: Type.Optional(Title),
          lifecycle_stage: Type.Optional(LifecycleStage),
          company_id: Type.Optional(Uuid()),
          company_name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
          owner_user_id: Type.Optional(Uuid()),
          tags: Type.Optional(Tags),
          source: Type.Optional(Source),
          timezone: Type.Optional(ContactTimeZone),
        }),
        response: {
          200: Type.Object({
            contact: ContactSchema,
            created: Type.Literal(false),
            matched_by: Type.Union([Type.Literal('email'), Type.Literal('phone')]),
          }),
          201: Type.Object({ contact: ContactSchema, created: Type.Literal(true) }),
          ...errorResponses(409, 422),
        },
      },
    },
    async (request, reply) =>
      retryOnDeadlock(() =>
        runIdempotent<UpsertResult['body']>(
          db,
          request,
          reply,
          config.idempotencyTtlHours,
          (trx) => upsertContact(trx, request.tenant, request.body, config.phoneDefaultCountry),
          (db) => createContact(db, request.tenant, request.body, config.phoneDefaultCountry),
        ),
      ),
  );

  app.get(
    '/crm/contacts/:id',
    {
      schema: {
        operationId: 'crm.contacts.get',
        tags,
        summary: 'Retrieve a contact with its company',
        params: IdParams,
        response: { 200: ContactEnvelope, ...errorResponses(404) },
      },
    },
    async (request) => ({ contact: await getContact(db, request.tenant, request.params.id) }),
  );

  app.patch(
    '/crm/contacts/:id',
    {
      schema: {
        operationId: 'crm.contacts.update',
        tags,
        summary: 'Update a contact; tags replaces the list, archived archives or restores',
        params: IdParams,
        body: Body({
          first_name: Type.Optional(Nullable(PersonName)),
          last_name: Type.Optional(Nullable(PersonName)),
          full_name: Type.Optional(Nullable(PersonName)),
          title: Type.Optional(Nullable(Title)),
          lifecycle_stage: Type.Optional(Nullable(LifecycleStage)),
          company_id: Type.Optional(Nullable(Uuid())),
          owner_user_id: Type.Optional(Nullable(Uuid())),
          tags: Type.Optional(Tags),
          archived: Type.Optional(Type.Boolean()),
          timezone: Type.Optional(Nullable(ContactTimeZone)),
        }),
        response: { 200: ContactEnvelope, ...errorResponses(404) },
      },
    },
    async (request) => ({
      contact: await retryOnDeadlock(() =>
        inTransaction(db, (trx) => patchContact(trx, request.tenant, request.params.id, request.body)),
      ),
    }),
  );

  app.delete(
    '/crm/contacts/:id',
    {
      schema: {
        operationId: 'crm.contacts.delete',
        tags,
        summary: 'Archive a contact (it is kept, and restored with PATCH archived=false)',
        params: IdParams,
        response: { 204: Type.Null({ description: 'Archived' }), ...errorResponses(404) },
      },
    },
    async (request, reply) => {
      await retryOnDeadlock(() =>
        inTransaction(db, (trx) => patchContact(trx, request.tenant, request.params.id, { archived: true })),
      );
      reply.code(204).send(null);
    },
  );

  await app.register(channelRoutes);
};
