import type { SmsDeliveryStatus, SmsErrorCode } from './types.ts';

/**
 * Twilio error codes (twilio.com/docs/api/errors) in the platform's words. Documented in
 * docs/pages/platform/providers.md; a code not listed is `carrier_rejected` when it is a carrier failure
 * (300xx) and `provider_error` otherwise.
 */
const ERROR_CODES: Record<number, SmsErrorCode> = {
  21211: 'invalid_number', // invalid 'To' phone number
  21217: 'invalid_number', // phone number does not appear to be valid
  21614: 'invalid_number', // 'To' number is not a valid mobile number
  21610: 'opted_out', // attempt to send to an unsubscribed recipient (replied STOP)
  21612: 'unreachable', // the 'To' number is not currently reachable via SMS
  30003: 'unreachable', // unreachable destination handset
  30005: 'unreachable', // unknown destination handset
  30006: 'unreachable', // landline or unreachable carrier
  30004: 'carrier_rejected', // message blocked
  30007: 'carrier_rejected', // message filtered by the carrier
  30008: 'carrier_rejected', // unknown error from the carrier
  21212: 'sender_not_allowed', // invalid 'From' number
  21606: 'sender_not_allowed', // 'From' is not a message-capable number of the account
  21660: 'sender_not_allowed', // 'From' number does not belong to the account
  21408: 'sender_not_allowed', // permission to send to this region is not enabled
  30032: 'sender_not_allowed', // toll-free number not verified
  30034: 'sender_not_allowed', // unregistered US A2P 10DLC number
};

export function platformErrorCode(twilioCode: number | string | null | undefined): SmsErrorCode {
  const code = Number(twilioCode);
  if (!Number.isInteger(code)) return 'provider_error';
  return ERROR_CODES[code] ?? (code >= 30000 && code < 31000 ? 'carrier_rejected' : 'provider_error');
}

/**
 * Twilio message statuses (MessageStatus) in the platform's words; null for statuses of inbound messages,
 * which no status callback of an outbound message should carry.
 */
const STATUSES: Record<string, SmsDeliveryStatus> = {
  accepted: 'sending',
  scheduled: 'sending',
  queued: 'sending',
  sending: 'sending',
  sent: 'sent',
  delivered: 'delivered',
  read: 'delivered',
  undelivered: 'undelivered',
  failed: 'failed',
  canceled: 'failed',
};

export function platformStatus(twilioStatus: string): SmsDeliveryStatus | null {
  return STATUSES[twilioStatus] ?? null;
}
