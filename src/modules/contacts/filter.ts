import { type RawBuilder, sql } from 'kysely';
import { isUuid } from '../../platform/db/ids.ts';
import { containsPattern, escapeLike } from '../../platform/db/like.ts';
import { errors, type FieldError } from '../../platform/http/errors.ts';
import { isDateTime } from '../../platform/http/formats.ts';
import { companyOfContact } from '../companies/service.ts';
import { normalizeEmail, normalizePhone } from './identity.ts';

/**
 * A contact filter, a smart list's `filter_branch`: a tree of `{and: [...]}` / `{or: [...]}` groups whose leaves are
 * conditions `{field, operator, value}` on a contact. It is validated on write (every failure names
 * its path) and compiled to a parameterized SQL predicate over `contacts AS c` on read: field names
 * map to fixed columns, and every value is a bound parameter.
 */

export type FilterNode = { and: FilterNode[] } | { or: FilterNode[] } | Condition;

export interface Condition {
  field: string;
  operator: string;
  value?: unknown;
}

export const LIMITS = { depth: 5, conditions: 50, groupSize: 50, listValues: 100, text: 500 } as const;

type Kind = 'text' | 'uuid' | 'tags' | 'enum' | 'date';

interface Field {
  kind: Kind;
  /** The value as SQL: a contact column, or a column of a related row. */
  column: RawBuilder<unknown>;
  /** For a field of a related row (emails, phones, company): the rows and how they link to `c`. */
  related?: RawBuilder<unknown>;
  values?: readonly string[];
  /** Brings a value to its stored form (lower-cased email, E.164 phone). */
  normalize?: (value: string, defaultCountry: string, path: string) => string;
}

const EMAILS = sql`contact_emails ce WHERE ce.contact_id = c.id`;
const PHONES = sql`contact_phones cp WHERE cp.contact_id = c.id`;

const contactColumn = (name: string): Field => ({ kind: 'text', column: sql.ref(`c.${name}`) });

export const FIELDS: Record<string, Field> = {
  first_name: contactColumn('first_name'),
  last_name: contactColumn('last_name'),
  full_name: contactColumn('full_name'),
  title: contactColumn('title'),
  lifecycle_stage: contactColumn('lifecycle_stage'),
  source: contactColumn('source'),
  owner_user_id: { kind: 'uuid', column: sql.ref('c.owner_user_id') },
  company_id: { kind: 'uuid', column: sql.ref('c.company_id') },
  tags: { kind: 'tags', column: sql.ref('c.tags') },
  created_at: { kind: 'date', column: sql.ref('c.created_at') },
  updated_at: { kind: 'date', column: sql.ref('c.updated_at') },
  email: {
    kind: 'text',
    column: sql.ref('ce.email'),
    related: EMAILS,
    normalize: (value) => normalizeEmail(value),
  },
  'email.status': {
    kind: 'enum',
    column: sql.ref('ce.status'),
    related: EMAILS,
    values: ['unverified', 'verified', 'bounced'],
  },
  phone: {
    kind: 'text',
    column: sql.ref('cp.phone_e164'),
    related: PHONES,
    normalize: (value, defaultCountry, path) => normalizePhone(value, defaultCountry, path),
  },
  'phone.consent_status': {
    kind: 'enum',
    column: sql.ref('cp.consent_status'),
    related: PHONES,
    values: ['unknown', 'opt_in', 'opt_out', 'do_not_call'],
  },
  'phone.status': {
    kind: 'enum',
    column: sql.ref('cp.status'),
    related: PHONES,
    values: ['unverified', 'verified', 'invalid'],
  },
  'phone.dnc_scope': {
    kind: 'enum',
    column: sql.ref('cp.dnc_scope'),
    related: PHONES,
    values: ['individual', 'company', 'global'],
  },
  'company.name': { kind: 'text', column: companyOfContact.column('name'), related: companyOfContact.rows },
  'company.domain': {
    kind: 'text',
    column: companyOfContact.column('domain'),
    related: companyOfContact.rows,
  },
  'company.industry': {
    kind: 'text',
    column: companyOfContact.column('industry'),
    related: companyOfContact.rows,
  },
};

/** Each negative operator is the negation of a positive one. */
const NEGATION: Record<string, string> = {
  neq: 'eq',
  not_contains: 'contains',
  not_in: 'in',
  is_empty: 'is_not_empty',
  not_has: 'has',
  has_none: 'has_any',
};

type ValueShape =
  | 'none'
  | 'text'
  | 'list'
  | 'uuid'
  | 'uuids'
  | 'enum'
  | 'enums'
  | 'date'
  | 'days'
  | 'tag'
  | 'tagList';

