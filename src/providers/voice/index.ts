import type { Config } from '../../config.ts';
import type { Db } from '../../platform/db/pool.ts';
import { createSimulatorProvider } from './simulator/provider.ts';
import type { VoiceProgressSink, VoiceProvider } from './types.ts';

export { RETELL_WEBHOOK_PATH } from './retell/webhook-path.ts';
export { getNumberScript, putNumberScript } from './simulator/script-store.ts';
export * from './types.ts';

/** The voice provider `VOICE_PROVIDER` names, reporting every call's progress to `sink`. */
export async function createVoiceProvider(
  config: Pick<Config, 'voiceProvider' | 'voiceSimulatorCallMs' | 'retell' | 'publicBaseUrl'>,
  db: Db,
  sink: VoiceProgressSink,
): Promise<VoiceProvider> {
  if (config.voiceProvider === 'retell') {
    const { createRetellProvider } = await import('./retell/provider.ts');
    return createRetellProvider({ ...config.retell!, publicBaseUrl: config.publicBaseUrl }, db, sink);
  }
  return createSimulatorProvider({ callMs: config.voiceSimulatorCallMs }, db, sink);
}
