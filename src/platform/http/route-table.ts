import type { FastifyInstance, FastifySchema } from 'fastify';

/** The parts of a route's schema that describe the operation, beside its request and response schemas. */
export interface RouteSchema extends FastifySchema {
  operationId?: string;
  summary?: string;
  description?: string;
  tags?: string[];
  hide?: boolean;
}

/** One method of one route, as registered: the full URL with `:param` placeholders. */
export interface RouteEntry {
  method: string;
  url: string;
  schema?: RouteSchema;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Every route of the app, filled in as routes are registered (the MCP catalog reads it). */
    routeTable: readonly RouteEntry[];
  }
}

/** Records every route registered on `app` from now on, in `app.routeTable`. Call it before any route. */
export function recordRouteTable(app: FastifyInstance): void {
  const routes: RouteEntry[] = [];
  app.decorate('routeTable', routes);
  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat())
      routes.push({ method, url: route.url, schema: route.schema as RouteSchema | undefined });
  });
}
