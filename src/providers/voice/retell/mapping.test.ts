import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { CompletedReport, FailedReport, VoiceProgress } from '../types.ts';
import { mapRetellWebhook, type RetellCall } from './mapping.ts';

/*
 * Payloads as Retell documents them:
 * - the webhook envelope and its example `call_ended` body: https://docs.retellai.com/features/webhook-overview
 * - the call object (transcript_object with word timings, call_analysis, call_cost, recording_url,
 *   duration_ms, metadata): https://docs.retellai.com/api-references/get-call
 * - disconnection reasons and the call status each leaves: https://docs.retellai.com/reliability/debug-call-disconnect
 */

const START = 1714608475945;
const END = 1714608491736;

// The example of the webhook overview page, with the transcript_object it elides filled in per get-call.
function documentedCall(overrides: Partial<RetellCall> = {}): RetellCall {
  return {
    call_type: 'phone_call',
    from_number: '+12137771234',
    to_number: '+12137771235',
    direction: 'inbound',
    call_id: 'Jabr9TXYYJHfvl6Syypi88rdAHYHmcq6',
    agent_id: 'oBeDLoLOeuAbiuaMFXRtDOLriTJ5tSxD',
    agent_version: 1,
    call_status: 'ended',
    metadata: {},
    retell_llm_dynamic_variables: { customer_name: 'John Doe' },
    start_timestamp: START,
    end_timestamp: END,
    duration_ms: END - START,
    disconnection_reason: 'user_hangup',
    transcript:
      "Agent: hi how are you doing?\nUser: Doing pretty well. How are you?\nAgent: That's great to hear! I am doing well too, thanks for asking.",
    transcript_object: [
      {
        role: 'agent',
        content: 'hi how are you doing?',
        words: [
          { word: 'hi', start: 0.7, end: 1.3 },
          { word: 'how', start: 1.3, end: 1.5 },
        ],
      },
      {
        role: 'user',
        content: 'Doing pretty well. How are you?',
        words: [
          { word: 'Doing', start: 3.3, end: 3.5 },
          { word: 'pretty', start: 3.5, end: 3.7 },
        ],
      },
      {
        role: 'agent',
        content: "That's great to hear! I am doing well too, thanks for asking.",
        words: [{ word: "That's", start: 5.12, end: 5.4 }],
      },
    ],
    recording_url:
      'https://retellai.s3.us-west-2.amazonaws.com/Jabr9TXYYJHfvl6Syypi88rdAHYHmcq6/recording.wav',
    public_log_url:
      'https://retellai.s3.us-west-2.amazonaws.com/Jabr9TXYYJHfvl6Syypi88rdAHYHmcq6/public_log.txt',
    call_cost: {
      product_costs: [{ product: 'elevenlabs_tts', unit_price: 1, cost: 60 }],
      total_duration_seconds: 16,
      total_duration_unit_price: 1,
      combined_cost: 70,
    },
    ...overrides,
  } as RetellCall;
}

const outbound = (overrides: Partial<RetellCall> = {}) =>
  documentedCall({
    direction: 'outbound',
    from_number: '+12137771235',
    to_number: '+12137771234',
    metadata: { platform_call_id: '0190f3a2-7b1c-7cc0-9a53-5d2b8e0c4f11', voicemail_drop: true },
    ...overrides,
  });

const analysis = (overrides: Record<string, unknown> = {}) => ({
  call_summary: 'The user asked how the agent was doing and the agent replied politely.',
  in_voicemail: false,
  user_sentiment: 'Positive' as const,
  call_successful: true,
  custom_analysis_data: {},
  ...overrides,
});

const stages = (reports: VoiceProgress[]) => reports.map((report) => report.stage);

