import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../platform/http/errors.ts';
import { sendErrorPage } from './render.tsx';
import type { FormState } from './ui.tsx';

export const STALE_FORM =
  'This form was stale (it was opened before you signed in again, or on another site). Nothing was changed: check it and submit it again.';

/** A form post's fields as strings (a repeated field, such as checked events, as a list). */
export function formValues(request: FastifyRequest): FormState['values'] {
  const body = (request.body ?? {}) as Record<string, unknown>;
  const values: FormState['values'] = {};
  for (const [name, given] of Object.entries(body)) {
    if (name === '_csrf') continue;
    if (typeof given === 'string') values[name] = given;
    else if (Array.isArray(given)) values[name] = given.filter((item) => typeof item === 'string');
  }
  return values;
}

export function text(values: FormState['values'], name: string): string {
  const given = values[name];
  return typeof given === 'string' ? given.trim() : '';
}

export function list(values: FormState['values'], name: string): string[] {
  const given = values[name];
  return Array.isArray(given) ? given : typeof given === 'string' && given ? [given] : [];
}

/**
 * The API's refusal of a form's input, as the form shows it: a `validation_error`'s fields next to
 * the fields of the same name (`events.2` next to `events`), anything else of 4xx above the form.
 * Undefined for what is no refusal of input (a 404, a 500): the error page shows those.
 */
export function formErrorsOf(error: unknown, fieldNames: Record<string, string> = {}, onForm: number[] = []) {
  if (!(error instanceof ApiError) || error.statusCode >= 500) return undefined;
  if ([401, 403, 404].includes(error.statusCode) && !onForm.includes(error.statusCode)) return undefined;
  const result: Pick<FormState, 'errors' | 'formError'> & { status: number } = {
    errors: {},
    status: error.statusCode,
  };
  const fields = (error.details?.fields ?? []) as { field: string; message: string }[];
  if (error.code === 'validation_error' && fields.length) {
    for (const { field, message } of fields) {
      const apiName = field.split('.')[0];
      const name = fieldNames[apiName] ?? apiName;
      const said = humane(message);
      if (result.errors[name]?.includes(said)) continue;
      result.errors[name] = result.errors[name] ? `${result.errors[name]}; ${said}` : said;
    }
  } else {
    result.formError = error.message;
  }
  return result;
}

/** A schema's refusal in a person's words: an empty required field says so. */
function humane(message: string): string {
  if (/fewer than 1 characters|must match pattern "\\S"|fewer than 1 items/.test(message)) return 'Required.';
  const said = message
    .replace(/^must be >= (\d+)$/, 'must be at least $1')
    .replace(/^must be <= (\d+)$/, 'must be at most $1');
  return said.charAt(0).toUpperCase() + said.slice(1);
}

/** Whether the browser says the post came from a portal page (Fetch Metadata, else the Origin header). */
function fromThisOrigin(request: FastifyRequest): boolean {
  const site = request.headers['sec-fetch-site'];
  if (typeof site === 'string') return site === 'same-origin';
  const origin = request.headers.origin;
  if (typeof origin !== 'string') return false;
  try {
    return new URL(origin).host === request.host;
  } catch {
    return false;
  }
}

/**
 * A form post: the CSRF token checked first (a missing or stale one changes nothing and shows the
 * form again, 403), then `act`; the API's refusal of the input shows the form again with the errors
 * next to the fields and what the user typed.
 */
export function formHandler(options: {
  show: (request: FastifyRequest, reply: FastifyReply, form: FormState, status: number) => unknown;
  act: (request: FastifyRequest, reply: FastifyReply, values: FormState['values']) => unknown;
  fieldNames?: Record<string, string>;
  /** Refusals shown on the form rather than as an error page (a used invitation link's 404). */
  onForm?: number[];
}) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const values = formValues(request);
    if (!request.portal.csrfValid) {
      // A form of another site is not shown back filled in (with a fresh token, one click from sent).
      if (!fromThisOrigin(request))
        return sendErrorPage(
          request,
          reply,
          403,
          'This form did not come from the portal. Nothing was changed.',
        );
      return options.show(request, reply, { values, errors: {}, formError: STALE_FORM }, 403);
    }
    try {
      return await options.act(request, reply, values);
    } catch (error) {
      const refusal = formErrorsOf(error, options.fieldNames, options.onForm);
      if (!refusal) throw error;
      const { status, ...form } = refusal;
      return options.show(request, reply, { values, ...form }, status);
    }
  };
}
