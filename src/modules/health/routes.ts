import { timingSafeEqual } from 'node:crypto';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { sql } from 'kysely';
import { migrationsCurrent } from '../../platform/db/migrate.ts';
import { errors } from '../../platform/http/errors.ts';
import { lastHeartbeat } from '../../platform/jobs/heartbeat.ts';
import { metrics, registry } from '../../platform/metrics.ts';
import { outboxLagSeconds, queueDepth, rateLimitState } from './status.ts';

const Ready = Type.Object({
  status: Type.String(),
  checks: Type.Record(Type.String(), Type.String()),
  worker: Type.Object({
    last_heartbeat_at: Type.Union([Type.String(), Type.Null()]),
    heartbeat_age_seconds: Type.Union([Type.Number(), Type.Null()]),
  }),
  outbox: Type.Object({ lag_seconds: Type.Union([Type.Number(), Type.Null()]) }),
  rate_limits: Type.Object({ store: Type.String(), reachable: Type.Boolean(), enforced: Type.Boolean() }),
});

const databaseUp = metrics.gauge('database_up', '1 when the last scrape reached the database, else 0.');
const outboxLag = metrics.gauge(
  'events_outbox_lag_seconds',
  'Age of the oldest event not yet handed to its consumers (webhooks); 0 when none waits.',
);
const depth = metrics.gauge('worker_queue_depth', 'Queued jobs that are due and wait for a worker.');
const heartbeatAge = metrics.gauge(
  'worker_heartbeat_age_seconds',
  'Seconds since the newest heartbeat of any worker process on this database.',
);
const poolConnections = metrics.gauge(
  'db_pool_connections',
  "Connections of this process's database pool: in_use or idle.",
  ['state'],
);
const poolWaiting = metrics.gauge(
  'db_pool_waiting_requests',
  'Queries of this process waiting for a pool connection.',
);

/**
 * Liveness, readiness and metrics, outside `/v1` and without an API key, for load balancers,
 * orchestrators and Prometheus. `/metrics` asks for `Authorization: Bearer <METRICS_TOKEN>` when
 * that is set.
 */
export const healthRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { platform } = app;
  app.get('/healthz', { schema: { hide: true } }, async () => ({ status: 'ok' }));

  app.get(
    '/readyz',
    { schema: { hide: true, response: { 200: Ready, 503: Ready } } },
    async (_request, reply) => {
      const checks = { database: 'ok', migrations: 'ok', rate_limits: 'ok' };
      let heartbeat: Date | null = null;
      let lag: number | null = null;
      try {
        await sql`SELECT 1`.execute(platform.db);
        if (!(await migrationsCurrent(platform.database))) checks.migrations = 'pending';
        heartbeat = await lastHeartbeat(platform.db);
        lag = await outboxLagSeconds(platform.db);
      } catch {
        checks.database = 'unreachable';
        checks.migrations = 'unknown';
      }
      const limits = rateLimitState(platform);
      if (!limits.reachable) checks.rate_limits = limits.enforced ? 'redis_unreachable' : 'not_enforced';
      // Failing open, unenforced limits are reported, not a reason to take every API process out of
      // the load balancer; failing closed, limited requests are refused, so the process is not ready.
      const ready =
        checks.database === 'ok' && checks.migrations === 'ok' && checks.rate_limits !== 'redis_unreachable';
      reply.code(ready ? 200 : 503);
      return {
        status: ready ? 'ready' : 'not_ready',
        checks,
        worker: {
          last_heartbeat_at: heartbeat?.toISOString() ?? null,
          heartbeat_age_seconds: heartbeat ? Math.max(0, (Date.now() - heartbeat.getTime()) / 1000) : null,
        },
        outbox: { lag_seconds: lag },
        rate_limits: limits,
      };
    },
  );

  const token = platform.config.metricsToken ? Buffer.from(platform.config.metricsToken) : null;
  app.get('/metrics', { schema: { hide: true } }, async (request, reply) => {
    if (token) {
      const given = Buffer.from(/^Bearer\s+(\S+)\s*$/i.exec(request.headers.authorization ?? '')?.[1] ?? '');
      if (given.length !== token.length || !timingSafeEqual(given, token))
        throw errors.unauthorized('GET /metrics needs Authorization: Bearer <METRICS_TOKEN>.');
    }
    const pool = platform.database.pool;
    poolConnections.set({ state: 'in_use' }, pool.totalCount - pool.idleCount);
    poolConnections.set({ state: 'idle' }, pool.idleCount);
    poolWaiting.set(pool.waitingCount);
    try {
      outboxLag.set(await outboxLagSeconds(platform.db));
      depth.set(await queueDepth(platform.db));
      const beat = await lastHeartbeat(platform.db);
      if (beat) heartbeatAge.set(Math.max(0, (Date.now() - beat.getTime()) / 1000));
      databaseUp.set(1);
    } catch {
      databaseUp.set(0);
    }
    return reply.type(registry.contentType).send(await registry.metrics());
  });
};
