import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { type TObject, type TProperties, Type } from '@sinclair/typebox';
import { inTransaction } from '../../platform/db/transaction.ts';
import { runIdempotent } from '../../platform/http/idempotency.ts';
import { pageQuerySchema, pageSchema, paginate } from '../../platform/http/pagination.ts';
import {
  Body,
  DateTime,
  errorResponses,
  IdempotencyHeaders,
  IdParams,
  Nullable,
  Query,
  Uuid,
} from '../../platform/http/schemas.ts';
import {
  addContactChannel,
  type Channel,
  channelKeyset,
  deleteContactChannel,
  EMAIL,
  getContactChannel,
  listContactChannels,
  PHONE,
  patchContactChannel,
} from './channel-service.ts';
import {
  ConsentSource,
  ConsentStatus,
  DncScope,
  Email,
  EmailSchema,
  EmailStatus,
  Phone,
  PhoneSchema,
  PhoneStatus,
  PhoneType,
  Source,
} from './schemas.ts';

interface ChannelApi {
  channel: Channel;
  record: TObject;
  /** Body fields of POST besides the value and is_primary. */
  createFields: TProperties;
  /** Body fields of PATCH besides is_primary. */
  patchFields: TProperties;
}

const PHONES: ChannelApi = {
  channel: PHONE,
  record: PhoneSchema,
  createFields: {
    phone: Phone,
    phone_type: Type.Optional(PhoneType),
    status: Type.Optional(PhoneStatus),
    consent_status: Type.Optional(ConsentStatus),
    consent_source: Type.Optional(ConsentSource),
    consented_at: Type.Optional(DateTime()),
    dnc_scope: Type.Optional(DncScope),
    source: Type.Optional(Source),
  },
  patchFields: {
    phone_type: Type.Optional(PhoneType),
    status: Type.Optional(PhoneStatus),
    consent_status: Type.Optional(ConsentStatus),
    consent_source: Type.Optional(Nullable(ConsentSource)),
    consented_at: Type.Optional(Nullable(DateTime())),
    dnc_scope: Type.Optional(Nullable(DncScope)),
  },
};

const EMAILS: ChannelApi = {
  channel: EMAIL,
  record: EmailSchema,
  createFields: {
    email: Email,
    status: Type.Optional(EmailStatus),
    source: Type.Optional(Source),
  },
  patchFields: { status: Type.Optional(EmailStatus) },
};

/** `/crm/contacts/{id}/phones` and `/crm/contacts/{id}/emails`, with the same rules and shapes. */
export const channelRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { db, config } = app.platform;

  for (const api of [PHONES, EMAILS]) {
    const { channel } = api;
    const { kind, plural } = channel;
    const idParam = `${kind}Id`;
    const collection = `/crm/contacts/:id/${plural}`;
    const member = `${collection}/:${idParam}`;
    const MemberParams = Type.Object({ id: Uuid(), [idParam]: Uuid() }, { additionalProperties: false });
    const Envelope = Type.Object({ [kind]: api.record });
    const tags = ['crm.contacts'];
    const paramsOf = (params: unknown) => params as { id: string } & Record<string, string>;

    app.get(
      collection,
      {
        schema: {
          operationId: `crm.contacts.${plural}.list`,
          tags,
          summary: `List a contact's ${plural}, primary first`,
          params: IdParams,
          querystring: Query({ ...pageQuerySchema }),
          response: { 200: pageSchema(api.record), ...errorResponses(404) },
        },
      },
      async (request) =>
        paginate(request, channelKeyset, (page) =>
          listContactChannels(db, channel, request.tenant, request.params.id, page),
        ),
    );

    app.post(
      collection,
      {
        schema: {
          operationId: `crm.contacts.${plural}.create`,
          tags,
          summary: `Add a ${kind} to a contact`,
          description: `201 when added; 200 with created false when the contact already has it; 409 ${kind}_in_use when another contact of the client has it.`,
          headers: IdempotencyHeaders,
          params: IdParams,
          body: Body({ ...api.createFields, is_primary: Type.Optional(Type.Boolean()) }),
          response: {
            200: Type.Object({ [kind]: api.record, created: Type.Literal(false) }),
            201: Type.Object({ [kind]: api.record, created: Type.Literal(true) }),
            ...errorResponses(404, 409, 422),
          },
        },
      },
      async (request, reply) => {
        const { [kind]: value, is_primary, ...fields } = request.body as Record<string, unknown>;
        const body = await runIdempotent(db, request, reply, config.idempotencyTtlHours, async (trx) => {
          const { record, created } = await addContactChannel(
            trx,
            channel,
            request.tenant,
            request.params.id,
            { value: value as string, is_primary: is_primary as boolean | undefined, fields },
            config.phoneDefaultCountry,
          );
          return { status: created ? 201 : 200, body: { [kind]: record, created } };
        });
        // The envelope's key is the channel's kind, which the schema types cannot follow.
        return body as never;
      },
    );

    app.get(
      member,
      {
        schema: {
          operationId: `crm.contacts.${plural}.get`,
          tags,
          summary: `Retrieve one ${kind} of a contact`,
          params: MemberParams,
          response: { 200: Envelope, ...errorResponses(404) },
        },
      },
      async (request) => {
        const params = paramsOf(request.params);
        return {
          [kind]: await getContactChannel(db, channel, request.tenant, params.id, params[idParam]),
        };
      },
    );

    app.patch(
      member,
      {
        schema: {
          operationId: `crm.contacts.${plural}.update`,
          tags,
          summary: `Update one ${kind} of a contact`,
          params: MemberParams,
          body: Body({ ...api.patchFields, is_primary: Type.Optional(Type.Boolean()) }),
          response: { 200: Envelope, ...errorResponses(404) },
        },
      },
      async (request) => {
        const params = paramsOf(request.params);
        return {
          [kind]: await inTransaction(db, (trx) =>
            patchContactChannel(
              trx,
              channel,
              request.tenant,
              params.id,
              params[idParam],
              request.body as Record<string, unknown>,
            ),
          ),
        };
      },
    );

    app.delete(
      member,
      {
        schema: {
          operationId: `crm.contacts.${plural}.delete`,
          tags,
          summary: `Remove one ${kind} from a contact; a removed primary passes to the oldest left`,
          params: MemberParams,
          response: { 204: Type.Null({ description: 'Removed' }), ...errorResponses(404) },
        },
      },
      async (request, reply) => {
        const params = paramsOf(request.params);
        await inTransaction(db, (trx) =>
          deleteContactChannel(trx, channel, request.tenant, params.id, params[idParam]),
        );
        reply.code(204).send(null);
      },
    );
  }
};
