import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import Fastify from 'fastify';
import { v7 } from 'uuid';
import { voiceSimulatorCallRoutes } from '../../src/modules/calls/simulator-routes.ts';
import { ApiError, installErrorHandling } from '../../src/platform/http/errors.ts';
import { installValidation } from '../../src/platform/http/validation.ts';
import {
  type CompletedReport,
  createVoiceProvider,
  type PlaceCallRequest,
  type VoiceProgress,
  type VoiceProgressSink,
} from '../../src/providers/voice/index.ts';
import { ADMIN_TOKEN, buildTestApp, eventually, sleep, type TestApp } from '../helpers.ts';
import { createJobSink, type Delivery } from './job-sink.ts';

const CALL_MS = 1500;

function dial(to: string, overrides: Partial<PlaceCallRequest> = {}): PlaceCallRequest {
  return {
    callId: v7(),
    from: '+14155550100',
    to,
    ringTimeoutSeconds: 60,
    maxDurationSeconds: 300,
    agent: {
      name: 'Ava',
      greeting: 'Hi, this is Ava from Acme Dental.',
      systemPrompt: 'Book a check-up.',
      voiceId: null,
      voiceName: null,
    },
    voicemail: { enabled: true, message: 'Sorry we missed you. Call us back at 415 555 0100.' },
    ...overrides,
  };
}

const ofCall = (deliveries: Delivery[], providerCallId: string) =>
  deliveries.filter((delivery) => delivery.progress.providerCallId === providerCallId);

async function untilFinal(sink: { deliveries(): Promise<Delivery[]> }, providerCallId: string) {
  return eventually(async () => {
    const calls = ofCall(await sink.deliveries(), providerCallId);
    return calls.some((d) => d.stage === 'completed' || d.stage === 'failed') && calls;
  }, 20_000);
}

