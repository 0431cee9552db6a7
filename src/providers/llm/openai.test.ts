import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { createLlmProvider } from './index.ts';
import { OpenAiLlm } from './openai.ts';
import { type BriefSource, type EnrichmentSource, type GistSource, LlmUnavailableError } from './types.ts';

const source: GistSource = {
  subject_type: 'contact',
  contact: {
    id: 'p1',
    full_name: 'Ada Lovelace',
    first_name: 'Ada',
    last_name: 'Lovelace',
    title: null,
    lifecycle_stage: 'lead',
    tags: [],
    phones: [],
    emails: [{ email: 'ada@example.com', is_primary: true, status: 'verified' }],
  },
  company: null,
  open_deals: [],
  recent_activities: [],
  open_tasks: [],
};

interface Received {
  path: string;
  authorization: string | undefined;
  body: { model: string; messages: { role: string; content: string }[] };
}

/** How the stand-in answers the next request: a status and a message content, or never. */
type Behaviour = { status: number; content?: string; error?: string } | 'hang';

/** A stand-in that speaks the Chat Completions protocol: `POST /v1/chat/completions`, the real response shape. */
function chatCompletionsServer() {
  const received: Received[] = [];
  let behaviour: Behaviour = { status: 200, content: '{}' };
  const server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (chunk) => {
      raw += chunk;
    });
    req.on('end', () => {
      received.push({ path: req.url ?? '', authorization: req.headers.authorization, body: JSON.parse(raw) });
      if (behaviour === 'hang') return;
      if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
        res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"message":"no route"}}');
        return;
      }
      if (behaviour.status !== 200) {
        res.writeHead(behaviour.status, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            error: { message: behaviour.error ?? 'failure', type: 'invalid_request_error', code: null },
          }),
        );
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          id: 'chatcmpl-test',
          object: 'chat.completion',
          created: 1_700_000_000,
          model: 'stand-in-model-2024',
          choices: [
            {
              index: 0,
              message: { role: 'assistant', content: behaviour.content ?? null, refusal: null },
              logprobs: null,
              finish_reason: 'stop',
            },
          ],
          usage: { prompt_tokens: 10, completion_tokens: 20, total_tokens: 30 },
        }),
      );
    });
  });
  return {
    server,
    received,
    answer(next: Behaviour) {
      behaviour = next;
    },
  };
}

