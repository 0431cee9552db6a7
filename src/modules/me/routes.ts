import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { publicApiKey } from '../../platform/auth/keys.ts';
import { errorResponses, Nullable, Timestamp, Uuid } from '../../platform/http/schemas.ts';

export const ApiKeySchema = Type.Object(
  {
    id: Uuid(),
    name: Type.String(),
    prefix: Type.String({ description: 'gc_live_ (agency), cl_live_ (client) or sms_live_ (legacy SMS).' }),
    kind: Type.Union([Type.Literal('agency'), Type.Literal('client'), Type.Literal('legacy_sms')]),
    rate_limit_per_minute: Type.Integer(),
    expires_at: Nullable(Timestamp()),
    tag: Nullable(Type.String()),
  },
  { description: 'An API key, without its secret.' },
);

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
