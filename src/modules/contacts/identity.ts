import { type CountryCode, parsePhoneNumberFromString } from 'libphonenumber-js';
import { errors } from '../../platform/http/errors.ts';

/** A contact's identities as stored: email lower-cased, phone in E.164. */

export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

/**
 * E.164 with libphonenumber-js. A number without a `+` country code is read in `defaultCountry`.
 * A number that does not parse, is not a valid number, or carries an extension is a 400 naming `field`.
 */
export function normalizePhone(phone: string, defaultCountry: string, field = 'phone'): string {
  const parsed = parsePhoneNumberFromString(phone.trim(), defaultCountry as CountryCode);
  if (!parsed?.isValid()) {
    throw errors.invalidField(field, 'is not a valid phone number (E.164, for example +14155552671)');
  }
  if (parsed.ext) throw errors.invalidField(field, 'must not carry an extension');
  return parsed.number;
}

/** Webmail domains: an address there says nothing about the contact's company. */
const FREE_MAIL_DOMAINS = new Set([
  'gmail.com',
  'googlemail.com',
  'yahoo.com',
  'yahoo.co.uk',
  'yahoo.fr',
  'ymail.com',
  'rocketmail.com',
  'hotmail.com',
  'hotmail.co.uk',
  'hotmail.fr',
  'outlook.com',
  'live.com',
  'msn.com',
  'aol.com',
  'icloud.com',
  'me.com',
  'mac.com',
  'proton.me',
  'protonmail.com',
  'pm.me',
  'gmx.com',
  'gmx.de',
  'gmx.net',
  'web.de',
  'mail.com',
  'zoho.com',
  'yandex.com',
  'yandex.ru',
  'mail.ru',
  'qq.com',
  '163.com',
  '126.com',
  'fastmail.com',
  'hey.com',
  'tutanota.com',
  'orange.fr',
  'free.fr',
  'comcast.net',
  'verizon.net',
  'att.net',
  'sbcglobal.net',
]);

/** The company domain of an email address, or null for a free-mail address. */
export function companyDomainOfEmail(email: string): string | null {
  const domain = email.slice(email.lastIndexOf('@') + 1);
  return domain && !FREE_MAIL_DOMAINS.has(domain) ? domain : null;
}

/** `first last`, or null when both are empty. */
export function deriveFullName(firstName: string | null, lastName: string | null): string | null {
  const joined = [firstName, lastName]
    .map((part) => part?.trim())
    .filter(Boolean)
    .join(' ');
  return joined || null;
}
