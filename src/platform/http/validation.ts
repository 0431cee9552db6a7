import { Ajv } from 'ajv';
import * as formats from 'ajv-formats';
import type { FastifyInstance } from 'fastify';

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
  return instance;
}

/**
 * JSON bodies are validated as sent: `{"name": 5}` is a type error, not the string "5". Query
 * strings, path params and headers arrive as text, so they are coerced to the schema's types.
 */
export function installValidation(app: FastifyInstance): void {
  const body = ajv(false);
  const text = ajv('array');
  app.setValidatorCompiler(({ schema, httpPart }) => (httpPart === 'body' ? body : text).compile(schema));
}
