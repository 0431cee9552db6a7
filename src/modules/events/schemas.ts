import { Type } from '@sinclair/typebox';

export const EventSchema = Type.Object({
  id: Type.String({ description: 'evt_ followed by a UUID.' }),
  type: Type.String(),
  created: Type.String({ description: 'Unix seconds.' }),
  data: Type.Record(Type.String(), Type.Unknown()),
  metadata: Type.Record(Type.String(), Type.Unknown()),
});

export const EventId = Type.String({
  pattern: '^evt_[0-9a-f-]{36}$',
  description: 'evt_ followed by a UUID.',
});
