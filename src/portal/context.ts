import type { FastifyRequest } from 'fastify';
import { type AuditContext, userAudit } from '../modules/audit/service.ts';
import { getClient } from '../modules/clients/service.ts';
import type { Tenant } from '../platform/auth/tenant.ts';
import { isUuid } from '../platform/db/ids.ts';
import { errors } from '../platform/http/errors.ts';

export type Role = 'owner' | 'admin' | 'member' | 'client';

/** The signed-in person: their session, user and org. */
export interface Viewer {
  sessionId: string;
  user: { id: string; email: string; role: Role; client_id: string | null };
  org: { id: string; name: string; house_client_id: string };
}

/** What every portal page knows of its request. */
export interface PortalContext {
  viewer: Viewer | null;
  /** The CSRF token every form of this page carries. */
  csrf: string;
  /** The path, for the navigation's current page. */
  path: string;
  /** On a POST: whether it carried this browser's and session's CSRF token. */
  csrfValid: boolean;
}

/**
 * The tenant a portal action works on: the same scope an API key resolves to, without a key. Agency
 * users act as the agency (its house client, org-wide) or as any client of the org; client users as
 * their own client only.
 */
export type PortalScope = Pick<Tenant, 'orgId' | 'clientId' | 'isClientScoped'>;

declare module 'fastify' {
  interface FastifyRequest {
    portal: PortalContext;
  }
}

export const AGENCY_ROLES: readonly Role[] = ['owner', 'admin', 'member'];
export const MANAGERS: readonly Role[] = ['owner', 'admin'];

export function isManager(viewer: Viewer): boolean {
  return MANAGERS.includes(viewer.user.role);
}

/** The signed-in viewer; the sign-in guard runs before every page that calls this. */
export function viewerOf(request: FastifyRequest): Viewer {
  const { viewer } = request.portal;
  if (!viewer) throw errors.unauthorized('Sign in to the portal.');
  return viewer;
}

/** The viewer, when their role is one of `roles`; a 403 page otherwise. */
export function requireRole(request: FastifyRequest, roles: readonly Role[]): Viewer {
  const viewer = viewerOf(request);
  if (!roles.includes(viewer.user.role))
    throw errors.forbidden(`This page is for ${roles.join(', ')} users of the agency.`);
  return viewer;
}

/** The agency acting as itself (its house client, org-wide reads): agency users only. */
export function agencyScope(request: FastifyRequest, roles: readonly Role[] = AGENCY_ROLES): PortalScope {
  const viewer = requireRole(request, roles);
  return { orgId: viewer.org.id, clientId: viewer.org.house_client_id, isClientScoped: false };
}

/**
 * One client of the viewer's org, as the API's `X-Service-Client-Id` resolves it: a client user
 * reaches their own client only, and any other client, like one of another org, is a 404 page.
 */
export async function clientScope(request: FastifyRequest, clientId: string): Promise<PortalScope> {
  const viewer = viewerOf(request);
  const id = clientId.toLowerCase();
  const own = viewer.user.role === 'client' ? viewer.user.client_id === id : true;
  if (!isUuid(id) || !own || !(await request.server.platform.clients.belongsTo(viewer.org.id, id)))
    throw errors.notFound('Client', clientId);
  return { orgId: viewer.org.id, clientId: id, isClientScoped: true };
}

/** A record's id from the path; anything but a UUID is a 404 page, like a record of another tenant. */
export function idParam(request: FastifyRequest, name = 'id'): string {
  const given = (request.params as Record<string, string>)[name];
  if (typeof given !== 'string' || !isUuid(given)) throw errors.notFound('Record', given);
  return given.toLowerCase();
}

/** Who acts, for the audit log: the signed-in user, from the request's address. */
export function auditOf(request: FastifyRequest): AuditContext {
  return userAudit(viewerOf(request).user, request.ip);
}

/** A client's scope with its name, for the pages of its area (their heading links back to it). */
export async function clientArea(
  request: FastifyRequest,
  clientId: string,
): Promise<{ scope: PortalScope; name: string; base: string }> {
  const scope = await clientScope(request, clientId);
  const client = await getClient(request.server.platform.db, scope.orgId, scope.clientId);
  return { scope, name: client.name, base: `/portal/clients/${scope.clientId}` };
}
