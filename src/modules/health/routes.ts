import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { sql } from 'kysely';
import { migrationsCurrent } from '../../platform/db/migrate.ts';

const Status = Type.Object({
  status: Type.String(),
  checks: Type.Optional(Type.Record(Type.String(), Type.String())),
});

/** Liveness and readiness, outside `/v1` and without auth, for load balancers and orchestrators. */
export const healthRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/healthz', { schema: { hide: true, response: { 200: Status } } }, async () => ({ status: 'ok' }));

  app.get(
    '/readyz',
    { schema: { hide: true, response: { 200: Status, 503: Status } } },
    async (_request, reply) => {
      const { platform } = app;
      let database = 'ok';
      let migrations = 'ok';
      try {
        await sql`SELECT 1`.execute(platform.db);
        if (!(await migrationsCurrent(platform.database))) migrations = 'pending';
      } catch {
        database = 'unreachable';
        migrations = 'unknown';
      }
      const ready = database === 'ok' && migrations === 'ok';
      reply.code(ready ? 200 : 503);
      return { status: ready ? 'ready' : 'not_ready', checks: { database, migrations } };
    },
  );
};
