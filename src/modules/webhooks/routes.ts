import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { inTransaction } from '../../platform/db/transaction.ts';
import { runIdempotent } from '../../platform/http/idempotency.ts';
import { byId, pageQuerySchema, pageSchema, paginate } from '../../platform/http/pagination.ts';
import { errorResponses, IdempotencyHeaders, IdParams, Query } from '../../platform/http/schemas.ts';
import { apiKeyAudit } from '../audit/service.ts';
import {
  CreatedWebhook,
  CreateWebhookBody,
  DeliveriesQuery,
  DeliveryAttemptSchema,
  DeliveryParams,
  RecoverBody,
  RecoverResponse,
  RetryResponse,
  TestEventSchema,
  UpdatedWebhook,
  UpdateWebhookBody,
  WebhookSchema,
} from './schemas.ts';
import {
  createWebhook,
  deleteWebhook,
  getWebhook,
  recoverWebhook,
  retryDelivery,
  revealSecret,
  searchDeliveryAttempts,
  searchWebhooks,
  sendTestEvent,
  updateWebhook,
} from './service.ts';

const tags = ['webhooks'];

export const webhookRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { db, config, secrets } = app.platform;
  const rules = { encryptionKey: secrets.encryptionKey, allowPrivate: config.outboundAllowPrivate };

  app.post(
    '/webhooks',
    {
      schema: {
        operationId: 'webhooks.create',
        tags,
        summary: 'Subscribe a URL to events; the signing secret is returned once',
        headers: IdempotencyHeaders,
        body: CreateWebhookBody,
        response: { 201: CreatedWebhook, ...errorResponses(409, 422) },
      },
    },
    async (request, reply) => {
      const created = await runIdempotent(db, request, reply, config.idempotencyTtlHours, async (trx) => ({
        status: 201,
        body: await createWebhook(trx, request.tenant, request.body, rules, apiKeyAudit(request)),
      }));
      return revealSecret(created, rules);
    },
  );

  app.get(
    '/webhooks',
    {
      schema: {
        operationId: 'webhooks.list',
        tags,
        summary: 'List webhook subscriptions, newest first',
        querystring: Query(pageQuerySchema),
        response: { 200: pageSchema(WebhookSchema), ...errorResponses() },
      },
    },
    async (request) => paginate(request, byId, (page) => searchWebhooks(db, request.tenant, page)),
  );

  app.get(
    '/webhooks/:id',
    {
      schema: {
        operationId: 'webhooks.get',
        tags,
        summary: 'Retrieve a webhook subscription',
        params: IdParams,
        response: { 200: Type.Object({ webhook: WebhookSchema }), ...errorResponses(404) },
      },
    },
    async (request) => ({ webhook: await getWebhook(db, request.tenant, request.params.id) }),
  );

  app.patch(
    '/webhooks/:id',
    {
      schema: {
        operationId: 'webhooks.update',
        tags,
        summary: 'Change, re-enable, disable or rotate the secret of a webhook subscription',
        params: IdParams,
        body: UpdateWebhookBody,
        response: { 200: UpdatedWebhook, ...errorResponses(404) },
      },
    },
    async (request) =>
      inTransaction(db, (trx) =>
        updateWebhook(trx, request.tenant, request.params.id, request.body, rules, apiKeyAudit(request)),
      ),
  );

  app.delete(
    '/webhooks/:id',
    {
      schema: {
        operationId: 'webhooks.delete',
        tags,
        summary: 'Delete a webhook subscription and its delivery log',
        params: IdParams,
        response: { 204: Type.Null({ description: 'Deleted' }), ...errorResponses(404) },
      },
    },
    async (request, reply) => {
      await inTransaction(db, (trx) =>
        deleteWebhook(trx, request.tenant, request.params.id, apiKeyAudit(request)),
      );
      return reply.code(204).send(null);
    },
  );

  app.get(
    '/webhooks/:id/deliveries',
    {
      schema: {
        operationId: 'webhooks.deliveries.list',
        tags,
        summary: 'The delivery log: one record per attempt, newest first',
        params: IdParams,
        querystring: DeliveriesQuery,
        response: { 200: pageSchema(DeliveryAttemptSchema), ...errorResponses(404) },
      },
    },
    async (request) =>
      paginate(request, byId, (page) =>
        searchDeliveryAttempts(db, request.tenant, request.params.id, request.query, page),
      ),
  );

  app.post(
    '/webhooks/:id/test',
    {
      schema: {
        operationId: 'webhooks.test',
        tags,
        summary: 'Send a webhook.test event to this subscription',
        params: IdParams,
        headers: IdempotencyHeaders,
        response: { 202: TestEventSchema, ...errorResponses(404, 409, 422) },
      },
    },
    async (request, reply) =>
      runIdempotent(db, request, reply, config.idempotencyTtlHours, async (trx) => ({
        status: 202,
        body: { event: await sendTestEvent(trx, request.tenant, request.params.id) },
      })),
  );

  app.post(
    '/webhooks/:id/deliveries/:deliveryId/retry',
    {
      schema: {
        operationId: 'webhooks.deliveries.retry',
        tags,
        summary: 'Send the event of a logged delivery again, now, outside the retry schedule',
        params: DeliveryParams,
        response: { 202: RetryResponse, ...errorResponses(404, 409) },
      },
    },
    async (request, reply) => {
      const { id, deliveryId } = request.params;
      const retry = await inTransaction(db, (trx) => retryDelivery(trx, request.tenant, id, deliveryId));
      reply.code(202);
      return retry;
    },
  );

  app.post(
    '/webhooks/:id/recover',
    {
      schema: {
        operationId: 'webhooks.recover',
        tags,
        summary: 'Re-send every event of a window (up to 14 days) that did not reach this subscription',
        params: IdParams,
        body: RecoverBody,
        response: { 202: RecoverResponse, ...errorResponses(404, 409) },
      },
    },
    async (request, reply) => {
      const recovery = await inTransaction(db, (trx) =>
        recoverWebhook(trx, request.tenant, request.params.id, request.body),
      );
      reply.code(202);
      return recovery;
    },
  );
};
