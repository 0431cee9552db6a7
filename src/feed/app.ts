import Fastify, {
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  LogController,
} from 'fastify';
import { trustProxyOption } from '../config.ts';
import {
  gzipped,
  type ServedSnapshot,
  SnapshotCache,
  type SnapshotFormat,
} from '../modules/wallet-feed/snapshot-service.ts';
import type { Platform } from '../platform/context.ts';
import { errors, installErrorHandling } from '../platform/http/errors.ts';
import { installRateLimit, limitedAddress } from '../platform/http/rate-limit.ts';
import { installRequestMetrics } from '../platform/http/request-metrics.ts';

const CONTENT_TYPES: Record<SnapshotFormat, string> = {
  json: 'application/json; charset=utf-8',
  csv: 'text/csv; charset=utf-8',
};
const EXPOSED_HEADERS = [
  'ETag',
  'X-Snapshot-Age-Seconds',
  'X-Snapshot-Stale',
  'X-RateLimit-Limit',
  'X-RateLimit-Remaining',
  'X-RateLimit-Reset',
  'Retry-After',
].join(', ');
/** How long a client should wait before asking again when there is no snapshot yet. */
const NOT_READY_RETRY_SECONDS = 30;

/** The public wallet feed, on its own port so it can sit behind a CDN apart from the API. */
export async function buildFeedApp(
  platform: Platform,
  options: { cache?: SnapshotCache } = {},
): Promise<FastifyInstance> {
  const { config } = platform;
  const app = Fastify({
    loggerInstance: platform.log as FastifyBaseLogger,
    logController: new LogController({ disableRequestLogging: true }),
    trustProxy: trustProxyOption(config.trustProxy),
  });
  app.decorate('platform', platform);
  installErrorHandling(app);
  installRequestMetrics(app);
  const cache =
    options.cache ??
    new SnapshotCache(
      platform.db,
      { cacheMs: config.snapshotCacheMs, refreshMs: config.walletIndexRefreshMs },
      platform.log,
    );
  const maxAge = Math.ceil(config.snapshotCacheMs / 1000);

  // Any origin may read the feed, including with If-None-Match (which needs a preflight).
  app.addHook('onRequest', async (_request, reply) => {
    reply.header('access-control-allow-origin', '*');
    reply.header('access-control-expose-headers', EXPOSED_HEADERS);
  });
  app.options('/*', async (_request, reply) => {
    reply
      .code(204)
      .header('access-control-allow-methods', 'GET, HEAD, OPTIONS')
      .header('access-control-allow-headers', 'If-None-Match, Accept-Encoding')
      .header('access-control-max-age', '86400')
      .send();
  });
  app.get('/healthz', async () => ({ status: 'ok' }));

  await app.register(async (feed) => {
    installRateLimit(feed, {
      redis: platform.redis,
      nameSpace: 'rl:feed:',
      // Per source IP and per format: a client polling both formats gets the limit on each.
      keyOf: (request) => `${limitedAddress(request.ip)}|${formatOf(request)}`,
      maxOf: () => config.feedRateLimitPerMinute,
    });
    for (const format of ['json', 'csv'] as const) {
      feed.get(`/snapshot.${format}`, async (request, reply) => {
        const served = await cache.current();
        if (!served) {
          throw errors.unavailable(
            'The wallet snapshot has not been built yet; retry later.',
            NOT_READY_RETRY_SECONDS,
          );
        }
        return send(request, reply, served, format, maxAge);
      });
    }
  });
  return app;
}

function formatOf(request: FastifyRequest): string {
  return request.url.startsWith('/snapshot.csv') ? 'csv' : 'json';
}

async function send(
  request: FastifyRequest,
  reply: FastifyReply,
  served: ServedSnapshot,
  format: SnapshotFormat,
  maxAge: number,
) {
  const representation = served.snapshot.formats[format];
  reply
    .header('cache-control', `public, max-age=${maxAge}`)
    .header('vary', 'Accept-Encoding')
    .header('etag', representation.etag)
    .header('x-snapshot-age-seconds', String(served.ageSeconds))
    .header('x-snapshot-stale', String(served.stale));
  if (matches(request.headers['if-none-match'], representation.etag)) {
    return reply.code(304).send();
  }
  reply.header('content-type', CONTENT_TYPES[format]);
  if (format === 'csv') reply.header('content-disposition', 'inline; filename="wallet-snapshot.csv"');
  if (acceptsGzip(request.headers['accept-encoding'])) {
    reply.header('content-encoding', 'gzip');
    return reply.send(await gzipped(served.snapshot, format));
  }
  return reply.send(representation.body);
}

/** Weak comparison, as If-None-Match requires: `W/"x"` matches `"x"`, and `*` matches anything. */
function matches(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  const opaque = etag.replace(/^W\//, '');
  return header.split(',').some((candidate) => {
    const tag = candidate.trim();
    return tag === '*' || tag.replace(/^W\//, '') === opaque;
  });
}

function acceptsGzip(header: string | undefined): boolean {
  if (!header) return false;
  return header.split(',').some((part) => {
    const [coding, ...params] = part.trim().toLowerCase().split(';');
    if (coding !== 'gzip' && coding !== 'x-gzip') return false;
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    return !q || Number(q.slice(2)) > 0;
  });
}
