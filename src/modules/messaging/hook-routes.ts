import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsync } from 'fastify';
import { publicUrl } from '../../config.ts';
import { requireAdminToken } from '../../platform/auth/admin-token.ts';
import type { Platform } from '../../platform/context.ts';
import { inTransaction } from '../../platform/db/transaction.ts';
import { errors } from '../../platform/http/errors.ts';
import {
  type InboundSms,
  SmsSignatureError,
  SmsWebhookError,
  type SmsWebhookRequest,
  simulatedInbound,
} from '../../providers/sms/index.ts';
import { normalizePhone } from '../contacts/service.ts';
import { SimulatedInboundBody } from './schemas.ts';
import { applyStatus, firstInbound, RepeatedInbound, receiveMessage } from './service.ts';

/**
 * The edge of an inbound message (carrier webhook or simulator): one transaction; a repeat that lost
 * the race to a concurrent delivery of the same message answers the first one's id.
 */
function receive(platform: Platform, inbound: InboundSms): Promise<string> {
  const { db, hooks, providers } = platform;
  const provider = providers.sms.name;
  return inTransaction(db, (trx) => receiveMessage(trx, hooks.inboundMessage, provider, inbound)).catch(
    (error) => {
      if (error instanceof RepeatedInbound) return firstInbound(db, provider, inbound);
      throw error;
    },
  );
}

/**
 * Twilio's webhooks, outside `/v1`, with no API key but Twilio's signature over `PUBLIC_BASE_URL` + the
 * path and query and the form parameters: `POST /hooks/twilio/sms` (an inbound message) and
 * `POST /hooks/twilio/status` (a status callback). A missing or bad signature is 403 and changes nothing.
 * Only while `SMS_PROVIDER=twilio`; 404 otherwise.
 */
export const smsHookRoutes: FastifyPluginAsync = async (app) => {
  const { db, config } = app.platform;
  const provider = app.platform.providers.sms;
  // The signature covers the form parameters as sent: keep the body as text in this plugin.
  app.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'string' },
    (_request, body, done) => done(null, body),
  );

  const webhook = (request: { url: string; headers: SmsWebhookRequest['headers']; body: unknown }) => ({
    url: publicUrl(config, request.url),
    headers: request.headers,
    body: typeof request.body === 'string' ? request.body : '',
  });

  const parsed = <T>(parse: () => T): T => {
    try {
      return parse();
    } catch (error) {
      if (error instanceof SmsSignatureError) throw errors.forbidden(error.message);
      if (error instanceof SmsWebhookError) throw errors.invalidRequest(error.message);
      throw error;
    }
  };

  app.post('/hooks/twilio/sms', { schema: { hide: true } }, async (request, reply) => {
    if (provider.name !== 'twilio') throw errors.noRoute(request.method, request.url);
    const inbound = parsed(() => provider.parseInbound(webhook(request)));
    await receive(app.platform, inbound);
    // An empty TwiML answer: no automatic reply.
    reply.code(200).type('text/xml').send('<?xml version="1.0" encoding="UTF-8"?><Response></Response>');
  });

  app.post('/hooks/twilio/status', { schema: { hide: true } }, async (request, reply) => {
    if (provider.name !== 'twilio') throw errors.noRoute(request.method, request.url);
    const update = parsed(() => provider.parseStatus(webhook(request)));
    await inTransaction(db, (trx) => applyStatus(trx, update, provider.name));
    reply.code(204).send();
  });
};

/**
 * `POST /admin/v1/simulator/sms/inbound` `{from, to, body, media_urls?}` → 202 `{message_id}`: exactly
 * what an inbound carrier message does (the Twilio hook's code path after parsing). Simulator only.
 */
export const smsSimulatorRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { secrets, config } = app.platform;
  requireAdminToken(app, secrets.adminToken);
  const provider = app.platform.providers.sms;

  app.post(
    '/simulator/sms/inbound',
    {
      schema: {
        hide: true,
        tags: ['admin'],
        body: SimulatedInboundBody,
        response: { 202: Type.Object({ message_id: Type.String() }) },
      },
    },
    async (request, reply) => {
      if (provider.name !== 'simulator') throw errors.noRoute(request.method, request.url);
      const { body } = request;
      const inbound = simulatedInbound({
        from: normalizePhone(body.from, config.phoneDefaultCountry, 'from'),
        to: normalizePhone(body.to, config.phoneDefaultCountry, 'to'),
        body: body.body,
        media_urls: body.media_urls,
      });
      const messageId = await receive(app.platform, inbound);
      reply.code(202);
      return { message_id: messageId };
    },
  );
};
