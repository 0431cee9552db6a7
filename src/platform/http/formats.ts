/**
 * Strict `date` and `date-time` formats, shared by request validation (ajv) and by code that checks
 * a date by hand (the contact filter). ajv-formats lets through what PostgreSQL or `Date` refuse:
 * a leap second (`23:59:60`), the year 0000. A value accepted here is one PostgreSQL stores and
 * JavaScript reads back.
 */

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2})(?::(\d{2})(\.\d{1,9})?)?([Zz]|([+-])(\d{2}):(\d{2}))$/;

function daysIn(year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

function validDay(year: number, month: number, day: number): boolean {
  return year >= 1 && month >= 1 && month <= 12 && day >= 1 && day <= daysIn(year, month);
}

/** `YYYY-MM-DD`, a real calendar day of the years 0001 to 9999. */
export function isDate(value: string): boolean {
  const match = DATE.exec(value);
  return match !== null && validDay(Number(match[1]), Number(match[2]), Number(match[3]));
}

/**
 * RFC 3339 date-time with an offset (seconds optional), a real calendar day of the years 0001 to
 * 9999, seconds 00 to 59 (no leap second: PostgreSQL and `Date` disagree about them).
 */
export function isDateTime(value: string): boolean {
  const match = DATE_TIME.exec(value);
  if (match === null) return false;
  const [, year, month, day, hour, minute, second, , zone, , offsetHour, offsetMinute] = match;
  if (!validDay(Number(year), Number(month), Number(day))) return false;
  if (Number(hour) > 23 || Number(minute) > 59 || Number(second ?? 0) > 59) return false;
  if (zone.length > 1 && (Number(offsetHour) > 23 || Number(offsetMinute) > 59)) return false;
  return !Number.isNaN(Date.parse(value));
}

/**
 * Text PostgreSQL cannot store or a JSON consumer cannot read: a NUL character (refused by `text`
 * and `jsonb`) or a lone UTF-16 surrogate (not valid Unicode; `jsonb` refuses its escape).
 */
export function isUnstorableText(value: string): boolean {
  return value.includes('\u0000') || LONE_SURROGATE.test(value);
}

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** How deep a request's JSON may nest; deeper is refused before anything walks it recursively. */
export const MAX_JSON_DEPTH = 64;

export interface TextProblem {
  /** Dotted path of the value (`custom_fields.k`), empty for the part itself. */
  field: string;
  message: string;
}

/**
 * The first problem of a parsed request part: a string (or object key) PostgreSQL cannot store, or
 * nesting past MAX_JSON_DEPTH (which would overflow the stack of a recursive walk: hashing, JSON
 * serialization, validation). Null when there is none.
 */
export function findTextProblem(value: unknown, path = '', depth = 0): TextProblem | null {
  if (typeof value === 'string')
    return isUnstorableText(value)
      ? { field: path, message: 'must not contain a NUL character or an unpaired UTF-16 surrogate' }
      : null;
  if (value === null || typeof value !== 'object') return null;
  if (depth >= MAX_JSON_DEPTH)
    return { field: path, message: `must not nest deeper than ${MAX_JSON_DEPTH} levels` };
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = findTextProblem(value[i], path ? `${path}.${i}` : String(i), depth + 1);
      if (found !== null) return found;
    }
    return null;
  }
  for (const [key, item] of Object.entries(value)) {
    const itemPath = path ? `${path}.${key}` : key;
    if (isUnstorableText(key))
      return { field: itemPath, message: 'must not contain a NUL character or an unpaired UTF-16 surrogate' };
    const found = findTextProblem(item, itemPath, depth + 1);
    if (found !== null) return found;
  }
  return null;
}