const OPERATORS: Record<Kind, Record<string, ValueShape>> = {
  text: {
    eq: 'text',
    neq: 'text',
    contains: 'text',
    not_contains: 'text',
    starts_with: 'text',
    ends_with: 'text',
    in: 'list',
    not_in: 'list',
    is_empty: 'none',
    is_not_empty: 'none',
  },
  uuid: { eq: 'uuid', neq: 'uuid', in: 'uuids', not_in: 'uuids', is_empty: 'none', is_not_empty: 'none' },
  enum: { eq: 'enum', neq: 'enum', in: 'enums', not_in: 'enums', is_empty: 'none', is_not_empty: 'none' },
  tags: {
    has: 'tag',
    not_has: 'tag',
    has_any: 'tagList',
    has_all: 'tagList',
    has_none: 'tagList',
    is_empty: 'none',
    is_not_empty: 'none',
  },
  date: { before: 'date', after: 'date', within_last_days: 'days' },
};

const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?(Z|[+-]\d{2}:\d{2})$/;

/** Checks a filter tree; returns it with values in their stored form, or throws a 400 naming the path. */
export function validateFilter(input: unknown, defaultCountry: string, root = 'filter_branch'): FilterNode {
  let conditions = 0;
  const fail = (path: string, message: string): never => {
    throw errors.validation([{ field: path, message }] satisfies FieldError[]);
  };

  const visit = (node: unknown, path: string, depth: number): FilterNode => {
    if (node === null || typeof node !== 'object' || Array.isArray(node)) {
      return fail(path, 'must be an object: {and: [...]}, {or: [...]} or {field, operator, value}');
    }
    const keys = Object.keys(node);
    if (keys.includes('and') || keys.includes('or')) {
      if (keys.length !== 1) return fail(path, 'a group has exactly one key, and or or');
      const kind = keys[0] as 'and' | 'or';
      const children = (node as Record<string, unknown>)[kind];
      if (depth >= LIMITS.depth) return fail(path, `nests deeper than ${LIMITS.depth} groups`);
      if (!Array.isArray(children) || children.length === 0 || children.length > LIMITS.groupSize) {
        return fail(`${path}.${kind}`, `must be an array of 1 to ${LIMITS.groupSize} conditions or groups`);
      }
      const visited = children.map((child, i) => visit(child, `${path}.${kind}[${i}]`, depth + 1));
      return kind === 'and' ? { and: visited } : { or: visited };
    }
    const unknown = keys.filter((key) => !['field', 'operator', 'value'].includes(key));
    if (unknown.length > 0)
      return fail(`${path}.${unknown[0]}`, 'is not a condition key (field, operator, value)');
    conditions += 1;
    if (conditions > LIMITS.conditions)
      return fail(path, `is past the limit of ${LIMITS.conditions} conditions`);
    return visitCondition(node as Record<string, unknown>, path);
  };

  const visitCondition = (node: Record<string, unknown>, path: string): Condition => {
    const { field: name, operator } = node;
    if (typeof name !== 'string' || !(name in FIELDS)) {
      return fail(`${path}.field`, `must be one of ${Object.keys(FIELDS).join(', ')}`);
    }
    const field = FIELDS[name];
    const operators = OPERATORS[field.kind];
    if (typeof operator !== 'string' || !(operator in operators)) {
      return fail(`${path}.operator`, `must be one of ${Object.keys(operators).join(', ')} for ${name}`);
    }
    const valuePath = `${path}.value`;
    // Exact operators compare with the stored form; free-text ones (contains, starts_with) with what is stored.
    const normalize =
      ['eq', 'neq', 'in', 'not_in'].includes(operator) && field.normalize
        ? (item: string, itemPath: string) => field.normalize?.(item, defaultCountry, itemPath) ?? item
        : (item: string) => item;
    const value = checkValue(operators[operator], node.value, field, valuePath, normalize, fail);
    return value === undefined ? { field: name, operator } : { field: name, operator, value };
  };

  return visit(input, root, 0);
}

