import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { requireAdminToken } from '../../platform/auth/admin-token.ts';
import { inTransaction } from '../../platform/db/transaction.ts';
import { Body, DateTime, Nullable, Uuid } from '../../platform/http/schemas.ts';
import { operatorAudit } from '../audit/service.ts';
import * as clients from '../clients/service.ts';
import { ApiKeySchema } from '../me/schemas.ts';
import * as orgs from './service.ts';

const Org = Type.Object({
  id: Uuid(),
  name: Type.String(),
  house_client_id: Uuid(),
  features: Type.Object({ sdr_outbound: Type.Boolean() }),
  timezone: Nullable(Type.String({ description: 'IANA time zone of the org; null is UTC.' })),
});
const Client = Type.Object({ id: Uuid(), org_id: Uuid(), name: Type.String() });
const Name = Type.String({ minLength: 1, maxLength: 200 });
const OrgParams = Type.Object({ orgId: Uuid() });
const hidden = { hide: true, tags: ['admin'] };

/** The operator's API: orgs, clients, keys and FUEL grants, behind `ADMIN_TOKEN`. Not part of the public API. */
export const orgAdminRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { db, secrets } = app.platform;
  requireAdminToken(app, secrets.adminToken);

  app.post('/orgs', { schema: { ...hidden, body: Body({ name: Name }) } }, async (request, reply) => {
    reply.code(201);
    return { org: await inTransaction(db, (trx) => orgs.createOrg(trx, request.body)) };
  });

  app.get(
    '/orgs/:orgId',
    { schema: { ...hidden, params: OrgParams, response: { 200: Type.Object({ org: Org }) } } },
    async (request) => ({
      org: await orgs.getOrg(db, request.params.orgId),
    }),
  );

  app.patch(
    '/orgs/:orgId',
    {
      schema: {
        ...hidden,
        params: OrgParams,
        body: Body({
          name: Type.Optional(Name),
          features: Type.Optional(Body({ sdr_outbound: Type.Optional(Type.Boolean()) })),
          timezone: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 64 }))),
        }),
        response: { 200: Type.Object({ org: Org }) },
      },
    },
    async (request) => ({
      org: await inTransaction(db, (trx) => orgs.updateOrg(trx, request.params.orgId, request.body)),
    }),
  );

  app.post(
    '/orgs/:orgId/clients',
    {
      schema: {
        ...hidden,
        params: OrgParams,
        body: Body({ name: Name }),
        response: { 201: Type.Object({ client: Client }) },
      },
    },
    async (request, reply) => {
      reply.code(201);
      return {
        client: await inTransaction(db, (trx) =>
          clients.createClient(trx, request.params.orgId, request.body, operatorAudit(request)),
        ),
      };
    },
  );

  app.post(
    '/orgs/:orgId/keys',
    {
      schema: {
        ...hidden,
        params: OrgParams,
        body: Body({
          name: Name,
          kind: Type.Union([Type.Literal('agency'), Type.Literal('client'), Type.Literal('legacy_sms')]),
          client_id: Type.Optional(Uuid()),
          rate_limit_per_minute: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_000_000 })),
          expires_at: Type.Optional(DateTime()),
          tag: Type.Optional(Type.String({ maxLength: 100 })),
        }),
        response: { 201: Type.Object({ api_key: ApiKeySchema, key: Type.String() }) },
      },
    },
    async (request, reply) => {
      reply.code(201);
      return inTransaction(db, (trx) =>
        clients.mintKey(trx, request.params.orgId, request.body, operatorAudit(request)),
      );
    },
  );

  app.delete(
    '/keys/:keyId',
    { schema: { ...hidden, params: Type.Object({ keyId: Uuid() }) } },
    async (request, reply) => {
      await inTransaction(db, (trx) =>
        clients.revokeKey(trx, null, request.params.keyId, operatorAudit(request)),
      );
      app.platform.keys.evict(request.params.keyId);
      reply.code(204).send();
    },
  );

  app.post(
    '/orgs/:orgId/fuel',
    {
      schema: {
        ...hidden,
        params: OrgParams,
        body: Body({
          amount: Type.Integer({ minimum: -1_000_000_000, maximum: 1_000_000_000, not: { const: 0 } }),
          reason: Type.Optional(Type.String({ maxLength: 500 })),
        }),
        response: { 200: Type.Object({ fuel: Type.Object({ balance: Type.Integer() }) }) },
      },
    },
    async (request) => inTransaction(db, (trx) => orgs.grantFuel(trx, request.params.orgId, request.body)),
  );
};
