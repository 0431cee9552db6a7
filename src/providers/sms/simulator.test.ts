import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../../config.ts';
import {
  createSmsProvider,
  type OutboundSms,
  type SmsStatusSink,
  type SmsStatusUpdate,
  simulatedInbound,
} from './index.ts';
import { SimulatorSmsProvider } from './simulator.ts';
import { TwilioSmsProvider } from './twilio.ts';

/** Records what the provider reports; the messaging module's sink queues jobs instead. */
class RecordingSink implements SmsStatusSink {
  later: { update: SmsStatusUpdate; afterMs: number }[] = [];
  async reportLater(update: SmsStatusUpdate, afterMs: number) {
    this.later.push({ update, afterMs });
  }
}

function message(overrides: Partial<OutboundSms> = {}): OutboundSms {
  return {
    messageId: '01900000-0000-7000-8000-00000000000a',
    from: '+14155550100',
    to: '+14155550123',
    body: 'Hi',
    mediaUrls: [],
    statusCallbackUrl: null,
    ...overrides,
  };
}

describe('SMS simulator', () => {
  it('accepts a message as sent and schedules its delivery report after the delay', async () => {
    const sink = new RecordingSink();
    const provider = new SimulatorSmsProvider(sink, 250);
    const before = Date.now();
    const result = await provider.send(message());
    assert.equal(result.outcome, 'accepted');
    assert.equal(result.outcome === 'accepted' && result.status, 'sent');
    assert.match(result.providerMessageId!, /^SM[0-9a-f]{32}$/);
    assert.equal(sink.later.length, 1);
    const { update, afterMs } = sink.later[0];
    assert.equal(afterMs, 250);
    assert.deepEqual(
      { ...update, occurredAt: undefined },
      {
        messageId: '01900000-0000-7000-8000-00000000000a',
        providerMessageId: result.providerMessageId,
        status: 'delivered',
        errorCode: null,
        providerErrorCode: null,
        occurredAt: undefined,
      },
    );
    assert.ok(Date.parse(update.occurredAt) >= before + 250);
    // The update survives a job payload unchanged.
    assert.deepEqual(JSON.parse(JSON.stringify(update)), update);
  });

  it('fails a message to +15005550001 at once with invalid_number, reporting nothing', async () => {
    const sink = new RecordingSink();
    const result = await new SimulatorSmsProvider(sink, 200).send(message({ to: '+15005550001' }));
    assert.equal(result.outcome, 'failed');
    assert.equal(result.outcome === 'failed' && result.errorCode, 'invalid_number');
    assert.equal(sink.later.length, 0);
  });

  it('accepts a message to +15005550009, then reports it undelivered with carrier_rejected after the delay', async () => {
    const sink = new RecordingSink();
    const result = await new SimulatorSmsProvider(sink, 200).send(message({ to: '+15005550009' }));
    assert.equal(result.outcome, 'accepted');
    assert.equal(sink.later.length, 1);
    assert.equal(sink.later[0].afterMs, 200);
    assert.equal(sink.later[0].update.status, 'undelivered');
    assert.equal(sink.later[0].update.errorCode, 'carrier_rejected');
  });

  it('keeps the other Twilio magic numbers as immediate refusals', async () => {
    const provider = new SimulatorSmsProvider(new RecordingSink(), 200);
    const opted = await provider.send(message({ messageId: 'm-opt', to: '+15005550004' }));
    const unreachable = await provider.send(message({ messageId: 'm-unr', to: '+15005550002' }));
    assert.equal(opted.outcome === 'failed' && opted.errorCode, 'opted_out');
    assert.equal(unreachable.outcome === 'failed' && unreachable.errorCode, 'unreachable');
  });

  it('does nothing the second time a message id is sent, even concurrently', async () => {
    const sink = new RecordingSink();
    const provider = new SimulatorSmsProvider(sink, 200);
    const [first, second] = await Promise.all([provider.send(message()), provider.send(message())]);
    const third = await provider.send(message());
    assert.deepEqual(second, first);
    assert.deepEqual(third, first);
    assert.equal(sink.later.length, 1);
    // Another message is another send.
    await provider.send(message({ messageId: 'another' }));
    assert.equal(sink.later.length, 2);
  });

  it('gives another process the same provider id for the same message id, so the sink job key collapses repeats', async () => {
    const a = new RecordingSink();
    const b = new RecordingSink();
    const first = await new SimulatorSmsProvider(a, 200).send(message());
    const second = await new SimulatorSmsProvider(b, 200).send(message());
    assert.equal(first.providerMessageId, second.providerMessageId);
    assert.deepEqual({ ...a.later[0].update, occurredAt: null }, { ...b.later[0].update, occurredAt: null });
  });

  it('sends again after a send whose report could not be scheduled', async () => {
    let failures = 1;
    const sink = new RecordingSink();
    const flaky: SmsStatusSink = {
      reportLater: async (update, afterMs) => {
        if (failures-- > 0) throw new Error('database unavailable');
        await sink.reportLater(update, afterMs);
      },
    };
    const provider = new SimulatorSmsProvider(flaky, 200);
    await assert.rejects(provider.send(message()), /database unavailable/);
    const retried = await provider.send(message());
    assert.equal(retried.outcome, 'accepted');
    assert.equal(sink.later.length, 1);
  });

  it('has no carrier webhooks', () => {
    const provider = new SimulatorSmsProvider(new RecordingSink(), 200);
    assert.throws(() => provider.parseInbound(), /simulator/);
    assert.throws(() => provider.parseStatus(), /simulator/);
  });

  it('turns a simulator inbound hook body into the shape parseInbound gives', () => {
    const now = new Date('2026-03-01T10:00:00.000Z');
    const parsed = simulatedInbound({ from: '+14155550123', to: '+14155550100', body: 'STOP' }, now);
    assert.match(parsed.providerMessageId, /^SM[0-9a-f]{32}$/);
    assert.deepEqual(
      { ...parsed, providerMessageId: null },
      {
        providerMessageId: null,
        from: '+14155550123',
        to: '+14155550100',
        body: 'STOP',
        mediaUrls: [],
        receivedAt: '2026-03-01T10:00:00.000Z',
      },
    );
    const withMedia = simulatedInbound({
      from: '+14155550123',
      to: '+14155550100',
      body: '',
      media_urls: ['https://cdn.agency.test/x.png'],
    });
    assert.deepEqual(withMedia.mediaUrls, ['https://cdn.agency.test/x.png']);
    assert.notEqual(withMedia.providerMessageId, parsed.providerMessageId);
  });
});

