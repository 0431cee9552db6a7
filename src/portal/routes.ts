import { existsSync } from 'node:fs';
import path from 'node:path';
import fastifyCookie from '@fastify/cookie';
import fastifyFormbody from '@fastify/formbody';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { toApiError } from '../platform/http/errors.ts';
import type { PortalContext } from './context.ts';
import { CsrfTokens } from './csrf.ts';
import { sendErrorPage } from './render.tsx';
import { type PortalSessions, portalSessions } from './session.ts';

/** The portal's pages, under `/portal`: a signed-out part (sign-in, invitations, reset) and the rest. */
export interface PortalPages {
  signedOut: FastifyPluginAsync[];
  signedIn: FastifyPluginAsync[];
}

/** The stylesheet and script, beside this file; a build (dist/) serves them from the sources. */
const ASSETS_DIR = [
  path.join(import.meta.dirname, 'assets'),
  path.resolve(import.meta.dirname, '../../../src/portal/assets'),
].find((dir) => existsSync(dir))!;

/**
 * Content-Security-Policy of every portal response: scripts and styles from the portal's own files
 * only (no inline script, no style attribute), forms post to the portal only, no framing.
 */
const SECURITY_HEADERS = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'referrer-policy': 'same-origin',
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'cross-origin-opener-policy': 'same-origin',
};

declare module 'fastify' {
  interface FastifyInstance {
    portalSessions: PortalSessions;
  }
}

/** Mounts the portal on the API's app, under `/portal`. */
export function portalRoutes(pages: PortalPages): FastifyPluginAsync {
  return async (app) => {
    const { platform } = app;
    const csrf = new CsrfTokens(platform.secrets.encryptionKey.derive('portal-csrf'));
    const sessions = portalSessions(platform);
    app.decorate('portalSessions', sessions);
    // Pages are no API operation: out of the OpenAPI document (and so of the SDK and MCP catalog).
    app.addHook('onRoute', (route) => {
      route.schema = { ...route.schema, hide: true } as typeof route.schema;
    });

    // Forms post as application/x-www-form-urlencoded here only; the API stays JSON.
    await app.register(fastifyFormbody, { bodyLimit: 65_536 });
    await app.register(fastifyCookie);
    await app.register(fastifyStatic, {
      root: ASSETS_DIR,
      prefix: '/assets/',
      decorateReply: false,
      maxAge: '1h',
      index: false,
    });

    app.addHook('onSend', async (request, reply) => {
      reply.headers(SECURITY_HEADERS);
      if (!request.url.startsWith('/portal/assets/')) reply.header('cache-control', 'no-store');
    });

    app.addHook('onRequest', async (request, reply) => {
      if (request.url.startsWith('/portal/assets/')) return;
      request.portal = await sessions.context(request, reply, csrf);
    });

    app.addHook('preHandler', async (request) => {
      if (request.method !== 'POST' || !request.portal) return;
      const body = (request.body ?? {}) as Record<string, unknown>;
      request.portal.csrfValid = csrf.verify(
        body._csrf,
        request.cookies[sessions.csrfCookie],
        request.portal.viewer?.sessionId ?? null,
      );
    });

    app.setNotFoundHandler((request, reply) => sendErrorPage(request, reply, 404));
    app.setErrorHandler((error, request, reply) => {
      const apiError = toApiError(error as Error);
      if (apiError.statusCode === 401) return signInFirst(request, reply);
      if (apiError.statusCode >= 500)
        request.log.error({ err: error, reqId: request.id }, 'portal page failed');
      if (apiError.statusCode === 429 && apiError.headers) reply.headers(apiError.headers);
      const status = [403, 404, 429].includes(apiError.statusCode)
        ? apiError.statusCode
        : apiError.statusCode >= 500
          ? 500
          : 404;
      return sendErrorPage(request, reply, status);
    });

    const routes = { get: new Set<string>(), post: new Set<string>() };
    app.addHook('onRoute', (route) => {
      for (const method of [route.method].flat()) {
        if (method === 'GET') routes.get.add(route.url);
        if (method === 'POST') routes.post.add(route.url);
      }
    });
    for (const page of pages.signedOut) await app.register(page);
    await app.register(async (signedIn: FastifyInstance) => {
      signedIn.addHook('onRequest', async (request, reply) => {
        if (!request.portal.viewer) return signInFirst(request, reply);
      });
      for (const page of pages.signedIn) await signedIn.register(page);
    });
    redirectPostOnlyAddresses(app, routes);
  };
}

/**
 * A form post's answer (a secret shown once, a refusal) is rendered at the post's address, and a
 * reload or a return to it there is a GET: for every POST-only address (`/webhooks/:id/rotate`),
 * a GET answers 303 to the nearest page above it (`/webhooks/:id`) instead of a 404; nothing is
 * submitted again.
 */
function redirectPostOnlyAddresses(app: FastifyInstance, routes: { get: Set<string>; post: Set<string> }) {
  for (const url of routes.post) {
    if (routes.get.has(url)) continue;
    const segments = url.split('/');
    let target = '';
    for (let end = segments.length - 1; end > 1 && !target; end--) {
      const candidate = segments.slice(0, end).join('/');
      if (routes.get.has(candidate)) target = candidate;
    }
    target ||= app.prefix;
    app.get(url.slice(app.prefix.length), (request, reply) => {
      const params = request.params as Record<string, string>;
      const to = target.replace(/:(\w+)/g, (_, name: string) => encodeURIComponent(params[name] ?? ''));
      return reply.redirect(to, 303);
    });
  }
}

/** A signed-out visitor of a signed-in page goes to the sign-in page, and back there after it. */
function signInFirst(request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const next = request.method === 'GET' ? `?next=${encodeURIComponent(request.url)}` : '';
  return reply.redirect(`/portal/sign-in${next}`, 303);
}

export type { PortalContext };
