import Fastify, { type FastifyBaseLogger, type FastifyInstance, LogController } from 'fastify';
import type { Platform } from '../../platform/context.ts';
import { installErrorHandling } from '../../platform/http/errors.ts';
import { healthRoutes } from './routes.ts';

/** `/healthz`, `/readyz` and `/metrics` alone, on `METRICS_PORT`: how a `worker` process is watched and scraped. */
export async function buildStatusApp(platform: Platform): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: platform.log as FastifyBaseLogger,
    logController: new LogController({ disableRequestLogging: true }),
  });
  app.decorate('platform', platform);
  installErrorHandling(app);
  await app.register(healthRoutes);
  return app;
}
