import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { byId, pageQuerySchema, pageSchema, paginate } from '../../platform/http/pagination.ts';
import { errorResponses, Nullable, Query, Timestamp, Uuid } from '../../platform/http/schemas.ts';
import { fuelBalance, listLedger } from './service.ts';

const tags = ['fuel'];

const LedgerEntrySchema = Type.Object({
  id: Uuid(),
  amount: Type.Integer({ description: 'Positive for a grant or refund, negative for a spend.' }),
  balance_after: Type.Integer({ description: "The org's balance right after this entry." }),
  reason: Type.Union(
    ['grant', 'adjustment', 'sms', 'gist', 'ai_job', 'refund'].map((reason) => Type.Literal(reason)),
    { description: 'grant, adjustment (an operator takes FUEL back), sms, gist or refund.' },
  ),
  reference_type: Nullable(
    Type.String({ description: 'What caused the entry: sms_message, gist, admin_grant, …' }),
  ),
  reference_id: Nullable(Type.String({ description: 'The id of that cause; null for grants.' })),
  client_id: Nullable(Uuid('The client whose action caused the entry; null for org-level grants.')),
  note: Nullable(Type.String({ description: "The operator's note on a grant." })),
  created_at: Timestamp(),
});

export const fuelRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { db } = app.platform;

  app.get(
    '/fuel',
    {
      schema: {
        operationId: 'fuel.get',
        tags,
        summary: "The org's FUEL balance",
        response: {
          200: Type.Object({ fuel: Type.Object({ balance: Type.Integer() }) }),
          ...errorResponses(),
        },
      },
    },
    async (request) => ({ fuel: { balance: await fuelBalance(db, request.tenant.orgId) } }),
  );

  app.get(
    '/fuel/ledger',
    {
      schema: {
        operationId: 'fuel.ledger.list',
        tags,
        summary: 'List FUEL ledger entries, newest first',
        querystring: Query(pageQuerySchema),
        response: { 200: pageSchema(LedgerEntrySchema), ...errorResponses() },
      },
    },
    async (request) => paginate(request, byId, (page) => listLedger(db, request.tenant, page)),
  );
};
