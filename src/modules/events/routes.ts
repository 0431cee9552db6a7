import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { toEnvelope } from '../../platform/events/emit.ts';
import { errors } from '../../platform/http/errors.ts';
import {
  decodePageToken,
  pageQuerySchema,
  pageSchema,
  pageScope,
  toPage,
} from '../../platform/http/pagination.ts';
import { errorResponses, Query } from '../../platform/http/schemas.ts';
import { findEvent, listEvents } from './store.ts';

export const EventSchema = Type.Object({
  id: Type.String({ description: 'evt_ followed by a UUID.' }),
  type: Type.String(),
  created: Type.String({ description: 'Unix seconds.' }),
  data: Type.Record(Type.String(), Type.Unknown()),
  metadata: Type.Record(Type.String(), Type.Unknown()),
});

const EventId = Type.String({ pattern: '^evt_[0-9a-f-]{36}$', description: 'evt_ followed by a UUID.' });

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
    async (request) => {
      const { limit = 50, page_token, type } = request.query;
      const scope = pageScope(`events.list:${type ?? ''}`, request.tenant);
      const cursor = decodePageToken(page_token, scope);
      const rows = await listEvents(db, request.tenant, {
        type,
        before: cursor?.[0] as string | undefined,
        limit,
      });
      const page = toPage(rows, limit, scope, (row) => [row.id]);
      return { ...page, data: page.data.map(toEnvelope) };
    },
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
    async (request) => {
      const row = await findEvent(db, request.tenant, request.params.id);
      if (!row) throw errors.notFound('Event', request.params.id);
      return { event: toEnvelope(row) };
    },
  );
};
