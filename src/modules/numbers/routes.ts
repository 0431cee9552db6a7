import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { byId, pageQuerySchema, pageSchema, paginate } from '../../platform/http/pagination.ts';
import { errorResponses, IdParams, Query } from '../../platform/http/schemas.ts';
import { PhoneNumberSchema } from './schemas.ts';
import { getNumber, listNumbers } from './service.ts';

const tags = ['numbers'];

export const numberRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { db } = app.platform;

  app.get(
    '/numbers',
    {
      schema: {
        operationId: 'numbers.list',
        tags,
        summary: "List the client's phone numbers, oldest (the default sender) first",
        querystring: Query(pageQuerySchema),
        response: { 200: pageSchema(PhoneNumberSchema), ...errorResponses() },
      },
    },
    async (request) => paginate(request, byId, (page) => listNumbers(db, request.tenant, page)),
  );

  app.get(
    '/numbers/:id',
    {
      schema: {
        operationId: 'numbers.get',
        tags,
        summary: 'Retrieve one phone number',
        params: IdParams,
        response: { 200: Type.Object({ number: PhoneNumberSchema }), ...errorResponses(404) },
      },
    },
    async (request) => ({ number: await getNumber(db, request.tenant, request.params.id) }),
  );
};
