import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { paginate } from '../../platform/http/pagination.ts';
import { errorResponses, IdParams } from '../../platform/http/schemas.ts';
import { CallDetailSchema, CallPage, ListCallsQuery } from './schemas.ts';
import {
  callFilter,
  callKeyset,
  countMatchingCalls,
  getCall,
  refuseOutboundDialing,
  searchCalls,
} from './service.ts';

const tags = ['calls'];

export const callRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { db } = app.platform;

  app.get(
    '/calls',
    {
      schema: {
        operationId: 'calls.list',
        tags,
        summary: 'List calls, newest first, with the count of all calls matching the filters',
        querystring: ListCallsQuery,
        response: { 200: CallPage, ...errorResponses() },
      },
    },
    async (request) => {
      const filter = await callFilter(db, request.tenant, request.query);
      const [page, count] = await Promise.all([
        paginate(request, callKeyset, (page) => searchCalls(db, request.tenant, filter, page)),
        countMatchingCalls(db, request.tenant, filter),
      ]);
      return { ...page, count };
    },
  );

  app.get(
    '/calls/:id',
    {
      schema: {
        operationId: 'calls.get',
        tags,
        summary: 'Retrieve a call with its transcript',
        params: IdParams,
        response: { 200: Type.Object({ call: CallDetailSchema }), ...errorResponses(404) },
      },
    },
    async (request) => ({ call: await getCall(db, request.tenant, request.params.id) }),
  );

  app.post(
    '/calls',
    {
      schema: {
        operationId: 'calls.create',
        tags,
        summary: 'Start an outbound call: not available yet, always 403 outbound_dialing_unavailable',
        response: errorResponses(403),
      },
    },
    async () => refuseOutboundDialing(),
  );
};
