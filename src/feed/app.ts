import Fastify, { type FastifyBaseLogger, type FastifyInstance, LogController } from 'fastify';
import type { Platform } from '../platform/context.ts';
import { installErrorHandling } from '../platform/http/errors.ts';

/** The public wallet feed, on its own port so it can sit behind a CDN apart from the API. */
export async function buildFeedApp(platform: Platform): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: platform.log as FastifyBaseLogger,
    logController: new LogController({ disableRequestLogging: true }),
    trustProxy: platform.config.trustProxy,
  });
  app.decorate('platform', platform);
  installErrorHandling(app);
  app.get('/healthz', async () => ({ status: 'ok' }));
  return app;
}
