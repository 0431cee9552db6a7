import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { publicApiKey } from '../../platform/auth/keys.ts';
import { errorResponses, Nullable, Uuid } from '../../platform/http/schemas.ts';
import { ApiKeySchema } from './schemas.ts';

const Introspection = Type.Object({
  api_key: ApiKeySchema,
  tenant: Type.Object({
    org_id: Uuid(),
    client_id: Nullable(Uuid()),
    is_client_scoped: Type.Boolean(),
  }),
});

export const meRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/me',
    {
      schema: {
        operationId: 'me.get',
        tags: ['identity'],
        summary: 'Introspect the calling API key and the tenant it acts for',
        response: { 200: Introspection, ...errorResponses(403, 404) },
      },
    },
    async (request) => {
      const { tenant } = request;
      return {
        api_key: publicApiKey(tenant.key),
        tenant: {
          org_id: tenant.orgId,
          client_id: tenant.isClientScoped ? tenant.clientId : null,
          is_client_scoped: tenant.isClientScoped,
        },
      };
    },
  );
};
