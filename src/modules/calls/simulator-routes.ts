import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { parsePhoneNumberFromString } from 'libphonenumber-js';
import { requireAdminToken } from '../../platform/auth/admin-token.ts';
import { ApiError, errors } from '../../platform/http/errors.ts';
import { Body, Nullable } from '../../platform/http/schemas.ts';
import {
  getNumberScript,
  type NumberScript,
  putNumberScript,
  type VoiceProvider,
} from '../../providers/voice/index.ts';

const hidden = { hide: true, tags: ['admin'] };

const Turn = Body({
  speaker: Type.Union([Type.Literal('agent'), Type.Literal('contact')]),
  content: Type.String({ minLength: 1, maxLength: 4000 }),
  start_time_seconds: Type.Number({ minimum: 0, maximum: 86_400 }),
});
const scriptFields = {
  outcome: Type.Union(
    ['answered', 'voicemail', 'no_answer', 'busy', 'failed', 'booked'].map((outcome) =>
      Type.Literal(outcome),
    ),
  ),
  duration_seconds: Type.Optional(Type.Integer({ minimum: 0, maximum: 86_400 })),
  transcript: Type.Optional(Type.Array(Turn, { maxItems: 500 })),
  summary: Type.Optional(Type.String({ maxLength: 4000 })),
};
const Script = Type.Object({
  number: Type.String(),
  outcome: Type.String(),
  duration_seconds: Nullable(Type.Integer()),
  transcript: Nullable(
    Type.Array(
      Type.Object({ speaker: Type.String(), content: Type.String(), start_time_seconds: Type.Number() }),
    ),
  ),
  summary: Nullable(Type.String()),
});
const NumberParams = Type.Object({ e164: Type.String({ maxLength: 32 }) });

/** A number exactly as E.164 writes it (`+14155550123`), else a 400 naming `field`. */
function e164(value: string, field: string): string {
  const parsed = parsePhoneNumberFromString(value);
  if (!parsed?.isValid() || parsed.number !== value) {
    throw errors.invalidField(field, 'is not a valid E.164 phone number (for example +14155550123)');
  }
  return value;
}

function simulatorOnly(active: boolean): void {
  if (!active)
    throw new ApiError(
      404,
      'not_found',
      'The voice simulator is not active: VOICE_PROVIDER is not simulator.',
    );
}

function scriptView(number: string, script: NumberScript) {
  return {
    number,
    outcome: script.outcome,
    duration_seconds: script.duration_seconds ?? null,
    transcript: script.transcript ?? null,
    summary: script.summary ?? null,
  };
}

/** Scripts of the voice simulator: what a simulated call to a number does. 404 unless `VOICE_PROVIDER=simulator`. */
export const voiceSimulatorScriptRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { db, secrets, config } = app.platform;
  requireAdminToken(app, secrets.adminToken);
  const active = config.voiceProvider === 'simulator';

  app.put(
    '/simulator/voice/numbers/:e164',
    {
      schema: {
        ...hidden,
        params: NumberParams,
        body: Body(scriptFields),
        response: { 200: Type.Object({ script: Script }), 201: Type.Object({ script: Script }) },
      },
    },
    async (request, reply) => {
      simulatorOnly(active);
      const number = e164(request.params.e164, 'e164');
      const { created, script } = await putNumberScript(db, number, request.body as NumberScript);
      reply.code(created ? 201 : 200);
      return { script: scriptView(number, script) };
    },
  );

  app.get(
    '/simulator/voice/numbers/:e164',
    { schema: { ...hidden, params: NumberParams, response: { 200: Type.Object({ script: Script }) } } },
    async (request) => {
      simulatorOnly(active);
      const number = e164(request.params.e164, 'e164');
      const script = await getNumberScript(db, number);
      if (!script) throw errors.notFound('Simulator script for', number);
      return { script: scriptView(number, script) };
    },
  );
};

export interface SimulatedCallRoutesOptions {
  /** The process's voice provider (`platform.providers.voice`, the one its workers use). */
  voice: VoiceProvider;
  /** The platform call id the calls module created for an inbound call's `inbound` report. */
  callIdOf(providerCallId: string): Promise<string>;
}

/**
 * `POST /simulator/calls`: plays an inbound call through the voice provider's sink: its `report` of
 * the `inbound` report creates the call (or throws 404 `number_not_found`), and `callIdOf` finds that
 * call's id.
 */
export const voiceSimulatorCallRoutes: FastifyPluginAsyncTypebox<SimulatedCallRoutesOptions> = async (
  app,
  options,
) => {
  requireAdminToken(app, app.platform.secrets.adminToken);
  const simulator = options.voice.simulator;

  app.post(
    '/simulator/calls',
    {
      schema: {
        ...hidden,
        body: Body({
          direction: Type.Literal('inbound'),
          from: Type.String({ maxLength: 32 }),
          to: Type.String({ maxLength: 32 }),
          ...scriptFields,
        }),
        response: { 202: Type.Object({ call_id: Type.String() }) },
      },
    },
    async (request, reply) => {
      simulatorOnly(simulator !== null);
      const { direction: _, from, to, ...script } = request.body;
      const { providerCallId } = await simulator!.simulateInbound({
        ...(script as NumberScript),
        from: e164(from, 'from'),
        to: e164(to, 'to'),
      });
      reply.code(202);
      return { call_id: await options.callIdOf(providerCallId) };
    },
  );
};
