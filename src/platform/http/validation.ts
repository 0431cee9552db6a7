import type { Static, TSchema } from '@sinclair/typebox';
import { Ajv, str, type ValidateFunction } from 'ajv';
import * as formats from 'ajv-formats';
import type { FastifyError, FastifyInstance } from 'fastify';
import { errors, toApiError } from './errors.ts';
import { findTextProblem, isDate, isDateTime } from './formats.ts';
import { MAX_JSON_BYTES } from './schemas.ts';

// ajv-formats is CommonJS: under ESM its function arrives as the namespace's default.
const addFormats = formats.default as unknown as (ajv: Ajv) => Ajv;

function ajv(coerceTypes: boolean | 'array'): Ajv {
  const instance = new Ajv({
    coerceTypes,
    useDefaults: true,
    removeAdditional: false,
    allErrors: true,
    strict: false,
  });
  addFormats(instance);
  // Stricter than ajv-formats: no leap second, no year 0000 (see formats.ts).
  instance.addFormat('date', isDate);
  instance.addFormat('date-time', isDateTime);
  instance.addKeyword({
    keyword: MAX_JSON_BYTES,
    type: 'object',
    schemaType: 'number',
    error: { message: ({ schema }) => str`must be at most ${schema} bytes as JSON` },
    validate: (limit: number, data: unknown) => Buffer.byteLength(JSON.stringify(data)) <= limit,
  });
  return instance;
}

/**
 * JSON bodies are validated as sent: `{"name": 5}` is a type error, not the string "5". Query
 * strings, path params and headers arrive as text, so they are coerced to the schema's types.
 *
 * Before any schema, every string of the path, the query and the body (keys included) is checked
 * for text PostgreSQL cannot store (a NUL, a lone surrogate), and the body for nesting past
 * MAX_JSON_DEPTH: a 400 naming the field, for every route at once, rather than a 500 from
 * whichever statement or recursive walk meets it first.
 */
declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route never stores its input, so it takes text PostgreSQL could not store (the docs search). */
    anyText?: boolean;
  }
}

export function installValidation(app: FastifyInstance): void {
  const body = ajv(false);
  const text = ajv('array');
  app.setValidatorCompiler(({ schema, httpPart }) => (httpPart === 'body' ? body : text).compile(schema));
  // Callback style: this hook runs on every request, and an async one costs a promise and a tick each.
  app.addHook('preValidation', (request, _reply, done) => {
    if (request.routeOptions.config.anyText) return done();
    for (const [part, value] of [
      ['params', request.params],
      ['query', request.query],
      ['body', request.body],
    ] as const) {
      const problem = findTextProblem(value);
      if (problem !== null) return done(errors.invalidField(problem.field || part, problem.message));
    }
    done();
  });
}

const compiledBodies = new WeakMap<object, ValidateFunction>();
let bodies: Ajv | undefined;

/**
 * Checks a value against a route's body schema, as the route would: the same 400 `validation_error`
 * naming the fields. For callers that reach a service without the route (the portal's forms), so
 * a rule the schema holds is not written twice.
 */
export function checkBody<T extends TSchema>(schema: T, value: unknown): Static<T> {
  bodies ??= ajv(false);
  let validate = compiledBodies.get(schema);
  if (!validate) {
    validate = bodies.compile(schema);
    compiledBodies.set(schema, validate);
  }
  if (!validate(value)) {
    const failure = Object.assign(new Error('invalid body'), {
      validation: validate.errors ?? [],
      validationContext: 'body',
    });
    throw toApiError(failure as unknown as FastifyError);
  }
  return value as Static<T>;
}
