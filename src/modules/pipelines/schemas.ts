import { Type } from '@sinclair/typebox';
import { Body, Nullable, Timestamp, Uuid } from '../../platform/http/schemas.ts';

export const MAX_STAGES = 50;

export const StageSchema = Type.Object(
  {
    id: Uuid(),
    name: Type.String(),
    position: Type.Integer({ description: 'Order of the stage in its pipeline, from 0.' }),
    probability: Nullable(Type.Number({ description: 'Chance of winning a deal in this stage, 0 to 1.' })),
  },
  { description: 'A stage of a pipeline.' },
);

export const PipelineSchema = Type.Object(
  {
    id: Uuid(),
    name: Type.String(),
    is_default: Type.Boolean({ description: 'Deals that name no pipeline go to the default one.' }),
    stages: Type.Array(StageSchema, { description: 'In order.' }),
    created_at: Timestamp(),
  },
  { description: 'A deal pipeline and its ordered stages.' },
);

export const CreatePipelineBody = Body({
  name: Type.String({ minLength: 1, maxLength: 200 }),
  is_default: Type.Optional(
    Type.Boolean({ description: 'Make this the default pipeline in place of the current one.' }),
  ),
  stages: Type.Array(
    Body({
      name: Type.String({ minLength: 1, maxLength: 100 }),
      probability: Type.Optional(Nullable(Type.Number({ minimum: 0, maximum: 1 }))),
    }),
    { minItems: 1, maxItems: MAX_STAGES, description: 'The stages, in order.' },
  ),
});
