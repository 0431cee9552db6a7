import { Type } from '@sinclair/typebox';
import { pageQuerySchema } from '../../platform/http/pagination.ts';
import {
  Body,
  Metadata,
  MetadataOut,
  Nullable,
  Query,
  Timestamp,
  Uuid,
} from '../../platform/http/schemas.ts';

const Kind = Type.Union([Type.Literal('precall_brief'), Type.Literal('lead_enrichment')]);
const Status = Type.Union([
  Type.Literal('pending'),
  Type.Literal('running'),
  Type.Literal('completed'),
  Type.Literal('failed'),
]);

const BriefResult = Type.Object(
  {
    brief: Type.String({ description: 'What to know 30 seconds before the call, in a few sentences.' }),
    talking_points: Type.Array(Type.String()),
  },
  { description: 'A pre-call brief.' },
);

const Proposal = Type.Object({
  field: Type.String({
    description: 'A contact: title, lifecycle_stage or tags. A company: industry or business_description.',
  }),
  value: Type.Union([Type.String(), Type.Array(Type.String())], {
    description: 'A string; a list of tags for tags.',
  }),
  evidence: Type.String({ description: 'The text of the record or its activities the value comes from.' }),
});

const EnrichmentResult = Type.Object(
  {
    proposals: Type.Array(Proposal, {
      description: 'Values for fields that were empty, each with its evidence.',
    }),
    applied: Type.Array(Type.String(), {
      description: 'The fields written (apply: true): only those still empty when the job finished.',
    }),
  },
  { description: 'A lead enrichment.' },
);

export const AiJobSchema = Type.Object(
  {
    id: Uuid(),
    kind: Kind,
    status: Status,
    subject_type: Type.Union([Type.Literal('contact'), Type.Literal('company')]),
    subject_id: Uuid(),
    result: Nullable(Type.Union([BriefResult, EnrichmentResult])),
    error_code: Nullable(
      Type.String({
        description:
          'Why it failed: ai_unavailable (the model could not answer), subject_not_found, worker_lost.',
      }),
    ),
    fuel_cost: Type.Integer({ description: 'FUEL debited when accepted; refunded if the job fails.' }),
    metadata: MetadataOut(),
    created_at: Timestamp(),
    completed_at: Nullable(Timestamp()),
  },
  { description: 'A pre-call brief or a lead enrichment, written in the background.' },
);

export const AiJobEnvelope = Type.Object({ job: AiJobSchema });

const JobMetadata = Type.Optional(
  Metadata('its events: ai.precall_brief.completed, ai.lead_enrichment.completed and ai.job.failed'),
);

export const PrecallBriefBody = Body({
  purpose: Type.Optional(
    Type.String({ maxLength: 1000, description: 'Why the call is made; the brief takes it into account.' }),
  ),
  metadata: JobMetadata,
});

export const EnrichBody = Body({
  apply: Type.Optional(
    Type.Boolean({
      default: false,
      description:
        'true writes the proposals into fields still empty (never over a value); false leaves them for review.',
    }),
  ),
  metadata: JobMetadata,
});

export const ListAiJobsQuery = Query({
  ...pageQuerySchema,
  kind: Type.Optional(Kind),
  status: Type.Optional(Status),
  subject_id: Type.Optional(Uuid()),
});
