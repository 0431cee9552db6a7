import type twilio from 'twilio';
import type { Config } from '../../config.ts';
import { SimulatorSmsProvider } from './simulator.ts';
import type { SmsProvider, SmsStatusSink } from './types.ts';

export { countSegments, type SegmentCount, type SmsEncoding } from './segments.ts';
export { SIMULATOR_NUMBERS, type SimulatedInboundInput, simulatedInbound } from './simulator.ts';
export * from './types.ts';

/** The SMS provider `SMS_PROVIDER` names. `twilioHttpClient` points the Twilio SDK elsewhere (tests, proxies). */
export async function createSmsProvider(
  config: Pick<
    Config,
    | 'smsProvider'
    | 'smsSimulatorDelayMs'
    | 'twilioAccountSid'
    | 'twilioAuthToken'
    | 'twilioMessagingServiceSid'
  >,
  sink: SmsStatusSink,
  options: { twilioHttpClient?: twilio.RequestClient } = {},
): Promise<SmsProvider> {
  if (config.smsProvider === 'simulator') return new SimulatorSmsProvider(sink, config.smsSimulatorDelayMs);
  // loadConfig refuses SMS_PROVIDER=twilio without both credentials.
  const { TwilioSmsProvider } = await import('./twilio.ts');
  return new TwilioSmsProvider(
    {
      accountSid: config.twilioAccountSid!,
      authToken: config.twilioAuthToken!,
      messagingServiceSid: config.twilioMessagingServiceSid,
    },
    { httpClient: options.twilioHttpClient },
  );
}
