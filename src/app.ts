import { randomUUID } from 'node:crypto';
import swagger from '@fastify/swagger';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import apiReference from '@scalar/fastify-api-reference';
import Fastify, {
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyPluginAsync,
  LogController,
} from 'fastify';
import { trustProxyOption } from './config.ts';
import { mcpRoutes } from './mcp/routes.ts';
import { activityRoutes } from './modules/activities/routes.ts';
import { agentRoutes } from './modules/agents/routes.ts';
import { llmSimulatorRoutes } from './modules/ai/llm-simulator-routes.ts';
import { aiRoutes } from './modules/ai/routes.ts';
import { aiJobRoutes } from './modules/ai-jobs/routes.ts';
import { voiceHookRoutes } from './modules/calls/hook-routes.ts';
import { callRoutes } from './modules/calls/routes.ts';
import { callIdOfProviderCall } from './modules/calls/service.ts';
import { voiceSimulatorCallRoutes, voiceSimulatorScriptRoutes } from './modules/calls/simulator-routes.ts';
import { clientRoutes } from './modules/clients/routes.ts';
import { companyRoutes } from './modules/companies/routes.ts';
import { contactRoutes } from './modules/contacts/routes.ts';
import { dealRoutes } from './modules/deals/routes.ts';
import { docsRoutes } from './modules/docs/routes.ts';
import { emailSimulatorRoutes } from './modules/email/admin-routes.ts';
import { eventRoutes } from './modules/events/routes.ts';
import { fuelRoutes } from './modules/fuel/routes.ts';
import { healthRoutes } from './modules/health/routes.ts';
import { knowledgeRoutes } from './modules/knowledge/routes.ts';
import { listRoutes } from './modules/lists/routes.ts';
import { meRoutes } from './modules/me/routes.ts';
import { smsHookRoutes, smsSimulatorRoutes } from './modules/messaging/hook-routes.ts';
import { messagingRoutes } from './modules/messaging/routes.ts';
import { numberAdminRoutes } from './modules/numbers/admin-routes.ts';
import { numberRoutes } from './modules/numbers/routes.ts';
import { orgAdminRoutes } from './modules/orgs/admin-routes.ts';
import { pipelineRoutes } from './modules/pipelines/routes.ts';
import { sdrRoutes } from './modules/sdr/routes.ts';
import { sequenceRoutes } from './modules/sequences/routes.ts';
import { unsubscribeRoutes } from './modules/sequences/unsubscribe-routes.ts';
import { taskRoutes } from './modules/tasks/routes.ts';
import { userAdminRoutes } from './modules/users/admin-routes.ts';
import { feedAdminRoutes } from './modules/wallet-feed/admin-routes.ts';
import { webhookRoutes } from './modules/webhooks/routes.ts';
import { failedAuthLimit } from './platform/auth/failed-auth-limit.ts';
import { resolveTenant } from './platform/auth/tenant.ts';
import type { Platform } from './platform/context.ts';
import { withCodeSamples } from './platform/http/code-samples.ts';
import { frameworkErrors, installErrorHandling } from './platform/http/errors.ts';
import { logSafeUrl } from './platform/http/log-safe.ts';
import { setPageTokenSecret } from './platform/http/pagination.ts';
import { installKeyRateLimit } from './platform/http/rate-limit.ts';
import { lazyRequestLogger } from './platform/http/request-log.ts';
import { installRequestMetrics } from './platform/http/request-metrics.ts';
import { recordRouteTable } from './platform/http/route-table.ts';
import { ErrorBody } from './platform/http/schemas.ts';
import { installValidation } from './platform/http/validation.ts';
import { portal } from './portal/index.ts';
import { LocalStorage } from './providers/storage/local.ts';
import { localUploadRoutes } from './providers/storage/upload-routes.ts';

export const API_VERSION = '1.0.0';
const REQUEST_ID = /^[\w.:-]{1,128}$/;

/** Routes that need a tenant API key, all under `/v1`. A module adds its plugin here. */
const tenantModules = [
  meRoutes,
  eventRoutes,
  contactRoutes,
  companyRoutes,
  pipelineRoutes,
  dealRoutes,
  activityRoutes,
  taskRoutes,
  listRoutes,
  webhookRoutes,
  fuelRoutes,
  numberRoutes,
  agentRoutes,
  callRoutes,
  messagingRoutes,
  sequenceRoutes,
  aiRoutes,
  aiJobRoutes,
  knowledgeRoutes,
  sdrRoutes,
  clientRoutes,
];

