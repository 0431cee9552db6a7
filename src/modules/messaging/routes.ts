import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { newId } from '../../platform/db/ids.ts';
import { inTransaction } from '../../platform/db/transaction.ts';
import { runIdempotent } from '../../platform/http/idempotency.ts';
import { byId, pageQuerySchema, pageSchema, paginate } from '../../platform/http/pagination.ts';
import { errorResponses, IdempotencyHeaders, IdParams, Query } from '../../platform/http/schemas.ts';
import {
  ConversationSchema,
  ListConversationsQuery,
  MessageSchema,
  PatchConversationBody,
  SendMessageBody,
} from './schemas.ts';
import {
  acceptMessage,
  conversationKeyset,
  conversationMessages,
  getConversation,
  patchConversation,
  searchConversations,
} from './service.ts';

const tags = ['sms'];
const ConversationEnvelope = Type.Object({ conversation: ConversationSchema });

export const messagingRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { db, config, providers } = app.platform;

  app.post(
    '/sms/messages',
    {
      schema: {
        operationId: 'sms.send',
        tags,
        summary: 'Send an SMS: 202 queued, 1 FUEL per segment debited now, sent by a worker',
        headers: IdempotencyHeaders,
        body: SendMessageBody,
        response: { 202: Type.Object({ message: MessageSchema }), ...errorResponses(402, 422) },
      },
    },
    async (request, reply) =>
      runIdempotent(db, request, reply, config.idempotencyTtlHours, async (trx) => {
        const body = request.body;
        const { message } = await acceptMessage(
          trx,
          request.tenant,
          {
            to: body.to,
            body: body.body,
            from: body.from,
            contactId: body.contact_id,
            companyId: body.company_id,
            dealId: body.deal_id,
            mediaUrls: body.media_urls,
            metadata: body.metadata,
            causeKey: `api:${newId()}`,
            freshCause: true,
          },
          providers.sms.name,
          config.phoneDefaultCountry,
        );
        return { status: 202, body: { message } };
      }),
  );

  app.get(
    '/sms/conversations',
    {
      schema: {
        operationId: 'sms.conversations.list',
        tags,
        summary: 'List SMS conversations, most recent activity first',
        querystring: ListConversationsQuery,
        response: { 200: pageSchema(ConversationSchema), ...errorResponses() },
      },
    },
    async (request) =>
      paginate(request, conversationKeyset, (page) =>
        searchConversations(db, request.tenant, request.query, page, config.phoneDefaultCountry),
      ),
  );

  app.get(
    '/sms/conversations/:id',
    {
      schema: {
        operationId: 'sms.conversations.get',
        tags,
        summary: 'Retrieve one SMS conversation',
        params: IdParams,
        response: { 200: ConversationEnvelope, ...errorResponses(404) },
      },
    },
    async (request) => ({ conversation: await getConversation(db, request.tenant, request.params.id) }),
  );

  app.get(
    '/sms/conversations/:id/messages',
    {
      schema: {
        operationId: 'sms.conversations.messages',
        tags,
        summary: 'Messages of a conversation, both ways, newest first',
        params: IdParams,
        querystring: Query(pageQuerySchema),
        response: { 200: pageSchema(MessageSchema), ...errorResponses(404) },
      },
    },
    async (request) =>
      paginate(request, byId, (page) => conversationMessages(db, request.tenant, request.params.id, page)),
  );

  app.patch(
    '/sms/conversations/:id',
    {
      schema: {
        operationId: 'sms.conversations.update',
        tags,
        summary: 'Close or reopen a conversation, or mark it read',
        params: IdParams,
        body: PatchConversationBody,
        response: { 200: ConversationEnvelope, ...errorResponses(404) },
      },
    },
    async (request) => ({
      conversation: await inTransaction(db, (trx) =>
        patchConversation(trx, request.tenant, request.params.id, request.body),
      ),
    }),
  );
};
