import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { requireAdminToken } from '../../platform/auth/admin-token.ts';
import { ApiError } from '../../platform/http/errors.ts';
import { Body } from '../../platform/http/schemas.ts';
import { setSimulatedFailures } from '../../providers/llm/index.ts';

const hidden = { hide: true, tags: ['admin'] };

/**
 * `POST /admin/v1/simulator/llm/failures {count}`: the next `count` calls of the builtin model (gists,
 * briefs, enrichments, in any process) fail as an unavailable model would; 0 clears it. 404 unless
 * `LLM_PROVIDER=builtin`.
 */
export const llmSimulatorRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { db, secrets, config } = app.platform;
  requireAdminToken(app, secrets.adminToken);

  app.post(
    '/simulator/llm/failures',
    {
      schema: {
        ...hidden,
        body: Body({ count: Type.Integer({ minimum: 0, maximum: 10_000 }) }),
        response: { 200: Type.Object({ failures: Type.Object({ remaining: Type.Integer() }) }) },
      },
    },
    async (request) => {
      if (config.llmProvider !== 'builtin')
        throw new ApiError(404, 'not_found', 'The LLM simulator is not active: LLM_PROVIDER is not builtin.');
      await setSimulatedFailures(db, request.body.count);
      return { failures: { remaining: request.body.count } };
    },
  );
};
