import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { requireAdminToken } from '../../platform/auth/admin-token.ts';
import { inTransaction } from '../../platform/db/transaction.ts';
import { Body } from '../../platform/http/schemas.ts';
import * as membership from './membership.ts';

const hidden = { hide: true, tags: ['admin'] };
const Address = Type.String({
  pattern: '^0x[0-9a-fA-F]{40}$',
  description: 'A 20-byte EVM address; mixed case must carry a valid EIP-55 checksum. Stored lower-case.',
});
const MemberId = Type.String({ pattern: '^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$' });
const Wallets = Type.Array(Address, { maxItems: 100 });
const memberFields = {
  member_since: Type.String({ format: 'date', description: 'YYYY-MM-DD' }),
  custodial_wallets: Type.Optional(Wallets),
  connected_wallets: Type.Optional(Wallets),
};
const Member = Type.Object({
  id: Type.String(),
  member_since: Type.String(),
  custodial_wallets: Type.Array(Type.String()),
  connected_wallets: Type.Array(Type.String()),
});
/** The bulk import takes thousands of members in one body: more than the API's usual 1 MB. */
const IMPORT_BODY_LIMIT = 32 * 1024 * 1024;

/** The wallet feed's sources of membership, behind `ADMIN_TOKEN` like the rest of the admin API. */
export const feedAdminRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { db, secrets } = app.platform;
  requireAdminToken(app, secrets.adminToken);

  app.put(
    '/feed/members/:memberId',
    {
      schema: {
        ...hidden,
        params: Type.Object({ memberId: MemberId }),
        body: Body(memberFields),
        response: { 200: Type.Object({ member: Member }), 201: Type.Object({ member: Member }) },
      },
    },
    async (request, reply) => {
      const { custodial_wallets = [], connected_wallets = [], member_since } = request.body;
      const result = await inTransaction(db, (trx) =>
        membership.putMember(trx, request.params.memberId, {
          member_since,
          custodial_wallets,
          connected_wallets,
        }),
      );
      reply.code(result.created ? 201 : 200);
      return { member: result.member };
    },
  );

  app.delete(
    '/feed/members/:memberId',
    { schema: { ...hidden, params: Type.Object({ memberId: MemberId }) } },
    async (request, reply) => {
      await inTransaction(db, (trx) => membership.removeMember(trx, request.params.memberId));
      reply.code(204).send();
    },
  );

  // `::` is a literal colon in a Fastify path: POST /admin/v1/feed/members:import.
  app.post(
    '/feed/members::import',
    {
      bodyLimit: IMPORT_BODY_LIMIT,
      schema: {
        ...hidden,
        body: Type.Array(Body({ id: MemberId, ...memberFields }), { minItems: 1, maxItems: 100_000 }),
        response: {
          200: Type.Object({ imported: Type.Integer(), created: Type.Integer(), updated: Type.Integer() }),
        },
      },
    },
    async (request) =>
      inTransaction(db, (trx) =>
        membership.importMembers(
          trx,
          request.body.map((m) => ({
            id: m.id,
            member_since: m.member_since,
            custodial_wallets: m.custodial_wallets ?? [],
            connected_wallets: m.connected_wallets ?? [],
          })),
        ),
      ),
  );

  app.put(
    '/feed/platform-wallets',
    {
      schema: {
        ...hidden,
        body: Body({ wallets: Type.Array(Address, { maxItems: 1000 }) }),
        response: { 200: Type.Object({ platform_wallets: Type.Array(Type.String()) }) },
      },
    },
    async (request) => ({
      platform_wallets: await inTransaction(db, (trx) =>
        membership.replaceRole(trx, 'platform', request.body.wallets, 'wallets'),
      ),
    }),
  );

  app.put(
    '/feed/marketplaces',
    {
      schema: {
        ...hidden,
        body: Body({ addresses: Type.Array(Address, { maxItems: 1000 }) }),
        response: { 200: Type.Object({ marketplaces: Type.Array(Type.String()) }) },
      },
    },
    async (request) => ({
      marketplaces: await inTransaction(db, (trx) =>
        membership.replaceRole(trx, 'marketplace', request.body.addresses, 'addresses'),
      ),
    }),
  );
};
