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

export const MAX_STEPS = 50;
export const MAX_WAIT_MINUTES = 525_600;
export const SMS_BODY_MAX = 1600;
export const EMAIL_BODY_MAX = 100_000;

const literals = <T extends string>(values: readonly T[], description: string) =>
  Type.Union(
    values.map((value) => Type.Literal(value)),
    { description },
  );

const SequenceStatus = literals(
  ['draft', 'active', 'paused', 'archived'] as const,
  'draft, active, paused or archived; only an active sequence runs steps.',
);
const EnrollmentStatus = literals(
  ['active', 'paused', 'completed', 'cancelled'] as const,
  'active, paused, completed or cancelled.',
);

export const StepSchema = Type.Object(
  {
    kind: literals(['sms', 'email'] as const, 'sms or email.'),
    wait_minutes: Type.Integer({
      minimum: 0,
      maximum: MAX_WAIT_MINUTES,
      description: 'Minutes after the previous step ran (step 0: after enrollment), 0-525,600.',
    }),
    body: Type.String({
      minLength: 1,
      maxLength: EMAIL_BODY_MAX,
      description:
        'The text, with merge fields {{first_name}}, {{last_name}}, {{full_name}}, {{title}}, {{company_name}}, ' +
        '{{email}} and fallbacks such as {{first_name|there}}. SMS at most 1,600 characters.',
    }),
    subject: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 998,
        description: 'The email subject (email steps only, required there); merge fields allowed.',
      }),
    ),
  },
  { additionalProperties: false },
);

const Steps = Type.Array(StepSchema, { maxItems: MAX_STEPS, description: 'At most 50 steps, run in order.' });
const Name = Type.String({ minLength: 1, maxLength: 200 });
const Description = Nullable(Type.String({ maxLength: 4000 }));

export const SequenceSchema = Type.Object(
  {
    id: Uuid(),
    client_id: Uuid(),
    name: Type.String(),
    description: Nullable(Type.String()),
    status: Type.String(),
    steps: Type.Array(
      Type.Object({
        kind: Type.String(),
        wait_minutes: Type.Integer(),
        body: Type.String(),
        subject: Type.Optional(Type.String()),
      }),
    ),
    sender_user_id: Nullable(Uuid()),
    list_id: Nullable(Uuid()),
    created_at: Timestamp(),
    updated_at: Timestamp(),
  },
  { description: 'A ladder of SMS and email steps that enrolled contacts go down.' },
);

export const EnrollmentSchema = Type.Object(
  {
    id: Uuid(),
    sequence_id: Uuid(),
    contact_id: Uuid(),
    current_step: Type.Integer({ description: 'The index of the next step to run (0 first).' }),
    status: Type.String(),
    paused_reason: Nullable(
      Type.String({
        description:
          'Why it stopped: reply_received, manual, sequence_archived, opted_out, missing_phone, missing_email, ' +
          'fuel_exhausted, unsubscribed, ...',
      }),
    ),
    next_run_at: Timestamp('When the current step is due; it runs on the first tick at or after it.'),
    enrolled_at: Timestamp(),
    completed_at: Nullable(Timestamp()),
    last_step_at: Nullable(Timestamp()),
    metadata: MetadataOut(),
  },
  { description: "A contact's way down a sequence." },
);

export const CreateSequenceBody = Body({
  name: Name,
  description: Type.Optional(Description),
  status: Type.Optional(literals(['draft', 'active'] as const, 'draft (default) or active.')),
  steps: Type.Optional(Steps),
  sender_user_id: Type.Optional(Nullable(Uuid())),
  list_id: Type.Optional(
    Nullable(
      Uuid(
        'A CRM list of the same client to follow: while the sequence is active its members are enrolled ' +
          '(metadata {source: "list", list_id}) and one that leaves it is unenrolled (reason list_change). null unlinks.',
      ),
    ),
  ),
});

export const UpdateSequenceBody = Body({
  name: Type.Optional(Name),
  description: Type.Optional(Description),
  status: Type.Optional(SequenceStatus),
  steps: Type.Optional(Steps),
  sender_user_id: Type.Optional(Nullable(Uuid())),
  list_id: Type.Optional(
    Nullable(
      Uuid(
        'A CRM list of the same client to follow: while the sequence is active its members are enrolled ' +
          '(metadata {source: "list", list_id}) and one that leaves it is unenrolled (reason list_change). null unlinks.',
      ),
    ),
  ),
});

export const ListSequencesQuery = Query({ ...pageQuerySchema, status: Type.Optional(SequenceStatus) });

export const CreateEnrollmentBody = Body({
  contact_id: Uuid('A contact of the same client.'),
  metadata: Type.Optional(
    Metadata(
      'every event of the enrollment and of the messages its SMS steps send (sms.sent, sms.delivery_failed)',
    ),
  ),
});

export const UpdateEnrollmentBody = Body({
  status: literals(
    ['active', 'paused', 'cancelled'] as const,
    'paused (manual pause), active (resume: the current step runs on the next tick) or cancelled.',
  ),
});

export const ListEnrollmentsQuery = Query({ ...pageQuerySchema, status: Type.Optional(EnrollmentStatus) });

export const SequenceParams = Type.Object({ id: Uuid() }, { additionalProperties: false });
export const EnrollmentParams = Type.Object(
  { id: Uuid(), enrollmentId: Uuid() },
  { additionalProperties: false },
);
