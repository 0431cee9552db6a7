import type { FastifyPluginAsync } from 'fastify';
import { errors } from '../../platform/http/errors.ts';
import {
  RETELL_WEBHOOK_PATH,
  RejectedWebhookError,
  type VoiceProvider,
} from '../../providers/voice/index.ts';
import { applyReport } from './voice.ts';

/**
 * `POST /hooks/retell`: Retell's call webhooks, outside `/v1`, with no API key but a signature over
 * the exact bytes of the body. Each report is applied in order, in a transaction of its own, so a
 * delivery Retell repeats after a failure applies only what had not been applied.
 */
export const voiceHookRoutes: FastifyPluginAsync = async (app) => {
  const { db, hooks } = app.platform;
  const { voice } = app.platform.providers;
  // The signature covers the raw body: keep it as text in this plugin.
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) =>
    done(null, body),
  );

  app.post(RETELL_WEBHOOK_PATH, { schema: { hide: true } }, async (request, reply) => {
    if (voice.name !== 'retell') throw errors.noRoute(request.method, request.url);
    let reports: Awaited<ReturnType<VoiceProvider['parseWebhook']>>;
    try {
      reports = await voice.parseWebhook({
        rawBody: typeof request.body === 'string' ? request.body : '',
        headers: request.headers,
      });
    } catch (error) {
      if (!(error instanceof RejectedWebhookError)) throw error;
      if (error.kind === 'malformed') throw errors.invalidRequest(error.message);
      throw errors.forbidden(error.message);
    }
    for (const report of reports) await applyReport(db, hooks.callProgress, report);
    reply.code(204).send();
  });
};
