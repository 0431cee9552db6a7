import type { Config } from '../../config.ts';
import type { Executor } from '../../platform/db/pool.ts';
import { BuiltinLlm } from './builtin.ts';
import { simulatedFailures } from './simulated-failures.ts';
import type { LlmProvider } from './types.ts';

export { setSimulatedFailures } from './simulated-failures.ts';
export type {
  BriefSource,
  EnrichmentProposal,
  EnrichmentSource,
  GistSource,
  GistSummary,
  LlmProvider,
  PrecallBrief,
} from './types.ts';
export { LlmUnavailableError } from './types.ts';

export async function createLlmProvider(
  config: Pick<Config, 'llmProvider' | 'llmBaseUrl' | 'llmApiKey' | 'llmModel' | 'llmTimeoutMs'>,
  /** Where the builtin model's simulated failures are kept (`POST /admin/v1/simulator/llm/failures`). */
  db: Executor | null = null,
): Promise<LlmProvider> {
  if (config.llmProvider === 'builtin') return new BuiltinLlm(db ? simulatedFailures(db) : null);
  const { OpenAiLlm } = await import('./openai.ts');
  return new OpenAiLlm({
    baseUrl: config.llmBaseUrl,
    apiKey: config.llmApiKey,
    model: config.llmModel,
    timeoutMs: config.llmTimeoutMs,
  });
}
