import OpenAI from 'openai';
import {
  briefMessages,
  enrichmentMessages,
  gistMessages,
  readBrief,
  readGist,
  readProposals,
} from './prompt.ts';
import {
  type BriefSource,
  type EnrichmentProposals,
  type EnrichmentSource,
  type GistSource,
  type GistSummary,
  type LlmProvider,
  LlmUnavailableError,
  type PrecallBrief,
} from './types.ts';

export interface OpenAiLlmOptions {
  /** Any OpenAI-compatible base, e.g. `http://127.0.0.1:11434/v1` for Ollama; null for OpenAI. */
  baseUrl: string | null;
  /** Null for local servers that take none: no Authorization header is sent. */
  apiKey: string | null;
  model: string;
  timeoutMs: number;
}

/**
 * Gists from an OpenAI-compatible Chat Completions endpoint (OpenAI, Azure OpenAI's v1 API, Ollama,
 * vLLM, LM Studio). Only `model` and `messages` are sent, so servers that reject `response_format`,
 * `temperature` or token limits still answer; the JSON is asked for in the prompt and read defensively.
 * No retry: the caller's request is waiting, and a failure costs the user nothing.
 */
export class OpenAiLlm implements LlmProvider {
  readonly name = 'openai';
  private readonly client: OpenAI;

  constructor(private readonly options: OpenAiLlmOptions) {
    // Every option is given, so the SDK reads none of its OPENAI_* environment variables.
    this.client = new OpenAI({
      baseURL: options.baseUrl ?? 'https://api.openai.com/v1',
      apiKey: options.apiKey ?? 'unused',
      organization: null,
      project: null,
      webhookSecret: null,
      defaultHeaders: options.apiKey ? undefined : { Authorization: null },
      timeout: options.timeoutMs,
      maxRetries: 0,
      logLevel: 'off',
    });
  }

  async summarize(source: GistSource): Promise<GistSummary> {
    const { content, model } = await this.complete(gistMessages(source));
    const gist = readGist(content);
    if (!gist) throw unusable('summary', content);
    return { ...gist, model };
  }

  async brief(source: BriefSource): Promise<PrecallBrief> {
    const { content, model } = await this.complete(briefMessages(source));
    const brief = readBrief(content);
    if (!brief) throw unusable('brief', content);
    return { ...brief, model };
  }

  async proposeEnrichment(source: EnrichmentSource): Promise<EnrichmentProposals> {
    const { content, model } = await this.complete(enrichmentMessages(source));
    const proposals = readProposals(content, source.empty_fields);
    if (!proposals) throw unusable('list of proposals', content);
    return { proposals, model };
  }

  private async complete(
    messages: OpenAI.Chat.Completions.ChatCompletionMessageParam[],
  ): Promise<{ content: string | null | undefined; model: string }> {
    let completion: OpenAI.Chat.Completions.ChatCompletion;
    try {
      completion = await this.client.chat.completions.create(
        { model: this.options.model, messages },
        { signal: AbortSignal.timeout(this.options.timeoutMs) },
      );
    } catch (error) {
      throw new LlmUnavailableError(describeFailure(error, this.options.timeoutMs), { cause: error });
    }
    return {
      content: completion.choices?.[0]?.message?.content,
      model: completion.model || this.options.model,
    };
  }
}

function unusable(what: string, content: unknown): LlmUnavailableError {
  return new LlmUnavailableError(`The model answered without a usable JSON ${what}.`, { cause: content });
}

/** A message safe to show: the status and what it usually means, never the endpoint's own text (it may echo a key). */
function describeFailure(error: unknown, timeoutMs: number): string {
  if (
    error instanceof OpenAI.APIConnectionTimeoutError ||
    error instanceof OpenAI.APIUserAbortError ||
    (error as { name?: string }).name === 'TimeoutError'
  )
    return `The model did not answer within ${timeoutMs} ms.`;
  if (error instanceof OpenAI.APIConnectionError) return 'The model endpoint could not be reached.';
  if (error instanceof OpenAI.APIError && error.status) {
    const meaning =
      error.status === 401 || error.status === 403
        ? 'authentication failed; check LLM_API_KEY'
        : error.status === 404
          ? 'not found; check LLM_BASE_URL and LLM_MODEL'
          : error.status === 429
            ? 'rate limited or out of quota'
            : error.status >= 500
              ? 'the model server failed'
              : 'the request was refused';
    return `The model endpoint answered HTTP ${error.status}: ${meaning}.`;
  }
  return 'The model call failed.';
}
