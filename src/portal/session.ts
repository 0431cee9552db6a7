import type { FastifyReply, FastifyRequest } from 'fastify';
import { accounts } from '../modules/users/service.ts';
import type { Platform } from '../platform/context.ts';
import type { PortalContext, Viewer } from './context.ts';
import { CsrfTokens } from './csrf.ts';

const SESSION_COOKIE = 'ap_session';
const CSRF_COOKIE = 'ap_csrf';

export type PortalSessions = ReturnType<typeof portalSessions>;

/**
 * The portal's cookies: `ap_session` holds the opaque session token (its SHA-256 is what the users
 * module stores), `ap_csrf` the browser's CSRF secret. Both HttpOnly, SameSite=Lax, Secure when the
 * public base URL is https, and scoped to `/portal`.
 */
export function portalSessions(platform: Platform) {
  const secure = platform.config.publicBaseUrl.startsWith('https:');
  const cookie = { path: '/portal', httpOnly: true, sameSite: 'lax' as const, secure };
  const people = accounts(platform);

  return {
    csrfCookie: CSRF_COOKIE,

    /** The request's viewer (null when signed out) and its CSRF token; sets the CSRF cookie on a first visit. */
    async context(request: FastifyRequest, reply: FastifyReply, csrf: CsrfTokens): Promise<PortalContext> {
      const token = request.cookies[SESSION_COOKIE];
      const resolved = token ? await people.resolveSession(platform.db, token) : null;
      const viewer: Viewer | null = resolved && {
        sessionId: resolved.session.id,
        user: {
          id: resolved.user.id,
          email: resolved.user.email,
          role: resolved.user.role,
          client_id: resolved.user.client_id,
        },
        org: { id: resolved.org.id, name: resolved.org.name, house_client_id: resolved.org.house_client_id },
      };
      if (token && !viewer) reply.clearCookie(SESSION_COOKIE, cookie);
      let browserSecret = request.cookies[CSRF_COOKIE];
      if (!browserSecret) {
        browserSecret = CsrfTokens.newBrowserSecret();
        request.cookies[CSRF_COOKIE] = browserSecret;
        reply.setCookie(CSRF_COOKIE, browserSecret, cookie);
      }
      const path = request.url.split('?')[0].replace(/\/$/, '') || '/portal';
      return {
        viewer,
        csrf: csrf.token(browserSecret, viewer?.sessionId ?? null),
        path,
        csrfValid: false,
      };
    },

    /** The session cookie of a new session (after sign-in, invitation or reset). */
    start(reply: FastifyReply, session: { token: string; expiresAt: Date }): void {
      reply.setCookie(SESSION_COOKIE, session.token, { ...cookie, expires: session.expiresAt });
    },

    /** The session token the request carries, to end it. */
    tokenOf(request: FastifyRequest): string | undefined {
      return request.cookies[SESSION_COOKIE];
    },

    end(reply: FastifyReply): void {
      reply.clearCookie(SESSION_COOKIE, cookie);
    },
  };
}
