import type { FastifyInstance } from 'fastify';
import { metrics } from '../metrics.ts';

const labels = ['method', 'route', 'status_class'] as const;
const requests = metrics.counter('http_requests_total', 'HTTP requests answered, by route pattern.', labels);
const duration = metrics.histogram(
  'http_request_duration_seconds',
  'Time from the request arriving to its response being sent, by route pattern.',
  labels,
);

/**
 * Counts and times every response of `app`. The route label is the route's pattern
 * (`/v1/crm/contacts/:id`), never the path asked for, so ids and typos add no series; a request that
 * matched no route is `unmatched`.
 */
export function installRequestMetrics(app: FastifyInstance): void {
  app.addHook('onResponse', (request, reply, done) => {
    const value = {
      method: request.method,
      route: request.is404 ? 'unmatched' : (request.routeOptions.url ?? 'unmatched'),
      status_class: `${Math.floor(reply.statusCode / 100)}xx`,
    };
    requests.inc(value);
    duration.observe(value, reply.elapsedTime / 1000);
    done();
  });
}