describe('Retell webhooks to call progress', () => {
  test('call_started of an outbound call is its pickup, on the platform call id of its metadata', () => {
    const { reports, completionFallback } = mapRetellWebhook({
      event: 'call_started',
      call: outbound({ call_status: 'ongoing', end_timestamp: undefined, disconnection_reason: undefined }),
    });
    assert.deepEqual(reports, [
      {
        id: 'retell:Jabr9TXYYJHfvl6Syypi88rdAHYHmcq6:answered',
        provider: 'retell',
        providerCallId: 'Jabr9TXYYJHfvl6Syypi88rdAHYHmcq6',
        direction: 'outbound',
        callId: '0190f3a2-7b1c-7cc0-9a53-5d2b8e0c4f11',
        occurredAt: new Date(START).toISOString(),
        stage: 'answered',
        answeredAt: new Date(START).toISOString(),
      },
    ]);
    assert.equal(completionFallback, null);
  });

  test('every report of an inbound call comes after its inbound report, so any webhook can open the call', () => {
    const started = mapRetellWebhook({
      event: 'call_started',
      call: documentedCall({ call_status: 'ongoing' }),
    });
    assert.deepEqual(stages(started.reports), ['inbound', 'answered']);
    const inbound = started.reports[0];
    assert.equal(inbound.callId, null);
    assert.equal(
      inbound.stage === 'inbound' && `${inbound.from} → ${inbound.to}`,
      '+12137771234 → +12137771235',
    );

    const ended = mapRetellWebhook({ event: 'call_ended', call: documentedCall() });
    assert.deepEqual(stages(ended.reports), ['inbound', 'answered']);
    assert.equal(ended.reports[0].id, inbound.id);
  });

  test('call_ended of a connected call waits for the analysis; its completion without summary is the fallback', () => {
    const { reports, completionFallback } = mapRetellWebhook({ event: 'call_ended', call: outbound() });
    assert.deepEqual(stages(reports), ['answered']);
    assert.equal(completionFallback?.id, 'retell:Jabr9TXYYJHfvl6Syypi88rdAHYHmcq6:completed');
    assert.equal(completionFallback?.summary, null);
    assert.equal(completionFallback?.durationSeconds, 16);
  });

  test('call_analyzed completes the call with transcript, summary, recording, cost and disposition', () => {
    const { reports, completionFallback } = mapRetellWebhook({
      event: 'call_analyzed',
      call: outbound({ call_analysis: analysis() }),
    });
    assert.equal(completionFallback, null);
    assert.deepEqual(stages(reports), ['answered', 'completed']);
    const completed = reports[1] as CompletedReport;
    assert.deepEqual(completed, {
      id: 'retell:Jabr9TXYYJHfvl6Syypi88rdAHYHmcq6:completed',
      provider: 'retell',
      providerCallId: 'Jabr9TXYYJHfvl6Syypi88rdAHYHmcq6',
      direction: 'outbound',
      callId: '0190f3a2-7b1c-7cc0-9a53-5d2b8e0c4f11',
      occurredAt: new Date(END).toISOString(),
      stage: 'completed',
      endedAt: new Date(END).toISOString(),
      durationSeconds: 16,
      transcript: [
        { speaker: 'agent', content: 'hi how are you doing?', start_time_seconds: 0.7 },
        { speaker: 'contact', content: 'Doing pretty well. How are you?', start_time_seconds: 3.3 },
        {
          speaker: 'agent',
          content: "That's great to hear! I am doing well too, thanks for asking.",
          start_time_seconds: 5.12,
        },
      ],
      summary: 'The user asked how the agent was doing and the agent replied politely.',
      recordingUrl:
        'https://retellai.s3.us-west-2.amazonaws.com/Jabr9TXYYJHfvl6Syypi88rdAHYHmcq6/recording.wav',
      recordingDurationSeconds: 16,
      costCents: 70,
      outcome: 'answered',
      disposition: 'user_hangup',
    });
  });

  test('the booked analysis field makes the outcome booked', () => {
    for (const booked of [true, 'true']) {
      const { reports } = mapRetellWebhook({
        event: 'call_analyzed',
        call: outbound({ call_analysis: analysis({ custom_analysis_data: { booked } }) }),
      });
      assert.equal((reports.at(-1) as CompletedReport).outcome, 'booked');
    }
  });

  test('voicemail_reached reports the voicemail, with the message left when the call asked for a drop', () => {
    const dropped = mapRetellWebhook({
      event: 'call_ended',
      call: outbound({ disconnection_reason: 'voicemail_reached' }),
    });
    assert.deepEqual(stages(dropped.reports), ['answered', 'voicemail']);
    assert.equal(dropped.reports[1].stage === 'voicemail' && dropped.reports[1].messageLeft, true);
    assert.equal(dropped.completionFallback?.outcome, 'voicemail');

    const hungUp = mapRetellWebhook({
      event: 'call_analyzed',
      call: outbound({
        disconnection_reason: 'voicemail_reached',
        metadata: { platform_call_id: '0190f3a2-7b1c-7cc0-9a53-5d2b8e0c4f11', voicemail_drop: false },
        call_analysis: analysis({ in_voicemail: true }),
      }),
    });
    assert.deepEqual(stages(hungUp.reports), ['answered', 'voicemail', 'completed']);
    assert.equal(hungUp.reports[1].stage === 'voicemail' && hungUp.reports[1].messageLeft, false);

    // Voicemail detection off: only the analysis tells, and no message was dropped.
    const detected = mapRetellWebhook({
      event: 'call_analyzed',
      call: outbound({
        disconnection_reason: 'agent_hangup',
        call_analysis: analysis({ in_voicemail: true }),
      }),
    });
    assert.equal((detected.reports.at(-1) as CompletedReport).outcome, 'voicemail');
    assert.equal(detected.reports[1].stage === 'voicemail' && detected.reports[1].messageLeft, false);
  });

  // Every reason of the SDK's `disconnection_reason` enum and of the disconnection doc, with the
  // call status the doc gives it; error reasons are tried before and after the call connected.
  const REASONS: Record<string, 'ended' | 'not_connected' | 'error'> = {
    user_hangup: 'ended',
    agent_hangup: 'ended',
    call_transfer: 'ended',
    voicemail_reached: 'ended',
    ivr_reached: 'ended',
    inactivity: 'ended',
    machine_detected: 'ended',
    max_duration_reached: 'ended',
    transfer_bridged: 'ended',
    transfer_cancelled: 'ended',
    manual_stopped: 'ended',
    call_take_over: 'ended',
    dial_busy: 'not_connected',
    dial_failed: 'not_connected',
    dial_no_answer: 'not_connected',
    invalid_destination: 'not_connected',
    telephony_provider_permission_denied: 'not_connected',
    telephony_provider_unavailable: 'not_connected',
    sip_routing_error: 'not_connected',
    marked_as_spam: 'not_connected',
    user_declined: 'not_connected',
    concurrency_limit_reached: 'error',
    no_concurrency_fallback: 'error',
    no_valid_payment: 'error',
    scam_detected: 'error',
    error_inbound_webhook: 'error',
    error_llm_websocket_open: 'error',
    error_llm_websocket_lost_connection: 'error',
    error_llm_websocket_runtime: 'error',
    error_llm_websocket_corrupt_payload: 'error',
    error_no_audio_received: 'error',
    error_asr: 'error',
    error_retell: 'error',
    error_unknown: 'error',
    error_user_not_joined: 'error',
    registered_call_timeout: 'error',
  };
  const FAILURE: Record<string, string> = {
    dial_no_answer: 'no_answer',
    dial_busy: 'busy',
    user_declined: 'busy',
  };

  for (const [reason, status] of Object.entries(REASONS)) {
    test(`disconnection_reason ${reason} (${status})`, () => {
      const neverConnected = outbound({
        call_status: status === 'ended' ? 'ended' : status,
        disconnection_reason: reason as RetellCall['disconnection_reason'],
        start_timestamp: undefined,
        duration_ms: undefined,
        transcript_object: [],
      });
      if (status !== 'ended') {
        for (const event of ['call_ended', 'call_analyzed']) {
          const { reports, completionFallback } = mapRetellWebhook({ event, call: neverConnected });
          assert.deepEqual(stages(reports), ['failed']);
          const failed = reports[0] as FailedReport;
          assert.equal(failed.reason, FAILURE[reason] ?? 'failed');
          assert.equal(failed.disposition, reason);
          assert.equal(failed.id, 'retell:Jabr9TXYYJHfvl6Syypi88rdAHYHmcq6:failed');
          assert.equal(completionFallback, null);
        }
      }
      if (status !== 'not_connected') {
        const connected = outbound({
          call_status: status,
          disconnection_reason: reason as RetellCall['disconnection_reason'],
          call_analysis: analysis(),
        });
        const { reports } = mapRetellWebhook({ event: 'call_analyzed', call: connected });
        const completed = reports.at(-1) as CompletedReport;
        assert.equal(completed.stage, 'completed');
        assert.equal(completed.disposition, reason);
        assert.equal(completed.outcome, reason === 'voicemail_reached' ? 'voicemail' : 'answered');
      }
    });
  }

  test('other events and other call types map to nothing', () => {
    for (const event of ['transcript_updated', 'transfer_started', 'transfer_bridged', 'transfer_ended']) {
      assert.deepEqual(mapRetellWebhook({ event, call: outbound() }).reports, []);
    }
    assert.deepEqual(
      mapRetellWebhook({ event: 'call_ended', call: { ...outbound(), call_type: 'web_call' } as never })
        .reports,
      [],
    );
    // The number's inbound webhook carries no call object (https://docs.retellai.com/features/inbound-call-webhook).
    const inbound = {
      event: 'call_inbound',
      call_inbound: { agent_id: 'agent_12345', from_number: '+12137771234', to_number: '+12137771235' },
    };
    assert.deepEqual(mapRetellWebhook(inbound as never).reports, []);
  });

  test('deliveries that still carry the call under `data` are read too', () => {
    assert.deepEqual(stages(mapRetellWebhook({ event: 'call_started', data: outbound() }).reports), [
      'answered',
    ]);
  });
});
