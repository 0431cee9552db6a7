import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { requireAdminToken } from '../../platform/auth/admin-token.ts';
import { ApiError } from '../../platform/http/errors.ts';
import { Nullable, Query, Timestamp } from '../../platform/http/schemas.ts';
import { listSimulatedEmails } from '../../providers/email/index.ts';

const hidden = { hide: true, tags: ['admin'] };
const SimulatedEmail = Type.Object({
  key: Type.String(),
  message_id: Type.String(),
  from: Type.String(),
  to: Type.String(),
  subject: Type.String(),
  text: Type.String(),
  html: Nullable(Type.String()),
  headers: Type.Record(Type.String(), Type.String()),
  sent_at: Timestamp(),
});

/** What the email simulator "sent", for tests and demos: `GET /admin/v1/simulator/emails?to=`. */
export const emailSimulatorRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { db, secrets, config } = app.platform;
  requireAdminToken(app, secrets.adminToken);

  app.get(
    '/simulator/emails',
    {
      schema: {
        ...hidden,
        querystring: Query({
          to: Type.Optional(Type.String({ minLength: 1, maxLength: 320 })),
          limit: Type.Integer({ minimum: 1, maximum: 500, default: 50 }),
        }),
        response: { 200: Type.Object({ data: Type.Array(SimulatedEmail), limit: Type.Integer() }) },
      },
    },
    async (request) => {
      if (config.emailProvider !== 'simulator')
        throw new ApiError(
          404,
          'not_found',
          `The email simulator is off: EMAIL_PROVIDER is ${config.emailProvider}.`,
        );
      const rows = await listSimulatedEmails(db, request.query);
      return {
        data: rows.map((row) => ({
          key: row.key,
          message_id: row.message_id,
          from: row.from_address,
          to: row.to_address,
          subject: row.subject,
          text: row.text_body,
          html: row.html_body,
          headers: row.headers,
          sent_at: row.sent_at ?? row.created_at,
        })),
        limit: request.query.limit,
      };
    },
  );
};
