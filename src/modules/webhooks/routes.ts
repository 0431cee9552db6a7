import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { open, seal } from '../../platform/crypto.ts';
import { runIdempotent } from '../../platform/http/idempotency.ts';
import {
  decodePageToken,
  pageQuerySchema,
  pageSchema,
  pageScope,
  toPage,
} from '../../platform/http/pagination.ts';
import { errorResponses, IdempotencyHeaders, IdParams, Query } from '../../platform/http/schemas.ts';
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
  sendTestEvent,
  toDeliveryAttempt,
  toWebhook,
  updateWebhook,
} from './service.ts';
import { SIGNING_HEADER } from './signing.ts';
import { listAttempts, listSubscriptions } from './store.ts';

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
      const { tenant } = request;
      // A replayed response is stored with the secret sealed, so no plaintext secret is ever at rest.
      const stored = await runIdempotent(db, request, reply, config.idempotencyTtlHours, async (trx) => {
        const { webhook, secret } = await createWebhook(trx, tenant, request.body, rules);
        return {
          status: 201,
          body: {
            webhook: toWebhook(webhook),
            sealed_secret: seal(secrets.encryptionKey, secret, responseAad(webhook.id)).toString('base64'),
          },
        };
      });
      const { sealed_secret, ...rest } = stored;
      return {
        ...rest,
        secret: open(
          secrets.encryptionKey,
          Buffer.from(sealed_secret, 'base64'),
          responseAad(rest.webhook.id),
        ),
        signing_header: SIGNING_HEADER,
      };
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
    async (request) => {
      const { limit = 50, page_token } = request.query;
      const scope = pageScope('webhooks.list', request.tenant);
      const cursor = decodePageToken(page_token, scope);
      const rows = await listSubscriptions(db, request.tenant, { before: cursor?.[0] as string, limit });
      const page = toPage(rows, limit, scope, (row) => [row.id]);
      return { ...page, data: page.data.map(toWebhook) };
    },
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
    async (request) => ({ webhook: toWebhook(await getWebhook(db, request.tenant, request.params.id)) }),
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
    async (request) => {
      const { webhook, secret } = await updateWebhook(
        db,
        request.tenant,
        request.params.id,
        request.body,
        rules,
      );
      return secret
        ? { webhook: toWebhook(webhook), secret, signing_header: SIGNING_HEADER }
        : { webhook: toWebhook(webhook) };
    },
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
      await deleteWebhook(db, request.tenant, request.params.id);
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
    async (request) => {
      const { limit = 50, page_token, status } = request.query;
      const webhook = await getWebhook(db, request.tenant, request.params.id);
      const scope = pageScope(`webhooks.deliveries:${webhook.id}:${status ?? ''}`, request.tenant);
      const cursor = decodePageToken(page_token, scope);
      const rows = await listAttempts(db, webhook, { status, before: cursor?.[0] as string, limit });
      const page = toPage(rows, limit, scope, (row) => [row.id]);
      return { ...page, data: page.data.map(toDeliveryAttempt) };
    },
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
      const { webhook, attempt } = await retryDelivery(
        db,
        request.tenant,
        request.params.id,
        request.params.deliveryId,
      );
      reply.code(202);
      return {
        retry: {
          webhook_id: webhook.id,
          delivery_id: attempt.id,
          event_id: attempt.event_id,
          requested_at: new Date(),
        },
      };
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
      const { webhook, since, until, queued } = await recoverWebhook(
        db,
        request.tenant,
        request.params.id,
        request.body,
      );
      reply.code(202);
      return { recovery: { webhook_id: webhook.id, since, until, queued } };
    },
  );
};

/** A stored create response's secret is bound to the subscription it was made for. */
function responseAad(webhookId: string): string {
  return `webhook-create-response:${webhookId}`;
}
