import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { v7 } from 'uuid';
import { ConfigError, loadConfig } from '../../src/config.ts';
import {
  type CompletedReport,
  createVoiceProvider,
  type PlaceCallRequest,
  PlacementPendingError,
  RejectedWebhookError,
  type VoiceProvider,
} from '../../src/providers/voice/index.ts';
import { buildTestApp, eventually, type TestApp } from '../helpers.ts';
import { createJobSink } from './job-sink.ts';
import { API_KEY, retellSignature, retellStandIn } from './retell-stand-in.ts';

function dial(overrides: Partial<PlaceCallRequest> = {}): PlaceCallRequest {
  return {
    callId: v7(),
    from: '+14155550100',
    to: '+14155550111',
    ringTimeoutSeconds: 45,
    maxDurationSeconds: 300,
    agent: {
      name: 'Ava',
      greeting: 'Hi, this is Ava from Acme Dental.',
      systemPrompt: 'Book a check-up.',
      voiceId: '11labs-Adrian',
      voiceName: 'Adrian',
    },
    voicemail: { enabled: true, message: 'Sorry we missed you.' },
    metadata: { sdr_campaign_id: 'c1' },
    context: 'Ana asked for pricing; call back Thursday.',
    ...overrides,
  };
}

describe('Retell adapter', () => {
  let t: TestApp;
  let standIn: Awaited<ReturnType<typeof retellStandIn>>;
  let jobs: Awaited<ReturnType<typeof createJobSink>>;
  let voice: VoiceProvider;

  before(async () => {
    standIn = await retellStandIn();
    t = await buildTestApp({
      VOICE_PROVIDER: 'retell',
      RETELL_API_KEY: API_KEY,
      RETELL_BASE_URL: standIn.url,
      RETELL_AGENT_ID: 'agent_outbound_1',
      RETELL_ANALYSIS_WAIT_MS: '400',
      PUBLIC_BASE_URL: 'https://voice.agency.example',
    });
    jobs = await createJobSink(t.database);
    voice = await createVoiceProvider(t.config, t.platform.db, jobs.sink);
  });
  after(async () => {
    await t.close();
    await standIn.close();
  });

  const queued = async (key: string) =>
    (
      await sql<{ run_at: Date }>`SELECT run_at FROM graphile_worker.jobs WHERE key = ${key}`.execute(
        t.platform.db,
      )
    ).rows;

  test('placeCall creates the phone call with the agent, limits, voicemail drop and webhook of the request', async () => {
    standIn.answer('created');
    const request = dial();
    const before = standIn.requests.length;
    const placedAt = Date.now();
    const { providerCallId } = await voice.placeCall(request);

    assert.equal(standIn.requests.length, before + 1);
    const sent = standIn.requests.at(-1)!;
    assert.equal(sent.authorization, `Bearer ${API_KEY}`);
    assert.deepEqual(sent.body, {
      from_number: '+14155550100',
      to_number: '+14155550111',
      override_agent_id: 'agent_outbound_1',
      metadata: { sdr_campaign_id: 'c1', platform_call_id: request.callId, voicemail_drop: true },
      retell_llm_dynamic_variables: {
        agent_name: 'Ava',
        greeting: 'Hi, this is Ava from Acme Dental.',
        system_prompt: 'Book a check-up.',
        voice_name: 'Adrian',
        precall_brief: 'Ana asked for pricing; call back Thursday.',
      },
      agent_override: {
        agent: {
          agent_name: 'Ava',
          voice_id: '11labs-Adrian',
          ring_duration_ms: 45_000,
          max_call_duration_ms: 300_000,
          voicemail_option: { action: { type: 'static_text', text: 'Sorry we missed you.' } },
          webhook_url: 'https://voice.agency.example/hooks/retell',
          webhook_events: ['call_started', 'call_ended', 'call_analyzed'],
        },
      },
    });
    assert.equal(providerCallId, `call_${before + 1}a2c4e6f8b0d2f4a6c8e0`);

    const ringing = (await jobs.deliveries()).filter((d) => d.progress.providerCallId === providerCallId);
    assert.deepEqual(
      ringing.map((d) => [d.stage, d.progress.callId]),
      [['ringing', request.callId]],
    );
    // In case Retell never reports: a `failed` once ring time, call time and twice the analysis wait are over.
    const [watchdog] = await queued(`retell:${providerCallId}:failed`);
    const expected = placedAt + (45 + 300) * 1000 + 800;
    assert.ok(
      Math.abs(watchdog.run_at.getTime() - expected) < 5000,
      `watchdog at ${watchdog.run_at.toISOString()}`,
    );
  });

  test('a call shorter than a minute asks Retell for its minimum, and no voicemail drop hangs up', async () => {
    standIn.answer('created');
    await voice.placeCall(dial({ maxDurationSeconds: 30, voicemail: { enabled: false, message: 'unused' } }));
    const agent = standIn.requests.at(-1)!.body.agent_override.agent;
    assert.equal(agent.max_call_duration_ms, 60_000);
    assert.deepEqual(agent.voicemail_option, { action: { type: 'hangup' } });
    assert.equal(standIn.requests.at(-1)!.body.metadata.voicemail_drop, false);
  });

  test('one call id is dialed once, placed twice in turn or at once', async () => {
    standIn.answer('created');
    const request = dial();
    const before = standIn.requests.length;
    const settled = await Promise.allSettled([voice.placeCall(request), voice.placeCall(request)]);
    const again = await voice.placeCall(request);
    assert.equal(standIn.requests.length, before + 1);
    for (const result of settled) {
      if (result.status === 'fulfilled') assert.equal(result.value.providerCallId, again.providerCallId);
      else assert.ok(result.reason instanceof PlacementPendingError);
    }
  });

  test('a call Retell refuses can be placed again; one whose answer was lost is never dialed twice', async () => {
    const refused = dial();
    standIn.answer('rejected');
    await assert.rejects(voice.placeCall(refused), (error: any) => error.status === 400);
    standIn.answer('created');
    const placed = await voice.placeCall(refused);
    assert.match(placed.providerCallId, /^call_/);

    const lost = dial();
    standIn.answer('dropped');
    await assert.rejects(voice.placeCall(lost));
    const before = standIn.requests.length;
    standIn.answer('created');
    await assert.rejects(voice.placeCall(lost), PlacementPendingError);
    assert.equal(standIn.requests.length, before, 'not dialed again');
  });

  const webhook = (payload: object, headers: Record<string, string> = {}) => {
    const rawBody = JSON.stringify(payload);
    return {
      rawBody,
      headers: {
        'content-type': 'application/json',
        'x-retell-signature': retellSignature(rawBody),
        ...headers,
      },
    };
  };

  // The call object as get-call documents it (https://docs.retellai.com/api-references/get-call).
  const endedCall = (callId: string) => ({
    call_type: 'phone_call',
    from_number: '+14155550100',
    to_number: '+14155550111',
    direction: 'outbound',
    call_id: 'call_webhook1a2c4e6f8b0d2',
    agent_id: 'oBeDLoLOeuAbiuaMFXRtDOLriTJ5tSxD',
    agent_version: 1,
    call_status: 'ended',
    metadata: { platform_call_id: callId, voicemail_drop: true },
    start_timestamp: 1714608475945,
    end_timestamp: 1714608491736,
    duration_ms: 15791,
    disconnection_reason: 'agent_hangup',
    transcript_object: [
      { role: 'agent', content: 'Hi, this is Ava.', words: [{ word: 'Hi,', start: 0.4, end: 0.6 }] },
    ],
    recording_url: 'https://retellai.s3.us-west-2.amazonaws.com/call_webhook1a2c4e6f8b0d2/recording.wav',
    call_cost: {
      product_costs: [],
      total_duration_seconds: 16,
      total_duration_unit_price: 0.1,
      combined_cost: 11.6,
    },
  });

  test('signed webhooks are read; the analysis completes the call before the fallback does', async () => {
    const callId = v7();
    const call = endedCall(callId);
    const ended = await voice.parseWebhook(webhook({ event: 'call_ended', call }));
    assert.deepEqual(
      ended.map((report) => report.stage),
      ['answered'],
    );
    assert.equal((await queued('retell:call_webhook1a2c4e6f8b0d2:completed')).length, 1, 'fallback queued');

    const analyzed = await voice.parseWebhook(
      webhook({
        event: 'call_analyzed',
        call: {
          ...call,
          call_analysis: { call_summary: 'Booked a cleaning.', custom_analysis_data: { booked: true } },
        },
      }),
    );
    for (const report of analyzed) await jobs.sink.report(report);

    const worker = await jobs.startWorker();
    try {
      const completions = await eventually(async () => {
        const found = (await jobs.deliveries()).filter(
          (d) => d.progress.providerCallId === 'call_webhook1a2c4e6f8b0d2' && d.stage === 'completed',
        );
        return found.length === 2 && found;
      });
      // Same id twice: the calls module keeps the first, which has the analysis.
      assert.equal(completions[0].id, completions[1].id);
      const first = completions[0].progress as CompletedReport;
      assert.equal(first.callId, callId);
      assert.equal(first.summary, 'Booked a cleaning.');
      assert.equal(first.outcome, 'booked');
      assert.equal(first.costCents, 12);
      assert.equal((completions[1].progress as CompletedReport).summary, null);
    } finally {
      await worker.stop();
    }
  });

  test('unsigned, forged, tampered, replayed and malformed webhooks are rejected', async () => {
    const payload = { event: 'call_started', call: endedCall(v7()) };
    const signed = webhook(payload);
    const reject = (request: { rawBody: string; headers: Record<string, string> }, kind: string) =>
      assert.rejects(
        voice.parseWebhook(request),
        (error) => error instanceof RejectedWebhookError && error.kind === kind,
      );

    const { 'x-retell-signature': _, ...unsignedHeaders } = signed.headers;
    await reject({ rawBody: signed.rawBody, headers: unsignedHeaders }, 'unsigned');
    await reject(
      webhook(payload, { 'x-retell-signature': retellSignature(signed.rawBody, 'key_someone_else') }),
      'forged',
    );
    await reject(
      { rawBody: signed.rawBody.replace('+14155550111', '+14155550999'), headers: signed.headers },
      'forged',
    );
    await reject(
      webhook(payload, {
        'x-retell-signature': retellSignature(signed.rawBody, API_KEY, Date.now() - 10 * 60_000),
      }),
      'forged',
    );
    await reject(
      {
        rawBody: 'event=call_started',
        headers: { 'x-retell-signature': retellSignature('event=call_started') },
      },
      'malformed',
    );
    assert.equal((await voice.parseWebhook(signed)).length, 1, 'the genuine one is read');
  });
});

describe('voice configuration', () => {
  test('defaults to the simulator holding calls 1.5 s', () => {
    const config = loadConfig({});
    assert.equal(config.voiceProvider, 'simulator');
    assert.equal(config.voiceSimulatorCallMs, 1500);
    assert.equal(config.retell, null);
  });

  test('Retell without its API key, or an unknown provider, is a configuration error naming the variable', () => {
    assert.throws(
      () => loadConfig({ VOICE_PROVIDER: 'retell' }),
      (error) => error instanceof ConfigError && /RETELL_API_KEY/.test(error.message),
    );
    assert.throws(
      () => loadConfig({ VOICE_PROVIDER: 'vapi' }),
      (error) => error instanceof ConfigError && /VOICE_PROVIDER/.test(error.message),
    );
  });
});
