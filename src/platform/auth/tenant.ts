import type { FastifyRequest } from 'fastify';
import { isUuid } from '../db/ids.ts';
import type { Db } from '../db/pool.ts';
import { errors } from '../http/errors.ts';
import type { ApiKeyRow, ApiKeyStore } from './keys.ts';
import { looksLikeKey } from './keys.ts';

/**
 * Who a request acts for. `clientId` is never null: an agency key acting as itself works on the
 * org's house client. `isClientScoped` is false only then, and widens reads that are org-wide by
 * nature (events, webhook subscriptions) to every client of the org.
 */
export interface Tenant {
  orgId: string;
  clientId: string;
  isClientScoped: boolean;
  key: ApiKeyRow;
}

/** The tenant a row belongs to: what every store function filters by. A `Tenant` is one. */
export type TenantScope = Pick<Tenant, 'orgId' | 'clientId'>;

declare module 'fastify' {
  interface FastifyRequest {
    tenant: Tenant;
  }
}

export const CLIENT_HEADER = 'x-service-client-id';

interface OrgClients {
  houseClientId: string;
  clients: Set<string>;
}

/** Org → its clients. Clients are never deleted or moved, so a positive answer can be cached for good. */
export class ClientDirectory {
  private readonly orgs = new Map<string, OrgClients>();

  constructor(private readonly db: Db) {}

  async houseClient(orgId: string): Promise<string> {
    return (await this.load(orgId)).houseClientId;
  }

  async belongsTo(orgId: string, clientId: string): Promise<boolean> {
    const entry = await this.load(orgId);
    if (entry.clients.has(clientId)) return true;
    const row = await this.db
      .selectFrom('clients')
      .select('id')
      .where('org_id', '=', orgId)
      .where('id', '=', clientId)
      .executeTakeFirst();
    if (row) entry.clients.add(clientId);
    return row !== undefined;
  }

  private async load(orgId: string): Promise<OrgClients> {
    const cached = this.orgs.get(orgId);
    if (cached) return cached;
    const org = await this.db
      .selectFrom('orgs')
      .select('house_client_id')
      .where('id', '=', orgId)
      .executeTakeFirstOrThrow();
    const entry = { houseClientId: org.house_client_id, clients: new Set([org.house_client_id]) };
    this.orgs.set(orgId, entry);
    return entry;
  }
}

const LEGACY_SMS_ROUTES = /^\/v1\/(me|sms)(\/|$)/;

/** Resolves the bearer key and `X-Service-Client-Id` into `request.tenant`, or throws the 4xx the caller gets. */
export async function resolveTenant(
  request: FastifyRequest,
  keys: ApiKeyStore,
  clients: ClientDirectory,
): Promise<Tenant> {
  const key = await authenticateKey(request.headers.authorization, keys);
  keys.touch(key);

  if (key.kind === 'legacy_sms' && !LEGACY_SMS_ROUTES.test(request.routeOptions.url ?? '')) {
    throw errors.forbidden('A legacy SMS key may call /v1/me and /v1/sms/* only.');
  }

  const header = request.headers[CLIENT_HEADER];
  if (header !== undefined) {
    if (key.kind === 'client') {
      throw errors.invalidRequest(
        'X-Service-Client-Id cannot be sent with a client-bound key: it always acts on its own client.',
      );
    }
    const clientId = Array.isArray(header) ? header[0] : header;
    if (!isUuid(clientId)) throw errors.invalidRequest('X-Service-Client-Id must be a client UUID.');
    if (!(await clients.belongsTo(key.org_id, clientId))) throw errors.notFound('Client', clientId);
    return { orgId: key.org_id, clientId: clientId.toLowerCase(), isClientScoped: true, key };
  }

  if (key.kind === 'client' && key.client_id) {
    return { orgId: key.org_id, clientId: key.client_id, isClientScoped: true, key };
  }
  return { orgId: key.org_id, clientId: await clients.houseClient(key.org_id), isClientScoped: false, key };
}

async function authenticateKey(authorization: string | undefined, keys: ApiKeyStore): Promise<ApiKeyRow> {
  if (!authorization) throw errors.unauthorized();
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
  if (!match) throw errors.unauthorized('The Authorization header must be "Bearer <API_KEY>".');
  const cleartext = match[1];
  const key = looksLikeKey(cleartext) ? await keys.findByCleartext(cleartext) : null;
  if (!key || key.revoked_at) throw errors.unauthorized('The API key is not valid.');
  if (key.expires_at && key.expires_at.getTime() <= Date.now()) throw errors.keyExpired();
  return key;
}
