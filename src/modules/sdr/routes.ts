import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { inTransaction } from '../../platform/db/transaction.ts';
import { runIdempotent } from '../../platform/http/idempotency.ts';
import { byId, pageSchema, paginate } from '../../platform/http/pagination.ts';
import { errorResponses, IdempotencyHeaders, IdParams } from '../../platform/http/schemas.ts';
import {
  AddProspectsBody,
  CampaignSchema,
  CreateCampaignBody,
  ListCampaignsQuery,
  ListProspectsQuery,
  ProspectParams,
  ProspectSchema,
  PutSettingsBody,
  SettingsSchema,
  UpdateCampaignBody,
} from './schemas.ts';
import {
  addProspects,
  archiveCampaign,
  assertAgencyKey,
  createCampaign,
  getCampaign,
  getSettings,
  putSettings,
  removeProspect,
  sdrScope,
  searchCampaigns,
  searchProspects,
  updateCampaignSettings,
} from './service.ts';

const tags = ['sdr'];
const CampaignEnvelope = Type.Object({ campaign: CampaignSchema });
const SettingsEnvelope = Type.Object({ settings: SettingsSchema });

/** `/v1/sdr/*`: agency keys only (a client key is 403 `agency_key_required` on every route). */
export const sdrRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { db, config } = app.platform;
  // Before the body is validated, so a client key learns it is refused whatever it sent.
  app.addHook('preValidation', async (request) => assertAgencyKey(request.tenant));

  app.get(
    '/sdr/settings',
    {
      schema: {
        operationId: 'sdr.settings.get',
        tags,
        summary: "The org's SDR settings: the defaults of its campaigns",
        response: { 200: SettingsEnvelope, ...errorResponses(403) },
      },
    },
    async (request) => ({ settings: await getSettings(db, await sdrScope(db, request.tenant)) }),
  );

  app.put(
    '/sdr/settings',
    {
      schema: {
        operationId: 'sdr.settings.put',
        tags,
        summary: "Replace the org's SDR settings (from_number must be one of the org's numbers)",
        body: PutSettingsBody,
        response: { 200: SettingsEnvelope, ...errorResponses(403) },
      },
    },
    async (request) => {
      const scope = await sdrScope(db, request.tenant);
      return { settings: await inTransaction(db, (trx) => putSettings(trx, scope, request.body)) };
    },
  );

  app.get(
    '/sdr/campaigns',
    {
      schema: {
        operationId: 'sdr.campaigns.list',
        tags,
        summary: 'List SDR campaigns, newest first (archived ones only with status=archived)',
        querystring: ListCampaignsQuery,
        response: { 200: pageSchema(CampaignSchema), ...errorResponses(403) },
      },
    },
    async (request) => {
      const scope = await sdrScope(db, request.tenant);
      return paginate(request, byId, (page) => searchCampaigns(db, scope, request.query.status, page));
    },
  );

  app.post(
    '/sdr/campaigns',
    {
      schema: {
        operationId: 'sdr.campaigns.create',
        tags,
        summary:
          'Create an SDR campaign (draft, or scheduled with scheduled_start_at) and its outbound agent',
        headers: IdempotencyHeaders,
        body: CreateCampaignBody,
        response: { 201: CampaignEnvelope, ...errorResponses(403, 409, 422) },
      },
    },
    async (request, reply) => {
      const scope = await sdrScope(db, request.tenant);
      return runIdempotent(db, request, reply, config.idempotencyTtlHours, async (trx) => ({
        status: 201,
        body: { campaign: await createCampaign(trx, scope, request.body) },
      }));
    },
  );

  app.get(
    '/sdr/campaigns/:id',
    {
      schema: {
        operationId: 'sdr.campaigns.get',
        tags,
        summary: 'Retrieve an SDR campaign with its stats',
        params: IdParams,
        response: { 200: CampaignEnvelope, ...errorResponses(403, 404) },
      },
    },
    async (request) => ({
      campaign: await getCampaign(db, await sdrScope(db, request.tenant), request.params.id),
    }),
  );

  app.patch(
    '/sdr/campaigns/:id',
    {
      schema: {
        operationId: 'sdr.campaigns.update',
        tags,
        summary:
          'Update an SDR campaign: its settings, or move its status (409 invalid_transition); moving to ' +
          'active needs the sdr_outbound flag (403 feature_disabled) and a number (409 from_number_required)',
        params: IdParams,
        body: UpdateCampaignBody,
        response: { 200: CampaignEnvelope, ...errorResponses(403, 404, 409) },
      },
    },
    async (request) => {
      const scope = await sdrScope(db, request.tenant);
      return {
        campaign: await inTransaction(db, (trx) =>
          updateCampaignSettings(trx, scope, request.params.id, request.body),
        ),
      };
    },
  );

  app.delete(
    '/sdr/campaigns/:id',
    {
      schema: {
        operationId: 'sdr.campaigns.archive',
        tags,
        summary: 'Archive an SDR campaign (calls in flight are not cancelled: pause first)',
        params: IdParams,
        response: { 204: Type.Null(), ...errorResponses(403, 404) },
      },
    },
    async (request, reply) => {
      const scope = await sdrScope(db, request.tenant);
      await inTransaction(db, (trx) => archiveCampaign(trx, scope, request.params.id));
      return reply.code(204).send(null);
    },
  );

  app.get(
    '/sdr/campaigns/:id/prospects',
    {
      schema: {
        operationId: 'sdr.prospects.list',
        tags,
        summary: "List a campaign's prospects, newest first",
        params: IdParams,
        querystring: ListProspectsQuery,
        response: { 200: pageSchema(ProspectSchema), ...errorResponses(403, 404) },
      },
    },
    async (request) => {
      const scope = await sdrScope(db, request.tenant);
      return paginate(request, byId, (page) =>
        searchProspects(db, scope, request.params.id, request.query.status, page),
      );
    },
  );

  app.post(
    '/sdr/campaigns/:id/prospects',
    {
      schema: {
        operationId: 'sdr.prospects.add',
        tags,
        summary:
          'Add contacts of the org as prospects (at most 10,000 per call; ones already in are ignored)',
        headers: IdempotencyHeaders,
        params: IdParams,
        body: AddProspectsBody,
        response: {
          201: Type.Object({ added: Type.Integer(), ignored: Type.Integer() }),
          ...errorResponses(403, 404, 409, 422),
        },
      },
    },
    async (request, reply) => {
      const scope = await sdrScope(db, request.tenant);
      return runIdempotent(db, request, reply, config.idempotencyTtlHours, async (trx) => ({
        status: 201,
        body: await addProspects(trx, scope, request.params.id, request.body),
      }));
    },
  );

  app.delete(
    '/sdr/campaigns/:id/prospects/:prospectId',
    {
      schema: {
        operationId: 'sdr.prospects.remove',
        tags,
        summary: 'Remove a prospect that is not in a call (409 prospect_in_call otherwise)',
        params: ProspectParams,
        response: { 204: Type.Null(), ...errorResponses(403, 404, 409) },
      },
    },
    async (request, reply) => {
      const scope = await sdrScope(db, request.tenant);
      await inTransaction(db, (trx) =>
        removeProspect(trx, scope, request.params.id, request.params.prospectId),
      );
      return reply.code(204).send(null);
    },
  );
};
