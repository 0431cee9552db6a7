import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A local server that speaks the Chat Completions protocol (`POST /v1/chat/completions`), as the
 * `openai` LLM provider calls it: it counts calls, can be slowed down and can fail.
 */
export interface LlmStandIn {
  baseUrl: string;
  calls: number;
  /** Answer status: 200 writes a gist, anything else fails. */
  status: number;
  delayMs: number;
  close(): Promise<void>;
}

export async function startLlmStandIn(): Promise<LlmStandIn> {
  const state = { calls: 0, status: 200, delayMs: 0 };
  const server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (chunk) => {
      raw += chunk;
    });
    req.on('end', () => {
      state.calls++;
      const { messages } = JSON.parse(raw) as { messages: { content: string }[] };
      setTimeout(() => {
        if (state.status !== 200) {
          res
            .writeHead(state.status, { 'content-type': 'application/json' })
            .end(
              JSON.stringify({ error: { message: 'stand-in failure', type: 'server_error', code: null } }),
            );
          return;
        }
        const record = messages[messages.length - 1].content;
        const content = JSON.stringify({
          summary: `Stand-in summary of a record of ${record.length} characters.`,
          highlights: ['From the stand-in'],
        });
        res.writeHead(200, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            id: 'chatcmpl-test',
            object: 'chat.completion',
            created: 1_700_000_000,
            model: 'stand-in-model',
            choices: [
              {
                index: 0,
                message: { role: 'assistant', content, refusal: null },
                logprobs: null,
                finish_reason: 'stop',
              },
            ],
            usage: { prompt_tokens: 10, completion_tokens: 20, total_tokens: 30 },
          }),
        );
      }, state.delayMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(state, {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  }) as LlmStandIn;
}