describe('voice simulator', () => {
  let t: TestApp;
  let jobs: Awaited<ReturnType<typeof createJobSink>>;

  before(async () => {
    t = await buildTestApp({ VOICE_SIMULATOR_CALL_MS: String(CALL_MS) });
    jobs = await createJobSink(t.database);
  });
  after(() => t.close());

  const admin = (method: 'PUT' | 'GET', url: string, payload?: object) =>
    t.app.inject({
      method,
      url: `/admin/v1${url}`,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      ...(payload ? { payload } : {}),
    });

  test('an unscripted number is answered, lasts 30 simulated seconds and is held in flight for VOICE_SIMULATOR_CALL_MS', async () => {
    const voice = await createVoiceProvider(t.config, t.platform.db, jobs.sink);
    const placedAt = Date.now();
    const request = dial('+14155550111');
    const { providerCallId } = await voice.placeCall(request);

    const first = ofCall(await jobs.deliveries(), providerCallId);
    assert.deepEqual(
      first.map((d) => d.stage),
      ['ringing'],
      'ringing is reported before placeCall returns',
    );

    const worker = await jobs.startWorker();
    try {
      const calls = await untilFinal(jobs, providerCallId);
      assert.deepEqual(
        calls.map((d) => d.stage),
        ['ringing', 'answered', 'completed'],
      );
      const answeredMs = calls[1].received_at.getTime() - placedAt;
      const completedMs = calls[2].received_at.getTime() - placedAt;
      assert.ok(answeredMs >= CALL_MS / 3 - 50, `answered part-way (${answeredMs} ms)`);
      assert.ok(completedMs >= CALL_MS - 50, `held in flight for the whole call (${completedMs} ms)`);

      const completed = calls[2].progress as CompletedReport;
      assert.equal(completed.callId, request.callId);
      assert.equal(completed.id, `simulator:${providerCallId}:completed`);
      assert.equal(completed.outcome, 'answered');
      assert.equal(completed.durationSeconds, 30);
      assert.deepEqual(completed.transcript, [
        { speaker: 'agent', content: 'Hi, this is Ava from Acme Dental.', start_time_seconds: 0 },
        { speaker: 'contact', content: 'Hi! Yes, I have a minute.', start_time_seconds: 10 },
        { speaker: 'agent', content: 'Thanks for your time. Goodbye!', start_time_seconds: 20 },
      ]);
    } finally {
      await worker.stop();
    }
  });

  test('scripts set through the admin API decide the outcome of calls to their number', async () => {
    const created = await admin('PUT', '/simulator/voice/numbers/+14155550122', { outcome: 'busy' });
    assert.equal(created.statusCode, 201);
    const replaced = await admin('PUT', '/simulator/voice/numbers/%2B14155550122', {
      outcome: 'booked',
      duration_seconds: 95,
      transcript: [
        { speaker: 'agent', content: 'Hi, Ava here.', start_time_seconds: 0 },
        { speaker: 'contact', content: 'Thursday at 3 works.', start_time_seconds: 41.5 },
      ],
      summary: 'Booked for Thursday 3 pm.',
    });
    assert.equal(replaced.statusCode, 200);
    assert.equal(replaced.json().script.outcome, 'booked');
    const read = await admin('GET', '/simulator/voice/numbers/+14155550122');
    assert.deepEqual(read.json().script, { number: '+14155550122', ...replaced.json().script });
    await admin('PUT', '/simulator/voice/numbers/+14155550133', { outcome: 'no_answer' });
    await admin('PUT', '/simulator/voice/numbers/+14155550144', { outcome: 'voicemail' });

    const voice = await createVoiceProvider(t.config, t.platform.db, jobs.sink);
    const booked = await voice.placeCall(dial('+14155550122'));
    const unanswered = await voice.placeCall(dial('+14155550133'));
    const voicemail = await voice.placeCall(dial('+14155550144'));
    const worker = await jobs.startWorker();
    try {
      const bookedCall = await untilFinal(jobs, booked.providerCallId);
      const completed = bookedCall.at(-1)!.progress as CompletedReport;
      assert.equal(completed.outcome, 'booked');
      assert.equal(completed.durationSeconds, 95);
      assert.equal(completed.summary, 'Booked for Thursday 3 pm.');
      assert.equal(completed.transcript[1].content, 'Thursday at 3 works.');

      const failed = (await untilFinal(jobs, unanswered.providerCallId)).map((d) => d.progress);
      assert.deepEqual(
        failed.map((p) => p.stage),
        ['ringing', 'failed'],
      );
      assert.equal((failed[1] as Extract<VoiceProgress, { stage: 'failed' }>).reason, 'no_answer');

      const dropped = (await untilFinal(jobs, voicemail.providerCallId)).map((d) => d.progress);
      assert.deepEqual(
        dropped.map((p) => p.stage),
        ['ringing', 'voicemail', 'completed'],
      );
      assert.equal((dropped[1] as Extract<VoiceProgress, { stage: 'voicemail' }>).messageLeft, true);
      assert.equal((dropped[2] as CompletedReport).outcome, 'voicemail');
    } finally {
      await worker.stop();
    }
  });

  test('a call ends even when the worker that placed it dies mid-call', async () => {
    const placer = await jobs.startWorker();
    const { providerCallId } = await (
      await createVoiceProvider(t.config, t.platform.db, jobs.sink)
    ).placeCall(dial('+14155550155'));
    await eventually(async () =>
      ofCall(await jobs.deliveries(), providerCallId).some((d) => d.stage === 'answered'),
    );
    await placer.stop();
    await sleep(CALL_MS);
    assert.ok(
      !ofCall(await jobs.deliveries(), providerCallId).some((d) => d.stage === 'completed'),
      'nothing in the dead process finishes the call',
    );

    const successor = await jobs.startWorker();
    try {
      const calls = await untilFinal(jobs, providerCallId);
      assert.deepEqual(
        calls.map((d) => d.stage),
        ['ringing', 'answered', 'completed'],
      );
    } finally {
      await successor.stop();
    }
  });

  test('placing one call id twice, in turn or from two workers at once, places it once', async () => {
    const request = dial('+14155550166');
    const first = await createVoiceProvider(t.config, t.platform.db, jobs.sink);
    const second = await createVoiceProvider(t.config, t.platform.db, jobs.sink);
    const placed = await Promise.all([first.placeCall(request), second.placeCall(request)]);
    const again = await first.placeCall(request);
    assert.equal(placed[0].providerCallId, placed[1].providerCallId);
    assert.equal(again.providerCallId, placed[0].providerCallId);
    const placements = await t.platform.db
      .selectFrom('voice_placements')
      .selectAll()
      .where('call_id', '=', request.callId)
      .execute();
    assert.equal(placements.length, 1);

    const worker = await jobs.startWorker();
    try {
      await untilFinal(jobs, again.providerCallId);
      await sleep(300);
      const stages = ofCall(await jobs.deliveries(), again.providerCallId).map((d) => d.stage);
      assert.equal(stages.filter((s) => s === 'answered').length, 1, 'queued reports collapse on their key');
      assert.equal(stages.filter((s) => s === 'completed').length, 1);
      assert.deepEqual(new Set(stages), new Set(['ringing', 'answered', 'completed']));
    } finally {
      await worker.stop();
    }
  });

  test('scripts are validated: E.164 only, a known outcome', async () => {
    const spaced = await admin('PUT', '/simulator/voice/numbers/+1%20415%20555%200100', {
      outcome: 'answered',
    });
    assert.equal(spaced.statusCode, 400);
    assert.equal(spaced.json().details.fields[0].field, 'e164');
    const national = await admin('PUT', '/simulator/voice/numbers/4155550100', { outcome: 'answered' });
    assert.equal(national.statusCode, 400);
    const outcome = await admin('PUT', '/simulator/voice/numbers/+14155550100', { outcome: 'hung_up' });
    assert.equal(outcome.statusCode, 400);
    assert.equal(outcome.json().error, 'validation_error');
    const missing = await admin('GET', '/simulator/voice/numbers/+14155550199');
    assert.equal(missing.statusCode, 404);
  });

  test('POST /simulator/calls plays an inbound call through the calls module, which may refuse it', async () => {
    const orgNumbers = new Set(['+14155550177']);
    const callIds = new Map<string, string>();
    // Stands for the calls module: its `report` of `inbound` creates the call or refuses the number.
    const calls: VoiceProgressSink = {
      report: async (progress) => {
        if (progress.stage === 'inbound') {
          if (!orgNumbers.has(progress.to)) {
            throw new ApiError(
              404,
              'number_not_found' as 'not_found',
              `${progress.to} is not a number of any org.`,
            );
          }
          callIds.set(progress.providerCallId, v7());
        }
        await jobs.sink.report(progress);
      },
      reportLater: jobs.sink.reportLater,
    };
    const voice = await createVoiceProvider(t.config, t.platform.db, calls);
    const app = Fastify();
    app.decorate('platform', t.platform);
    installValidation(app);
    installErrorHandling(app);
    await app.register(voiceSimulatorCallRoutes, {
      prefix: '/admin/v1',
      voice,
      callIdOf: async (providerCallId) => callIds.get(providerCallId)!,
    });
    const post = (payload: object) =>
      app.inject({
        method: 'POST',
        url: '/admin/v1/simulator/calls',
        headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
        payload,
      });

    const accepted = await post({
      direction: 'inbound',
      from: '+14155550188',
      to: '+14155550177',
      outcome: 'answered',
    });
    assert.equal(accepted.statusCode, 202);
    const callId = accepted.json().call_id;
    const [providerCallId] = [...callIds].find(([, id]) => id === callId)!;

    const refused = await post({
      direction: 'inbound',
      from: '+14155550188',
      to: '+14155550100',
      outcome: 'answered',
    });
    assert.equal(refused.statusCode, 404);
    assert.equal(refused.json().error, 'number_not_found');

    const invalid = await post({
      direction: 'inbound',
      from: 'anonymous',
      to: '+14155550177',
      outcome: 'answered',
    });
    assert.equal(invalid.statusCode, 400);
    assert.equal(invalid.json().details.fields[0].field, 'from');

    const worker = await jobs.startWorker();
    try {
      const inbound = await untilFinal(jobs, providerCallId);
      assert.deepEqual(
        inbound.map((d) => d.stage),
        ['inbound', 'answered', 'completed'],
      );
      assert.equal(inbound[0].progress.direction, 'inbound');
      assert.equal(inbound[0].progress.callId, null);
      await sleep(CALL_MS + 300);
      const inboundReports = (await jobs.deliveries()).filter((d) => d.progress.direction === 'inbound');
      assert.ok(
        inboundReports.every((d) => callIds.has(d.progress.providerCallId)),
        'a refused inbound call plays nothing',
      );
    } finally {
      await worker.stop();
      await app.close();
    }
  });
});

describe('voice simulator admin routes under another provider', () => {
  test('answer 404 while VOICE_PROVIDER is not simulator', async () => {
    const t = await buildTestApp({ VOICE_PROVIDER: 'retell', RETELL_API_KEY: 'key_test' });
    try {
      const response = await t.app.inject({
        method: 'PUT',
        url: '/admin/v1/simulator/voice/numbers/+14155550100',
        headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
        payload: { outcome: 'answered' },
      });
      assert.equal(response.statusCode, 404);
      assert.equal(response.json().error, 'not_found');
    } finally {
      await t.close();
    }
  });
});
