import { Type } from '@sinclair/typebox';
import { Nullable, Timestamp, Uuid } from '../../platform/http/schemas.ts';

export const UserRoleSchema = Type.Union([
  Type.Literal('owner'),
  Type.Literal('admin'),
  Type.Literal('member'),
  Type.Literal('client'),
]);

export const UserSchema = Type.Object({
  id: Uuid(),
  email: Type.String(),
  role: UserRoleSchema,
  client_id: Nullable(Uuid('The client of a client user; null for agency users.')),
  status: Type.Union([Type.Literal('invited'), Type.Literal('active'), Type.Literal('disabled')]),
  created_at: Timestamp(),
  last_sign_in_at: Nullable(Timestamp()),
});
