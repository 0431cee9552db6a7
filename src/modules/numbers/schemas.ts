import { Type } from '@sinclair/typebox';
import { Nullable, Timestamp, Uuid } from '../../platform/http/schemas.ts';

export const PhoneNumberSchema = Type.Object({
  id: Uuid(),
  number: Type.String({ description: 'E.164, for example +12025550100.' }),
  org_id: Uuid(),
  client_id: Uuid('The client the number sends and receives for.'),
  label: Nullable(Type.String()),
  agent_id: Nullable(Uuid('The agent that answers calls to the number.')),
  created_at: Timestamp(),
});
