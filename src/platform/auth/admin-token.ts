import { timingSafeEqual } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { errors } from '../http/errors.ts';

/** Guards every route of `scope` with `Authorization: Bearer <ADMIN_TOKEN>` (each admin plugin calls it). */
export function requireAdminToken(scope: FastifyInstance, adminToken: string): void {
  const expected = Buffer.from(adminToken);
  scope.addHook('onRequest', async (request) => {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(request.headers.authorization ?? '');
    const given = Buffer.from(match?.[1] ?? '');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
      throw errors.unauthorized('The admin API needs Authorization: Bearer <ADMIN_TOKEN>.');
    }
  });
}
