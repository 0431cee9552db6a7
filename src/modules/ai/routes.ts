import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { errorResponses, IdParams, Query, Timestamp, Uuid } from '../../platform/http/schemas.ts';
import { gistContext, gistOf, type Subject } from './service.ts';

const tags = ['ai'];

const GistSchema = Type.Object(
  {
    id: Uuid(),
    subject_type: Type.Union([Type.Literal('contact'), Type.Literal('company'), Type.Literal('deal')]),
    subject_id: Uuid(),
    summary: Type.String({ description: 'A few plain sentences.' }),
    highlights: Type.Array(Type.String(), { description: 'Short facts a reader should not miss.' }),
    model: Type.String({ description: 'The model that wrote it.' }),
    source_hash: Type.String({
      description: 'sha256 of what the gist was written from; any change to it is a cache miss.',
    }),
    generated_at: Timestamp(),
    cached: Type.Boolean({ description: 'true when this request was served an existing gist (and cost 0).' }),
    fuel_cost: Type.Integer({ description: 'FUEL this request cost: 1 on a miss, 0 on a hit.' }),
  },
  { description: 'An AI-written summary of a contact, company or deal.' },
);

const GistQuery = Query({
  force: Type.Optional(
    Type.Boolean({
      default: false,
      description: 'true writes a new gist even when one is cached (costs 1 FUEL).',
    }),
  ),
});

const SUBJECTS: { path: string; type: Subject['type']; noun: string }[] = [
  { path: 'contacts', type: 'contact', noun: 'contact' },
  { path: 'companies', type: 'company', noun: 'company' },
  { path: 'deals', type: 'deal', noun: 'deal' },
];

export const aiRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { db, log, config, providers } = app.platform;
  const context = gistContext({ db, llm: providers.llm, log }, config);
  for (const subject of SUBJECTS) {
    app.post(
      `/ai/${subject.path}/:id/gist`,
      {
        schema: {
          operationId: `ai.${subject.path}.gist`,
          tags,
          summary: `Summarize a ${subject.noun}: 1 FUEL on a cache miss, 0 on a hit`,
          params: IdParams,
          querystring: GistQuery,
          response: { 200: Type.Object({ gist: GistSchema }), ...errorResponses(402, 404, 502) },
        },
      },
      async (request) => ({
        gist: await gistOf(
          context,
          request.tenant,
          { type: subject.type, id: request.params.id },
          request.query.force ?? false,
        ),
      }),
    );
  }
};