/** Builds the HTTP app: platform plugins first, then every module's routes, grouped by auth level. */
export async function buildApp(
  platform: Platform,
  options: { extraTenantRoutes?: FastifyPluginAsync[] } = {},
): Promise<FastifyInstance> {
  const { config } = platform;
  const [current, ...previous] = platform.secrets.encryptionKey.derive('page-tokens');
  setPageTokenSecret(current, previous);

  const app = Fastify({
    loggerInstance: platform.log as FastifyBaseLogger,
    logController: new LogController({ disableRequestLogging: true }),
    childLoggerFactory: lazyRequestLogger,
    trustProxy: trustProxyOption(config.trustProxy),
    bodyLimit: 1_048_576,
    requestIdHeader: false,
    // Router refusals (a path past its length limit, bad % encoding) in the error envelope.
    frameworkErrors,
    genReqId: (request) => {
      const given = request.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
    },
  }).withTypeProvider<TypeBoxTypeProvider>();

  app.decorate('platform', platform);
  recordRouteTable(app);
  app.addSchema(ErrorBody);
  installValidation(app);
  installErrorHandling(app);
  installRequestMetrics(app);
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    done();
  });
  if (platform.log.isLevelEnabled('debug')) {
    app.addHook('onResponse', async (request, reply) => {
      request.log.debug(
        {
          method: request.method,
          // No credential a client put in the query reaches the log.
          url: logSafeUrl(request.url),
          status: reply.statusCode,
          ms: Math.round(reply.elapsedTime),
        },
        'request',
      );
    });
  }

  await app.register(swagger, {
    refResolver: {
      buildLocalReference: (json, _baseUri, _fragment, i) => (json.$id as string) ?? `def-${i}`,
    },
    // Paths stay whole (`/v1/...`) whatever the server URL holds.
    stripBasePath: false,
    // Each operation's example in curl and in the SDK, shown by the reference page.
    transformObject: (documents) =>
      withCodeSamples('openapiObject' in documents ? documents.openapiObject : documents.swaggerObject),
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Agency Platform API',
        version: API_VERSION,
        description:
          'CRM, messaging, voice, AI, sequences, campaigns and webhooks for agencies and their clients.',
      },
      servers: [{ url: config.publicBaseUrl }],
      components: {
        securitySchemes: {
          bearerAuth: { type: 'http', scheme: 'bearer', description: 'An agency or client API key.' },
        },
      },
      security: [{ bearerAuth: [] }],
    },
  });

  await app.register(healthRoutes);

  await app.register(
    async (v1) => {
      v1.decorateRequest('tenant', null as never);
      // Failed authentications are throttled per address, so keys cannot be guessed.
      const authFailures = failedAuthLimit(platform.redis, config.authFailuresPerMinute);
      v1.addHook('onRequest', async (request) => {
        request.tenant = await authFailures.guard(request, () =>
          resolveTenant(request, platform.keys, platform.clients),
        );
      });
      installKeyRateLimit(v1, platform.redis);
      for (const routes of [...tenantModules, ...(options.extraTenantRoutes ?? [])])
        await v1.register(routes);
    },
    { prefix: '/v1' },
  );

  // Public, no key: the docs API and site.
  await app.register(docsRoutes);
  // The MCP endpoint resolves the key itself, per tool call (see src/mcp/routes.ts).
  await app.register(mcpRoutes, { prefix: '/v1' });
  // The portal's back end, behind ADMIN_TOKEN.
  await app.register(orgAdminRoutes, { prefix: '/admin/v1' });
  await app.register(feedAdminRoutes, { prefix: '/admin/v1' });
  await app.register(userAdminRoutes, { prefix: '/admin/v1' });
  await app.register(emailSimulatorRoutes, { prefix: '/admin/v1' });
  await app.register(llmSimulatorRoutes, { prefix: '/admin/v1' });
  await app.register(voiceSimulatorScriptRoutes, { prefix: '/admin/v1' });
  const { voice } = platform.providers;
  await app.register(voiceSimulatorCallRoutes, {
    prefix: '/admin/v1',
    voice,
    callIdOf: (providerCallId) => callIdOfProviderCall(platform.db, voice.name, providerCallId),
  });
  // Provider callbacks: outside /v1, no API key, signature-verified.
  await app.register(voiceHookRoutes);
  await app.register(numberAdminRoutes, { prefix: '/admin/v1' });
  await app.register(smsSimulatorRoutes, { prefix: '/admin/v1' });
  await app.register(smsHookRoutes);
  // The one-click unsubscribe link of sequence emails (token-authenticated, outside /v1).
  await app.register(unsubscribeRoutes);
  // The web portal: server-rendered pages over the same services, signed in with a session cookie.
  await app.register(portal, { prefix: '/portal' });
  // The local storage's signed upload URLs (outside /v1, like presigned S3 URLs)
  if (platform.providers.storage instanceof LocalStorage)
    await app.register(localUploadRoutes, { storage: platform.providers.storage });

  app.get('/v1/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  // The reference page serves its script itself (no CDN) and loads no web fonts: it works offline.
  await app.register(apiReference, {
    routePrefix: '/v1/reference',
    logLevel: 'warn',
    configuration: {
      pageTitle: 'Agency Platform API reference',
      title: 'Agency Platform API',
      withDefaultFonts: false,
      hideClientButton: true,
      hiddenClients: true,
      showDeveloperTools: 'never',
      telemetry: false,
      documentDownloadType: 'json',
      // The vendor's hosted AI chat and MCP helpers call out to its servers.
      agent: { disabled: true },
      mcp: { disabled: true },
    },
  });

  return app;
}
