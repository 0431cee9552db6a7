import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { requireAdminToken } from '../../platform/auth/admin-token.ts';
import { inTransaction } from '../../platform/db/transaction.ts';
import { byId, pageQuerySchema, pageSchema, paginate } from '../../platform/http/pagination.ts';
import { Body, Query, Uuid } from '../../platform/http/schemas.ts';
import { PhoneNumberSchema } from './schemas.ts';
import { createNumber, deleteNumber, listOrgNumbers } from './service.ts';

const hidden = { hide: true, tags: ['admin'] };
const OrgParams = Type.Object({ orgId: Uuid() });

/** Operators give orgs their phone numbers, behind `ADMIN_TOKEN` like the rest of the admin API. */
export const numberAdminRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { db, secrets, config } = app.platform;
  requireAdminToken(app, secrets.adminToken);

  app.post(
    '/orgs/:orgId/numbers',
    {
      schema: {
        ...hidden,
        params: OrgParams,
        body: Body({
          number: Type.String({ minLength: 1, maxLength: 40 }),
          client_id: Type.Optional(Uuid()),
          label: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
          agent_id: Type.Optional(Uuid("An agent of the number's client, which answers its calls.")),
        }),
        response: { 201: Type.Object({ number: PhoneNumberSchema }) },
      },
    },
    async (request, reply) => {
      const number = await inTransaction(db, (trx) =>
        createNumber(trx, request.params.orgId, request.body, config.phoneDefaultCountry),
      );
      reply.code(201);
      return { number };
    },
  );

  app.get(
    '/orgs/:orgId/numbers',
    {
      schema: {
        ...hidden,
        params: OrgParams,
        querystring: Query(pageQuerySchema),
        response: { 200: pageSchema(PhoneNumberSchema) },
      },
    },
    // An operator's list of the whole org: its tokens are bound to the org, no client.
    async (request) =>
      paginate(
        {
          query: request.query,
          params: request.params,
          routeOptions: request.routeOptions,
          tenant: { orgId: request.params.orgId, clientId: '*' },
        },
        byId,
        (page) => listOrgNumbers(db, request.params.orgId, page),
      ),
  );

  app.delete(
    '/numbers/:numberId',
    { schema: { ...hidden, params: Type.Object({ numberId: Uuid() }) } },
    async (request, reply) => {
      await inTransaction(db, (trx) => deleteNumber(trx, request.params.numberId));
      reply.code(204).send();
    },
  );
};
