import { Type } from '@sinclair/typebox';
import { Nullable, Timestamp, Uuid } from '../../platform/http/schemas.ts';

export const ApiKeySchema = Type.Object(
  {
    id: Uuid(),
    name: Type.String(),
    prefix: Type.String({ description: 'gc_live_ (agency), cl_live_ (client) or sms_live_ (legacy SMS).' }),
    kind: Type.Union([Type.Literal('agency'), Type.Literal('client'), Type.Literal('legacy_sms')]),
    rate_limit_per_minute: Type.Integer(),
    expires_at: Nullable(Timestamp()),
    tag: Nullable(Type.String()),
  },
  { description: 'An API key, without its secret.' },
);
