import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A local server that speaks the Chat Completions protocol (`POST /v1/chat/completions`), as the
 * `openai` LLM provider calls it: it counts calls, can be slowed down, can fail, and can hold every
 * answer until `release()` (the caller is then mid-call). It answers what the prompt asks for: a gist,
 * a pre-call brief or enrichment proposals.
 */
export interface LlmStandIn {
  baseUrl: string;
  calls: number;
  /** Answer status: 200 writes a gist, anything else fails. */
  status: number;
  delayMs: number;
  /** True: answers wait for `release()`. */
  holding: boolean;
  /** Calls waiting for `release()`. */
  held(): number;
  /** Calls whose caller went away before the answer (its process died). */
  cut: number;
  /** Answers the held calls, and every call from now on. */
  release(): void;
  /** The messages of every call, in order. */
  requests: { role: string; content: string }[][];
  close(): Promise<void>;
}

function answerFor(messages: { role: string; content: string }[]): string {
  const system = messages[0]?.content ?? '';
  const record = messages[messages.length - 1].content;
  if (system.includes('pre-call briefs'))
    return JSON.stringify({
      brief: `Stand-in brief of a contact of ${record.length} characters.`,
      talking_points: ['From the stand-in'],
    });
  if (system.includes('empty fields')) {
    const wantsTitle = record.includes('"empty_fields":["title"') || record.includes('"title"]');
    return JSON.stringify({
      proposals: [
        { field: 'title', value: 'Head of Stand-ins', evidence: 'The stand-in says so.' },
        { field: 'not_a_field', value: 'x', evidence: 'dropped' },
      ].filter((proposal) => wantsTitle || proposal.field !== 'title'),
    });
  }
  return JSON.stringify({
    summary: `Stand-in summary of a record of ${record.length} characters.`,
    highlights: ['From the stand-in'],
  });
}

export async function startLlmStandIn(): Promise<LlmStandIn> {
  const state = { calls: 0, status: 200, delayMs: 0, holding: false, cut: 0 };
  const requests: { role: string; content: string }[][] = [];
  let waiting: (() => void)[] = [];
  const server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (chunk) => {
      raw += chunk;
    });
    req.on('end', () => {
      state.calls++;
      const { messages } = JSON.parse(raw) as { messages: { role: string; content: string }[] };
      requests.push(messages);
      res.on('close', () => {
        if (!res.writableEnded) state.cut++;
      });
      const answer = () => {
        if (res.destroyed) return;
        if (state.status !== 200) {
          res
            .writeHead(state.status, { 'content-type': 'application/json' })
            .end(
              JSON.stringify({ error: { message: 'stand-in failure', type: 'server_error', code: null } }),
            );
          return;
        }
        res.writeHead(200, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            id: 'chatcmpl-test',
            object: 'chat.completion',
            created: 1_700_000_000,
            model: 'stand-in-model',
            choices: [
              {
                index: 0,
                message: { role: 'assistant', content: answerFor(messages), refusal: null },
                logprobs: null,
                finish_reason: 'stop',
              },
            ],
            usage: { prompt_tokens: 10, completion_tokens: 20, total_tokens: 30 },
          }),
        );
      };
      if (state.holding) waiting.push(answer);
      else setTimeout(answer, state.delayMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(state, {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    held: () => waiting.length,
    release: () => {
      state.holding = false;
      for (const answer of waiting) answer();
      waiting = [];
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  }) as LlmStandIn;
}