describe('openai LLM provider against a Chat Completions stand-in', () => {
  const standIn = chatCompletionsServer();
  let baseUrl: string;

  before(async () => {
    await new Promise<void>((resolve) => standIn.server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(standIn.server.address() as AddressInfo).port}/v1`;
  });
  after(async () => {
    standIn.server.closeAllConnections();
    await new Promise((resolve) => standIn.server.close(resolve));
  });

  const provider = (config: Partial<Parameters<typeof createLlmProvider>[0]> = {}) =>
    createLlmProvider({
      llmProvider: 'openai',
      llmBaseUrl: baseUrl,
      llmApiKey: 'sk-test-key',
      llmModel: 'gpt-test',
      llmTimeoutMs: 5000,
      ...config,
    });

  const failure = async (promise: Promise<unknown>) => {
    const error = await promise.then(
      () => null,
      (thrown: unknown) => thrown,
    );
    assert.ok(error instanceof LlmUnavailableError, `expected LlmUnavailableError, got ${error}`);
    return error;
  };

  test('sends the model, the key and the record, and reads a fenced JSON answer', async () => {
    standIn.answer({
      status: 200,
      content:
        'Here is the gist:\n```json\n{"summary": "Ada Lovelace is a lead.", "highlights": ["Verified email", 42, "  Lead  "]}\n```',
    });
    const gist = await (await provider()).summarize(source);
    assert.deepEqual(gist, {
      summary: 'Ada Lovelace is a lead.',
      highlights: ['Verified email', 'Lead'],
      model: 'stand-in-model-2024',
    });
    const request = standIn.received.at(-1) as Received;
    assert.equal(request.path, '/v1/chat/completions');
    assert.equal(request.authorization, 'Bearer sk-test-key');
    assert.equal(request.body.model, 'gpt-test');
    assert.deepEqual(
      request.body.messages.map((message) => message.role),
      ['system', 'user'],
    );
    assert.match(request.body.messages[1].content, /"full_name":"Ada Lovelace"/);
  });

  test('sends no Authorization header when no key is configured (Ollama, LM Studio)', async () => {
    standIn.answer({ status: 200, content: '{"summary": "A lead."}' });
    const gist = await (await provider({ llmApiKey: null })).summarize(source);
    assert.deepEqual(gist.highlights, []);
    assert.equal(standIn.received.at(-1)?.authorization, undefined);
  });

  test('malformed content, a missing summary or no content at all is LlmUnavailableError', async () => {
    for (const content of [
      'Ada is a lead.',
      '{"summary": ',
      '{"highlights": ["x"]}',
      '{"summary": "   "}',
      '',
    ]) {
      standIn.answer({ status: 200, content });
      const error = await failure((await provider()).summarize(source));
      assert.match(error.message, /usable JSON summary/, content);
    }
  });

  test('a brief: the brief prompt with the purpose, and the brief and talking points read back', async () => {
    standIn.answer({
      status: 200,
      content:
        '```json\n{"brief": "Ada is a verified lead.", "talking_points": ["Ask about Q3", 7, ""]}\n```',
    });
    const brief = await (await provider()).brief({ ...(source as BriefSource), purpose: 'Renewal' });
    assert.deepEqual(brief, {
      brief: 'Ada is a verified lead.',
      talking_points: ['Ask about Q3'],
      model: 'stand-in-model-2024',
    });
    const request = standIn.received.at(-1) as Received;
    assert.match(request.body.messages[0].content, /pre-call briefs/);
    assert.match(request.body.messages[1].content, /"purpose":"Renewal"/);
    for (const content of ['{"talking_points": []}', 'no JSON']) {
      standIn.answer({ status: 200, content });
      assert.match(
        (await failure((await provider()).brief({ ...(source as BriefSource), purpose: null }))).message,
        /usable JSON brief/,
      );
    }
  });

  test('enrichment: only proposals for empty fields, of the right type, with evidence, are kept', async () => {
    standIn.answer({
      status: 200,
      content: JSON.stringify({
        proposals: [
          { field: 'title', value: 'CTO', evidence: 'Signed “Ada, CTO” on 3 May.' },
          { field: 'title', value: 'CEO', evidence: 'a second title is dropped' },
          { field: 'lifecycle_stage', value: 'customer', evidence: 'not an empty field: dropped' },
          { field: 'tags', value: ['Fintech', 3], evidence: 'Works on payments.' },
          { field: 'industry', value: 'Banking', evidence: 'not a contact field: dropped' },
          { field: 'title', value: 'x' },
        ],
      }),
    });
    const enrichment: EnrichmentSource = {
      subject_type: 'contact',
      contact: source.subject_type === 'contact' ? source.contact : (undefined as never),
      company: null,
      open_deals: [],
      won_deals: 0,
      recent_activities: [],
      empty_fields: ['title', 'tags'],
    };
    const { proposals, model } = await (await provider()).proposeEnrichment(enrichment);
    assert.equal(model, 'stand-in-model-2024');
    assert.deepEqual(proposals, [
      { field: 'title', value: 'CTO', evidence: 'Signed “Ada, CTO” on 3 May.' },
      { field: 'tags', value: ['fintech'], evidence: 'Works on payments.' },
    ]);
    assert.match(
      (standIn.received.at(-1) as Received).body.messages[1].content,
      /"empty_fields":\["title","tags"\]/,
    );
    standIn.answer({ status: 200, content: '{"proposal": []}' });
    assert.match(
      (await failure((await provider()).proposeEnrichment(enrichment))).message,
      /usable JSON list of proposals/,
    );
  });

  test('a 500 is LlmUnavailableError after one attempt, without the server text', async () => {
    standIn.answer({ status: 500, error: 'upstream exploded' });
    const before = standIn.received.length;
    const error = await failure((await provider()).summarize(source));
    assert.equal(error.message, 'The model endpoint answered HTTP 500: the model server failed.');
    assert.equal(standIn.received.length - before, 1, 'no retry');
  });

  test('a 401 says authentication failed and does not echo the endpoint message', async () => {
    standIn.answer({ status: 401, error: 'Incorrect API key provided: sk-test-key' });
    const error = await failure((await provider()).summarize(source));
    assert.equal(
      error.message,
      'The model endpoint answered HTTP 401: authentication failed; check LLM_API_KEY.',
    );
    assert.doesNotMatch(error.message, /sk-test/);
  });

  test('a server that never answers is LlmUnavailableError once LLM_TIMEOUT_MS has passed', async () => {
    standIn.answer('hang');
    const started = Date.now();
    const error = await failure((await provider({ llmTimeoutMs: 300 })).summarize(source));
    assert.equal(error.message, 'The model did not answer within 300 ms.');
    assert.ok(Date.now() - started < 10_000);
  });

  test('an endpoint that cannot be reached is LlmUnavailableError', async () => {
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const unreachable = new OpenAiLlm({
      baseUrl: `http://127.0.0.1:${port}/v1`,
      apiKey: null,
      model: 'm',
      timeoutMs: 2000,
    });
    const error = await failure(unreachable.summarize(source));
    assert.equal(error.message, 'The model endpoint could not be reached.');
  });
});
