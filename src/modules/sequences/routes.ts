import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { inTransaction } from '../../platform/db/transaction.ts';
import { runIdempotent } from '../../platform/http/idempotency.ts';
import { byId, pageSchema, paginate } from '../../platform/http/pagination.ts';
import { errorResponses, IdempotencyHeaders } from '../../platform/http/schemas.ts';
import {
  CreateEnrollmentBody,
  CreateSequenceBody,
  EnrollmentParams,
  EnrollmentSchema,
  ListEnrollmentsQuery,
  ListSequencesQuery,
  SequenceParams,
  SequenceSchema,
  UpdateEnrollmentBody,
  UpdateSequenceBody,
} from './schemas.ts';
import {
  archiveSequence,
  createSequence,
  enrollContact,
  getEnrollment,
  getSequence,
  searchEnrollments,
  searchSequences,
  sequenceTotal,
  updateEnrollment,
  updateSequence,
} from './service.ts';

const tags = ['sequences'];
const SequenceEnvelope = Type.Object({ sequence: SequenceSchema });
const EnrollmentEnvelope = Type.Object({ enrollment: EnrollmentSchema });
const EnrollResult = Type.Object({ enrollment: EnrollmentSchema, idempotent: Type.Boolean() });

export const sequenceRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { db, config } = app.platform;

  app.get(
    '/sequences',
    {
      schema: {
        operationId: 'sequences.list',
        tags,
        summary: 'List sequences with their steps, newest first',
        querystring: ListSequencesQuery,
        response: { 200: pageSchema(SequenceSchema), ...errorResponses() },
      },
    },
    async (request) => {
      const { status } = request.query;
      const page = await paginate(request, byId, (p) => searchSequences(db, request.tenant, { status }, p));
      return { ...page, total: await sequenceTotal(db, request.tenant, { status }) };
    },
  );

  app.post(
    '/sequences',
    {
      schema: {
        operationId: 'sequences.create',
        tags,
        summary: 'Create a sequence (draft unless status is active)',
        headers: IdempotencyHeaders,
        body: CreateSequenceBody,
        response: { 201: SequenceEnvelope, ...errorResponses(409, 422) },
      },
    },
    async (request, reply) =>
      runIdempotent(db, request, reply, config.idempotencyTtlHours, async (trx) => ({
        status: 201,
        body: { sequence: await createSequence(trx, request.tenant, request.body) },
      })),
  );

  app.get(
    '/sequences/:id',
    {
      schema: {
        operationId: 'sequences.get',
        tags,
        summary: 'Retrieve a sequence with its steps',
        params: SequenceParams,
        response: { 200: SequenceEnvelope, ...errorResponses(404) },
      },
    },
    async (request) => ({ sequence: await getSequence(db, request.tenant, request.params.id) }),
  );

  app.patch(
    '/sequences/:id',
    {
      schema: {
        operationId: 'sequences.update',
        tags,
        summary: 'Update a sequence: name, description, status, steps or sender',
        params: SequenceParams,
        body: UpdateSequenceBody,
        response: { 200: SequenceEnvelope, ...errorResponses(404) },
      },
    },
    async (request) => ({
      sequence: await inTransaction(db, (trx) =>
        updateSequence(trx, request.tenant, request.params.id, request.body),
      ),
    }),
  );

  app.delete(
    '/sequences/:id',
    {
      schema: {
        operationId: 'sequences.archive',
        tags,
        summary: 'Archive a sequence and pause its active enrollments',
        params: SequenceParams,
        response: { 204: Type.Null(), ...errorResponses(404) },
      },
    },
    async (request, reply) => {
      await inTransaction(db, (trx) => archiveSequence(trx, request.tenant, request.params.id));
      reply.code(204).send(null);
    },
  );

  app.get(
    '/sequences/:id/enrollments',
    {
      schema: {
        operationId: 'sequences.enrollments.list',
        tags,
        summary: "List a sequence's enrollments, newest first",
        params: SequenceParams,
        querystring: ListEnrollmentsQuery,
        response: { 200: pageSchema(EnrollmentSchema), ...errorResponses(404) },
      },
    },
    async (request) =>
      paginate(request, byId, (page) =>
        searchEnrollments(db, request.tenant, request.params.id, { status: request.query.status }, page),
      ),
  );

  app.post(
    '/sequences/:id/enrollments',
    {
      schema: {
        operationId: 'sequences.enrollments.create',
        tags,
        summary: 'Enroll a contact; one already actively enrolled gets its enrollment back (200)',
        params: SequenceParams,
        headers: IdempotencyHeaders,
        body: CreateEnrollmentBody,
        response: { 200: EnrollResult, 201: EnrollResult, ...errorResponses(404, 409, 422) },
      },
    },
    async (request, reply) =>
      runIdempotent(db, request, reply, config.idempotencyTtlHours, (trx) =>
        enrollContact(trx, request.tenant, request.params.id, request.body, config.sequenceMinuteMs),
      ),
  );

  app.get(
    '/sequences/:id/enrollments/:enrollmentId',
    {
      schema: {
        operationId: 'sequences.enrollments.get',
        tags,
        summary: 'Retrieve an enrollment',
        params: EnrollmentParams,
        response: { 200: EnrollmentEnvelope, ...errorResponses(404) },
      },
    },
    async (request) => ({
      enrollment: await getEnrollment(db, request.tenant, request.params.id, request.params.enrollmentId),
    }),
  );

  app.patch(
    '/sequences/:id/enrollments/:enrollmentId',
    {
      schema: {
        operationId: 'sequences.enrollments.update',
        tags,
        summary: 'Pause, resume or cancel an enrollment',
        params: EnrollmentParams,
        body: UpdateEnrollmentBody,
        response: { 200: EnrollmentEnvelope, ...errorResponses(404, 409) },
      },
    },
    async (request) => ({
      enrollment: await inTransaction(db, (trx) =>
        updateEnrollment(
          trx,
          request.tenant,
          request.params.id,
          request.params.enrollmentId,
          request.body.status,
        ),
      ),
    }),
  );
};