function checkValue(
  shape: ValueShape,
  value: unknown,
  field: Field,
  path: string,
  normalize: (item: string, itemPath: string) => string,
  fail: (path: string, message: string) => never,
): unknown {
  const text = (item: unknown, itemPath: string, max: number): string => {
    if (typeof item !== 'string' || item.length === 0 || item.length > max) {
      return fail(itemPath, `must be a string of 1 to ${max} characters`);
    }
    return normalize(item, itemPath);
  };
  const list = <T>(check: (item: unknown, itemPath: string) => T): T[] => {
    if (!Array.isArray(value) || value.length === 0 || value.length > LIMITS.listValues) {
      return fail(path, `must be an array of 1 to ${LIMITS.listValues} values`);
    }
    return value.map((item, i) => check(item, `${path}[${i}]`));
  };
  const uuid = (item: unknown, itemPath: string): string =>
    typeof item === 'string' && isUuid(item) ? item.toLowerCase() : fail(itemPath, 'must be a UUID');
  const member = (item: unknown, itemPath: string): string =>
    typeof item === 'string' && field.values?.includes(item)
      ? item
      : fail(itemPath, `must be one of ${field.values?.join(', ')}`);
  const tag = (item: unknown, itemPath: string): string =>
    typeof item === 'string' && item.length > 0 && item.length <= 100
      ? item
      : fail(itemPath, 'must be a tag of 1 to 100 characters');

  switch (shape) {
    case 'none':
      if (value !== undefined && value !== null) fail(path, 'must be absent for this operator');
      return undefined;
    case 'text':
      return text(value, path, LIMITS.text);
    case 'list':
      return list((item, itemPath) => text(item, itemPath, LIMITS.text));
    case 'uuid':
      return uuid(value, path);
    case 'uuids':
      return list(uuid);
    case 'enum':
      return member(value, path);
    case 'enums':
      return list(member);
    case 'tag':
      return tag(value, path);
    case 'tagList':
      return list(tag);
    case 'date':
      if (typeof value !== 'string' || !ISO_DATE_TIME.test(value) || !isDateTime(value)) {
        return fail(path, 'must be an ISO 8601 date-time, for example 2025-01-31T00:00:00Z');
      }
      return value;
    case 'days':
      if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > 36_500) {
        return fail(path, 'must be a whole number of days from 1 to 36500');
      }
      return value;
  }
}

/** Operators whose conditions are relative to now: their matches change as time passes, with no write. */
export const RELATIVE_TIME_OPERATORS = ['within_last_days'] as const;

/** True when a stored filter tree (a jsonb column) has a condition relative to now, at any depth. */
export function hasRelativeTimeCondition(filter: RawBuilder<unknown>): RawBuilder<boolean> {
  return sql<boolean>`jsonb_path_exists(${filter}, 'lax $.** ? (@.operator == $operators[*])',
    jsonb_build_object('operators', ${JSON.stringify(RELATIVE_TIME_OPERATORS)}::jsonb))`;
}

/** The SQL predicate of a validated tree, over `contacts AS c`. */
export function compileFilter(node: FilterNode): RawBuilder<boolean> {
  if ('and' in node) return sql<boolean>`(${sql.join(node.and.map(compileFilter), sql` AND `)})`;
  if ('or' in node) return sql<boolean>`(${sql.join(node.or.map(compileFilter), sql` OR `)})`;
  const field = FIELDS[node.field];
  const negated = NEGATION[node.operator];
  if (field.related) {
    // A field of related rows (emails, phones, company) holds when some row matches; a negative
    // operator holds when none does.
    const exists = (operator: string) =>
      sql`EXISTS (SELECT 1 FROM ${field.related} AND ${predicate(field, operator, node.value)})`;
    return negated ? sql<boolean>`NOT ${exists(negated)}` : sql<boolean>`${exists(node.operator)}`;
  }
  // A negative operator holds for an empty value too: "not equal to x" includes "no value".
  return negated
    ? sql<boolean>`NOT coalesce(${predicate(field, negated, node.value)}, false)`
    : sql<boolean>`${predicate(field, node.operator, node.value)}`;
}

/** A positive operator applied to the field's column. */
function predicate(field: Field, operator: string, value: unknown): RawBuilder<unknown> {
  const column = field.column;
  const text = value as string;
  switch (operator) {
    case 'eq':
      if (field.kind === 'text') return sql`${column} ILIKE ${escapeLike(text)}`;
      if (field.kind === 'uuid') return sql`${column} = ${text}::uuid`;
      return sql`${column} = ${text}`;
    case 'in':
      if (field.kind === 'text') {
        return sql`lower(${column}) = ANY(${(value as string[]).map((item) => item.toLowerCase())}::text[])`;
      }
      if (field.kind === 'uuid') return sql`${column} = ANY(${value}::uuid[])`;
      return sql`${column} = ANY(${value}::text[])`;
    case 'contains':
      return sql`${column} ILIKE ${containsPattern(text)}`;
    case 'starts_with':
      return sql`${column} ILIKE ${`${escapeLike(text)}%`}`;
    case 'ends_with':
      return sql`${column} ILIKE ${`%${escapeLike(text)}`}`;
    case 'is_not_empty':
      if (field.kind === 'tags') return sql`cardinality(${column}) > 0`;
      if (field.kind === 'text') return sql`(${column} IS NOT NULL AND ${column} <> '')`;
      return sql`${column} IS NOT NULL`;
    case 'has':
      return sql`${column} @> ARRAY[${text}]::text[]`;
    case 'has_any':
      return sql`${column} && ${value}::text[]`;
    case 'has_all':
      return sql`${column} @> ${value}::text[]`;
    case 'before':
      return sql`${column} < ${text}::timestamptz`;
    case 'after':
      return sql`${column} > ${text}::timestamptz`;
    case 'within_last_days':
      return sql`${column} >= now() - make_interval(days => ${value as number})`;
    default:
      throw new Error(`operator ${operator} has no SQL`);
  }
}
