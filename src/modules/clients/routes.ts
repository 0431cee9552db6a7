import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import { open, seal } from '../../platform/crypto.ts';
import { inTransaction } from '../../platform/db/transaction.ts';
import { errors } from '../../platform/http/errors.ts';
import { runIdempotent } from '../../platform/http/idempotency.ts';
import { byId, pageSchema, paginate } from '../../platform/http/pagination.ts';
import { errorResponses, IdempotencyHeaders, IdParams } from '../../platform/http/schemas.ts';
import { apiKeyAudit } from '../audit/service.ts';
import {
  ApiKeysQuery,
  ClientSchema,
  ClientsQuery,
  CreateApiKeyBody,
  CreateClientBody,
  CreatedApiKey,
  ManagedApiKeySchema,
  UpdateClientBody,
} from './schemas.ts';
import * as clients from './service.ts';

/** Clients and keys are managed by the agency: a client key is 403 `agency_key_required`. */
function requireAgencyKey(request: FastifyRequest): string {
  if (request.tenant.key.kind !== 'agency')
    throw errors.agencyKeyRequired('Managing clients and API keys is');
  return request.tenant.orgId;
}

/** A minted key's answer as the idempotency store keeps it: the key sealed, bound to its id. */
const keyAad = (id: string) => `api-key-create-response:${id}`;

/** `/v1/clients` and `/v1/api-keys`: what the admin API and the portal do, for an agency's automation. */
export const clientRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { db, config, secrets, keys } = app.platform;
  const clientTags = ['clients'];
  const keyTags = ['api-keys'];

  app.get(
    '/clients',
    {
      schema: {
        operationId: 'clients.list',
        tags: clientTags,
        summary: "List the agency's clients, newest first (agency keys only)",
        querystring: ClientsQuery,
        response: { 200: pageSchema(ClientSchema), ...errorResponses(403) },
      },
    },
    async (request) => {
      const orgId = requireAgencyKey(request);
      return paginate(request, byId, (page) =>
        clients.listClients(db, orgId, page, { search: request.query.q }),
      );
    },
  );

  app.post(
    '/clients',
    {
      schema: {
        operationId: 'clients.create',
        tags: clientTags,
        summary: 'Create a client (agency keys only)',
        headers: IdempotencyHeaders,
        body: CreateClientBody,
        response: { 201: Type.Object({ client: ClientSchema }), ...errorResponses(403, 409, 422) },
      },
    },
    async (request, reply) => {
      const orgId = requireAgencyKey(request);
      return runIdempotent(db, request, reply, config.idempotencyTtlHours, async (trx) => ({
        status: 201,
        body: { client: await clients.createClient(trx, orgId, request.body, apiKeyAudit(request)) },
      }));
    },
  );

  app.get(
    '/clients/:id',
    {
      schema: {
        operationId: 'clients.get',
        tags: clientTags,
        summary: 'Retrieve a client (agency keys only)',
        params: IdParams,
        response: { 200: Type.Object({ client: ClientSchema }), ...errorResponses(403, 404) },
      },
    },
    async (request) => ({
      client: await clients.getClient(db, requireAgencyKey(request), request.params.id),
    }),
  );

  app.patch(
    '/clients/:id',
    {
      schema: {
        operationId: 'clients.update',
        tags: clientTags,
        summary: 'Rename a client (agency keys only)',
        params: IdParams,
        body: UpdateClientBody,
        response: { 200: Type.Object({ client: ClientSchema }), ...errorResponses(403, 404) },
      },
    },
    async (request) => {
      const orgId = requireAgencyKey(request);
      const client = await inTransaction(db, (trx) =>
        clients.updateClient(trx, orgId, request.params.id, request.body, apiKeyAudit(request)),
      );
      return { client };
    },
  );

  app.get(
    '/api-keys',
    {
      schema: {
        operationId: 'api_keys.list',
        tags: keyTags,
        summary: "List the org's API keys in use, newest first, without their secrets (agency keys only)",
        querystring: ApiKeysQuery,
        response: { 200: pageSchema(ManagedApiKeySchema), ...errorResponses(403) },
      },
    },
    async (request) => {
      const orgId = requireAgencyKey(request);
      return paginate(request, byId, (page) =>
        clients.listApiKeys(db, orgId, page, { client_id: request.query.client_id }),
      );
    },
  );

  app.post(
    '/api-keys',
    {
      schema: {
        operationId: 'api_keys.create',
        tags: keyTags,
        summary: 'Mint an agency or client API key; the key is returned once (agency keys only)',
        headers: IdempotencyHeaders,
        body: CreateApiKeyBody,
        response: { 201: CreatedApiKey, ...errorResponses(403, 404, 409, 422) },
      },
    },
    async (request, reply) => {
      const orgId = requireAgencyKey(request);
      const created = await runIdempotent(db, request, reply, config.idempotencyTtlHours, async (trx) => {
        const { api_key, key } = await clients.mintKey(trx, orgId, request.body, apiKeyAudit(request));
        // No key in the clear at rest, not even in the stored answer of a replay.
        const sealed = seal(secrets.encryptionKey, key, keyAad(api_key.id)).toString('base64');
        return { status: 201, body: { api_key, sealed_key: sealed } };
      });
      const key = open(
        secrets.encryptionKey,
        Buffer.from(created.sealed_key, 'base64'),
        keyAad(created.api_key.id),
      );
      return { api_key: created.api_key, key };
    },
  );

  app.delete(
    '/api-keys/:id',
    {
      schema: {
        operationId: 'api_keys.revoke',
        tags: keyTags,
        summary: 'Revoke an API key of the org: it answers 401 from the next request (agency keys only)',
        params: IdParams,
        response: { 204: Type.Null({ description: 'Revoked' }), ...errorResponses(403, 404) },
      },
    },
    async (request, reply) => {
      const orgId = requireAgencyKey(request);
      await inTransaction(db, (trx) =>
        clients.revokeKey(trx, orgId, request.params.id, apiKeyAudit(request)),
      );
      keys.evict(request.params.id);
      return reply.code(204).send(null);
    },
  );
};
