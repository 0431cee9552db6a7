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
import { MAX_BODY, MAX_MEDIA } from './service.ts';

const Status = Type.Union(
  ['queued', 'sending', 'sent', 'delivered', 'undelivered', 'failed', 'received'].map((s) => Type.Literal(s)),
  {
    description:
      'Outbound: queued → sending → sent → delivered, or failed / undelivered with an error_code. Inbound: received.',
  },
);

export const MessageSchema = Type.Object({
  id: Uuid(),
  conversation_id: Uuid(),
  direction: Type.Union([Type.Literal('inbound'), Type.Literal('outbound')]),
  from: Type.String({ description: 'E.164.' }),
  to: Type.String({ description: 'E.164.' }),
  body: Type.String(),
  media_urls: Type.Array(Type.String()),
  segments: Type.Integer({
    description: 'Carrier segments (GSM-7: 160, or 153 per part; UCS-2: 70, or 67).',
  }),
  encoding: Type.String({ description: 'GSM-7 or UCS-2.' }),
  fuel_cost: Type.Integer({ description: 'FUEL debited: 1 per segment (0 for inbound messages).' }),
  status: Status,
  error_code: Nullable(
    Type.String({
      description:
        'Why it failed: opted_out, do_not_contact, invalid_number, unreachable, carrier_rejected, sender_not_allowed, provider_error.',
    }),
  ),
  contact_id: Nullable(Uuid()),
  company_id: Nullable(Uuid()),
  deal_id: Nullable(Uuid()),
  metadata: MetadataOut(),
  created_at: Timestamp(),
  sent_at: Nullable(Timestamp()),
  delivered_at: Nullable(Timestamp()),
});

export const ConversationSchema = Type.Object({
  id: Uuid(),
  phone_number: Type.String({ description: "The other party's number (E.164)." }),
  our_number: Type.String({ description: "The client's number of the conversation (E.164)." }),
  contact_id: Nullable(Uuid('The contact whose phone matches, when one does.')),
  status: Type.Union([Type.Literal('open'), Type.Literal('closed')]),
  last_message_at: Nullable(Timestamp()),
  unread_count: Type.Integer({ description: 'Inbound messages since it was last marked read.' }),
  total_messages: Type.Integer({ description: 'Messages both ways.' }),
  provider: Type.String({ description: 'simulator or twilio.' }),
  created_at: Timestamp(),
  updated_at: Timestamp(),
});

export const SendMessageBody = Body({
  to: Type.String({
    minLength: 1,
    maxLength: 32,
    description: 'The recipient, E.164 (for example +14155552671).',
  }),
  body: Type.String({ minLength: 1, maxLength: MAX_BODY }),
  from: Type.Optional(
    Type.String({
      maxLength: 32,
      description: "One of the client's numbers (GET /v1/numbers); default: the first.",
    }),
  ),
  contact_id: Type.Optional(Uuid()),
  company_id: Type.Optional(Uuid()),
  deal_id: Type.Optional(Uuid()),
  media_urls: Type.Optional(
    Type.Array(Type.String({ format: 'uri', pattern: '^https://', maxLength: 2048 }), {
      maxItems: MAX_MEDIA,
      description: 'Up to 10 absolute https URLs (MMS).',
    }),
  ),
  metadata: Type.Optional(Metadata('its events: sms.sent and sms.delivery_failed')),
});

export const ListConversationsQuery = Query({
  ...pageQuerySchema,
  contact_id: Type.Optional(Uuid()),
  phone_number: Type.Optional(Type.String({ maxLength: 32, description: "The other party's number." })),
  unread: Type.Optional(Type.Boolean({ description: 'true: only conversations with unread messages.' })),
});

export const PatchConversationBody = Body({
  status: Type.Optional(Type.Union([Type.Literal('open'), Type.Literal('closed')])),
  read: Type.Optional(Type.Literal(true, { description: 'true marks every message read (unread_count 0).' })),
});

export const SimulatedInboundBody = Body({
  from: Type.String({ minLength: 1, maxLength: 32 }),
  to: Type.String({
    minLength: 1,
    maxLength: 32,
    description: 'A registered number (404 number_not_found otherwise).',
  }),
  body: Type.String({ maxLength: MAX_BODY }),
  media_urls: Type.Optional(Type.Array(Type.String({ format: 'uri' }), { maxItems: MAX_MEDIA })),
});
