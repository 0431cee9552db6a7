import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { requireAdminToken } from '../../platform/auth/admin-token.ts';
import { inTransaction } from '../../platform/db/transaction.ts';
import { Body, Uuid } from '../../platform/http/schemas.ts';
import { operatorAudit } from '../audit/service.ts';
import { UserRoleSchema, UserSchema } from './schemas.ts';
import { accounts } from './service.ts';

const hidden = { hide: true, tags: ['admin'] };

/** The operator invites the first people of an org (owners and admins invite the rest from the portal). */
export const userAdminRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { db, secrets } = app.platform;
  requireAdminToken(app, secrets.adminToken);
  const people = accounts(app.platform);

  app.post(
    '/orgs/:orgId/users',
    {
      schema: {
        ...hidden,
        params: Type.Object({ orgId: Uuid() }),
        body: Body({
          email: Type.String({ minLength: 3, maxLength: 254 }),
          role: UserRoleSchema,
          client_id: Type.Optional(Uuid()),
        }),
        response: { 201: Type.Object({ user: UserSchema, invite_url: Type.String() }) },
      },
    },
    async (request, reply) => {
      const { user, inviteUrl } = await inTransaction(db, (trx) =>
        people.inviteUser(trx, request.params.orgId, request.body, operatorAudit(request)),
      );
      reply.code(201);
      return { user, invite_url: inviteUrl };
    },
  );
};
