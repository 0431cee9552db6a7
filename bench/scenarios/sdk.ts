import { performance } from 'node:perf_hooks';
import { AgencyPlatform } from '../../sdk/src/index.ts';
import type { BenchContext, Measurement, Section } from '../lib.ts';

const CONCURRENCY = 10;
const CALLS_PER_ROUND = 3000;
const ROUNDS = 6;

/** Runs `call` CALLS_PER_ROUND times over CONCURRENCY loops; the latency of each call, in ms. */
async function round(call: () => Promise<unknown>): Promise<{ ms: number; latencies: number[] }> {
  const latencies: number[] = [];
  let left = CALLS_PER_ROUND;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (left-- > 0) {
        const at = performance.now();
        await call();
        latencies.push(performance.now() - at);
      }
    }),
  );
  return { ms: performance.now() - started, latencies };
}

function summary(name: string, rounds: { ms: number; latencies: number[] }[]): Measurement {
  const latencies = rounds.flatMap((r) => r.latencies).sort((a, b) => a - b);
  const at = (q: number) => Math.round((latencies[Math.floor(q * (latencies.length - 1))] ?? 0) * 100) / 100;
  const median = rounds.map((r) => r.ms).sort((a, b) => a - b)[Math.floor(rounds.length / 2)] ?? 1;
  return {
    name,
    requestsPerSecond: Math.round((CALLS_PER_ROUND / median) * 1000),
    p50Ms: at(0.5),
    p99Ms: at(0.99),
    errors: 0,
    non2xx: 0,
  };
}

/**
 * The SDK's own CPU per call, in µs over the same call made by hand, both against a `fetch` that answers
 * at once from memory: what the SDK adds whatever the network and the server cost.
 */
async function ownCostMicros(body: string): Promise<number> {
  const answer: typeof fetch = async () =>
    new Response(body, { headers: { 'content-type': 'application/json' } });
  const client = new AgencyPlatform({ apiKey: 'key', baseUrl: 'http://127.0.0.1:9/v1', fetch: answer });
  const byHand = async () => {
    const response = await answer('http://127.0.0.1:9/v1/crm/contacts/abc', {
      headers: { authorization: 'Bearer key' },
    });
    if (!response.ok) throw new Error(String(response.status));
    return ((await response.json()) as { contact: unknown }).contact;
  };
  const perCall = async (call: () => Promise<unknown>) => {
    const started = performance.now();
    for (let i = 0; i < 50_000; i++) await call();
    return ((performance.now() - started) * 1000) / 50_000;
  };
  const differences: number[] = [];
  for (let i = 0; i < 5; i++) {
    const hand = await perCall(byHand);
    differences.push((await perCall(() => client.crm.contacts.retrieve('abc'))) - hand);
  }
  return differences.sort((a, b) => a - b)[2] ?? 0;
}

/**
 * Issue 23: a call through the SDK against the same call made with `fetch` by hand (headers, status check,
 * JSON body, the resource out of its envelope). Rounds alternate, so both see the same machine.
 */
export default async function sdk(ctx: BenchContext): Promise<Section> {
  const { agencyKey } = await ctx.tenant();
  const client = new AgencyPlatform({ apiKey: agencyKey, baseUrl: `${ctx.apiUrl}/v1` });
  const { contact } = await client.crm.contacts.create({ email: 'bench-sdk@example.com', first_name: 'Ana' });
  const url = `${ctx.apiUrl}/v1/crm/contacts/${contact.id}`;
  const headers = { authorization: `Bearer ${agencyKey}`, accept: 'application/json' };

  const byHand = async () => {
    const response = await fetch(url, { headers });
    if (!response.ok) throw new Error(`GET ${url}: ${response.status}`);
    return ((await response.json()) as { contact: unknown }).contact;
  };
  const bySdk = () => client.crm.contacts.retrieve(contact.id);

  await round(byHand);
  await round(bySdk);
  const hand: { ms: number; latencies: number[] }[] = [];
  const viaSdk: { ms: number; latencies: number[] }[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    hand.push(await round(byHand));
    viaSdk.push(await round(bySdk));
  }
  const handMeasure = summary('GET /v1/crm/contacts/{id} with fetch by hand', hand);
  const sdkMeasure = summary('client.crm.contacts.retrieve(id)', viaSdk);
  const overhead = handMeasure.requestsPerSecond / Math.max(1, sdkMeasure.requestsPerSecond) - 1;
  const ownMicros = await ownCostMicros(JSON.stringify({ contact: await byHand() }));
  const ownShare = ownMicros / 1000 / Math.max(0.001, handMeasure.p50Ms);
  return {
    title: 'SDK: call overhead over fetch by hand',
    measurements: [handMeasure, sdkMeasure],
    targets: [
      {
        name: 'SDK time per call over fetch by hand',
        pass: overhead < 0.05,
        detail: `${(overhead * 100).toFixed(1)} % (target < 5 %)`,
      },
      {
        name: "SDK's own CPU per call ÷ the call's p50",
        pass: ownShare < 0.05,
        detail: `${ownMicros.toFixed(1)} µs / ${handMeasure.p50Ms} ms = ${(ownShare * 100).toFixed(1)} % (target < 5 %)`,
      },
    ],
    notes: [
      `${CONCURRENCY} concurrent loops, ${ROUNDS} alternating rounds of ${CALLS_PER_ROUND} calls each; req/s from the median round.`,
      "The SDK's own CPU is measured apart, both ways against a fetch that answers from memory (median of 5 × 50,000 calls): it does not depend on the load of the machine, the end-to-end ratio does.",
    ],
  };
}
