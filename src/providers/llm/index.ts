import type { Config } from '../../config.ts';
import { BuiltinLlm } from './builtin.ts';
import { OpenAiLlm } from './openai.ts';
import type { LlmProvider } from './types.ts';

export type { GistSource, GistSummary, LlmProvider } from './types.ts';
export { LlmUnavailableError } from './types.ts';

export function createLlmProvider(
  config: Pick<Config, 'llmProvider' | 'llmBaseUrl' | 'llmApiKey' | 'llmModel' | 'llmTimeoutMs'>,
): LlmProvider {
  if (config.llmProvider === 'builtin') return new BuiltinLlm();
  return new OpenAiLlm({
    baseUrl: config.llmBaseUrl,
    apiKey: config.llmApiKey,
    model: config.llmModel,
    timeoutMs: config.llmTimeoutMs,
  });
}
