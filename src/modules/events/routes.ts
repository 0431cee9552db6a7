import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { byId, pageQuerySchema, pageSchema, paginate } from '../../platform/http/pagination.ts';
import { errorResponses, Query } from '../../platform/http/schemas.ts';
import { EventId, EventSchema } from './schemas.ts';
import { getEvent, searchEvents } from './service.ts';

export const eventRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { db } = app.platform;

  app.get(
    '/events',
    {
      schema: {
        operationId: 'events.list',
        tags: ['events'],
        summary: 'List the events this key can see, newest first',
        querystring: Query({ ...pageQuerySchema, type: Type.Optional(Type.String({ maxLength: 100 })) }),
        response: { 200: pageSchema(EventSchema), ...errorResponses() },
      },
    },
    async (request) =>
      paginate(request, byId, (page) => searchEvents(db, request.tenant, request.query, page)),
  );

  app.get(
    '/events/:id',
    {
      schema: {
        operationId: 'events.get',
        tags: ['events'],
        summary: 'Retrieve one event',
        params: Type.Object({ id: EventId }),
        response: { 200: Type.Object({ event: EventSchema }), ...errorResponses(404) },
      },
    },
    async (request) => ({ event: await getEvent(db, request.tenant, request.params.id) }),
  );
};
