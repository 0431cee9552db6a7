import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { inTransaction } from '../../platform/db/transaction.ts';
import { runIdempotent } from '../../platform/http/idempotency.ts';
import { byId, pageSchema, paginate } from '../../platform/http/pagination.ts';
import { errorResponses, IdempotencyHeaders } from '../../platform/http/schemas.ts';
import {
  CreateDocumentBody,
  CreateKnowledgeBaseBody,
  CreateUploadBody,
  DocumentParams,
  DocumentSchema,
  KbParams,
  KnowledgeBaseSchema,
  ListDocumentsQuery,
  ListKnowledgeBasesQuery,
  SearchHitSchema,
  SearchQuery,
  UpdateKnowledgeBaseBody,
  UploadSchema,
} from './schemas.ts';
import {
  createDocument,
  createKnowledgeBase,
  createUpload,
  deleteDocument,
  deleteKnowledgeBase,
  getDocument,
  getKnowledgeBase,
  listDocuments,
  listKnowledgeBases,
  searchKnowledgeBase,
  updateKnowledgeBase,
} from './service.ts';

const tags = ['knowledge'];
const KbEnvelope = Type.Object({ knowledge_base: KnowledgeBaseSchema });
const DocumentEnvelope = Type.Object({ document: DocumentSchema });

export const knowledgeRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { db, config } = app.platform;
  const { storage } = app.platform.providers;

  app.get(
    '/kb',
    {
      schema: {
        operationId: 'kb.list',
        tags,
        summary: 'List knowledge bases, newest first',
        querystring: ListKnowledgeBasesQuery,
        response: { 200: pageSchema(KnowledgeBaseSchema), ...errorResponses() },
      },
    },
    async (request) => paginate(request, byId, (page) => listKnowledgeBases(db, request.tenant, page)),
  );

  app.post(
    '/kb',
    {
      schema: {
        operationId: 'kb.create',
        tags,
        summary: 'Create a knowledge base',
        headers: IdempotencyHeaders,
        body: CreateKnowledgeBaseBody,
        response: { 201: KbEnvelope, ...errorResponses(409, 422) },
      },
    },
    async (request, reply) =>
      runIdempotent(db, request, reply, config.idempotencyTtlHours, async (trx) => ({
        status: 201,
        body: { knowledge_base: await createKnowledgeBase(trx, request.tenant, request.body) },
      })),
  );

  app.get(
    '/kb/:id',
    {
      schema: {
        operationId: 'kb.get',
        tags,
        summary: 'Retrieve a knowledge base',
        params: KbParams,
        response: { 200: KbEnvelope, ...errorResponses(404) },
      },
    },
    async (request) => ({ knowledge_base: await getKnowledgeBase(db, request.tenant, request.params.id) }),
  );

  app.patch(
    '/kb/:id',
    {
      schema: {
        operationId: 'kb.update',
        tags,
        summary: 'Rename or describe a knowledge base',
        params: KbParams,
        body: UpdateKnowledgeBaseBody,
        response: { 200: KbEnvelope, ...errorResponses(404) },
      },
    },
    async (request) => ({
      knowledge_base: await inTransaction(db, (trx) =>
        updateKnowledgeBase(trx, request.tenant, request.params.id, request.body),
      ),
    }),
  );

  app.delete(
    '/kb/:id',
    {
      schema: {
        operationId: 'kb.delete',
        tags,
        summary: 'Delete a knowledge base and its documents',
        params: KbParams,
        response: { 204: Type.Null(), ...errorResponses(404) },
      },
    },
    async (request, reply) => {
      await inTransaction(db, (trx) => deleteKnowledgeBase(trx, request.tenant, request.params.id));
      reply.code(204).send(null);
    },
  );

  app.get(
    '/kb/:id/documents',
    {
      schema: {
        operationId: 'kb.documents.list',
        tags,
        summary: 'List the documents of a knowledge base, newest first',
        params: KbParams,
        querystring: ListDocumentsQuery,
        response: { 200: pageSchema(DocumentSchema), ...errorResponses(404) },
      },
    },
    async (request) =>
      paginate(request, byId, (page) =>
        listDocuments(db, request.tenant, request.params.id, { status: request.query.status }, page),
      ),
  );

  app.post(
    '/kb/:id/documents',
    {
      schema: {
        operationId: 'kb.documents.create',
        tags,
        summary: 'Add a document; it is ingested in the background (status pending)',
        headers: IdempotencyHeaders,
        params: KbParams,
        body: CreateDocumentBody,
        response: { 201: DocumentEnvelope, ...errorResponses(404, 409, 422) },
      },
    },
    async (request, reply) =>
      runIdempotent(db, request, reply, config.idempotencyTtlHours, async (trx) => ({
        status: 201,
        body: {
          document: await createDocument(trx, storage, request.tenant, request.params.id, request.body),
        },
      })),
  );

  app.get(
    '/kb/:id/documents/:docId',
    {
      schema: {
        operationId: 'kb.documents.get',
        tags,
        summary: 'Retrieve a document with its ingestion status',
        params: DocumentParams,
        response: { 200: DocumentEnvelope, ...errorResponses(404) },
      },
    },
    async (request) => ({
      document: await getDocument(db, request.tenant, request.params.id, request.params.docId),
    }),
  );

  app.delete(
    '/kb/:id/documents/:docId',
    {
      schema: {
        operationId: 'kb.documents.delete',
        tags,
        summary: 'Delete a document (gone from search at once); answers the deleted document',
        params: DocumentParams,
        response: { 200: DocumentEnvelope, ...errorResponses(404) },
      },
    },
    async (request) => ({
      document: await inTransaction(db, (trx) =>
        deleteDocument(trx, request.tenant, request.params.id, request.params.docId),
      ),
    }),
  );

  app.post(
    '/kb/:id/uploads',
    {
      schema: {
        operationId: 'kb.uploads.create',
        tags,
        summary: 'Get a signed URL to upload a file for a document',
        params: KbParams,
        headers: IdempotencyHeaders,
        body: CreateUploadBody,
        response: { 201: Type.Object({ upload: UploadSchema }), ...errorResponses(404) },
      },
    },
    // A replay answers the same signed URL (valid until its expires_at) rather than a second object key.
    async (request, reply) =>
      runIdempotent(db, request, reply, config.idempotencyTtlHours, async (trx) => ({
        status: 201,
        body: {
          upload: await createUpload(
            trx,
            storage,
            request.tenant,
            request.params.id,
            request.body,
            config.kbFetchMaxBytes,
          ),
        },
      })),
  );

  app.get(
    '/kb/:id/search',
    {
      schema: {
        operationId: 'kb.search',
        tags,
        summary: 'Search the ready documents of a knowledge base; best chunks first',
        params: KbParams,
        querystring: SearchQuery,
        response: {
          200: Type.Object({
            data: Type.Array(SearchHitSchema),
            count: Type.Integer(),
            query: Type.String(),
          }),
          ...errorResponses(404),
        },
      },
    },
    async (request) => {
      const data = await searchKnowledgeBase(
        db,
        request.tenant,
        request.params.id,
        request.query.q,
        request.query.limit ?? 10,
      );
      return { data, count: data.length, query: request.query.q };
    },
  );
};