describe('createSmsProvider and its configuration', () => {
  const sink = new RecordingSink();

  it('is the simulator by default, with a delay of 200 ms', async () => {
    const config = loadConfig({});
    assert.equal(config.smsProvider, 'simulator');
    assert.equal(config.smsSimulatorDelayMs, 200);
    const provider = await createSmsProvider(config, sink);
    assert.equal(provider.name, 'simulator');
    const before = sink.later.length;
    await provider.send(message({ messageId: 'factory-default' }));
    assert.equal(sink.later[before].afterMs, 200);
  });

  it('takes SMS_SIMULATOR_DELAY_MS', async () => {
    const provider = await createSmsProvider(loadConfig({ SMS_SIMULATOR_DELAY_MS: '5' }), sink);
    await provider.send(message({ messageId: 'factory-delay' }));
    assert.equal(sink.later.at(-1)!.afterMs, 5);
  });

  it('is Twilio with its credentials', async () => {
    const config = loadConfig({
      SMS_PROVIDER: 'twilio',
      TWILIO_ACCOUNT_SID: `AC${'0'.repeat(32)}`,
      TWILIO_AUTH_TOKEN: 'token',
      TWILIO_MESSAGING_SERVICE_SID: `MG${'f'.repeat(32)}`,
    });
    assert.equal(config.twilioMessagingServiceSid, `MG${'f'.repeat(32)}`);
    assert.ok((await createSmsProvider(config, sink)) instanceof TwilioSmsProvider);
  });

  it('refuses to start as Twilio without credentials, naming the missing ones', () => {
    assert.throws(
      () => loadConfig({ SMS_PROVIDER: 'twilio' }),
      (error: unknown) =>
        error instanceof ConfigError && /TWILIO_ACCOUNT_SID and TWILIO_AUTH_TOKEN/.test(error.message),
    );
    assert.throws(
      () => loadConfig({ SMS_PROVIDER: 'twilio', TWILIO_ACCOUNT_SID: `AC${'0'.repeat(32)}` }),
      (error: unknown) => error instanceof ConfigError && /needs TWILIO_AUTH_TOKEN$/.test(error.message),
    );
  });

  it('refuses an unknown provider, a malformed SID and a bad delay', () => {
    assert.throws(
      () => loadConfig({ SMS_PROVIDER: 'nexmo' }),
      /SMS_PROVIDER must be one of simulator, twilio/,
    );
    assert.throws(
      () => loadConfig({ TWILIO_ACCOUNT_SID: 'SK123' }),
      /TWILIO_ACCOUNT_SID must be a Twilio SID/,
    );
    assert.throws(() => loadConfig({ SMS_SIMULATOR_DELAY_MS: '-1' }), /SMS_SIMULATOR_DELAY_MS/);
  });
});
