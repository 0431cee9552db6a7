import type { BenchContext, Section } from '../lib.ts';
import { latencyTarget, ratioTarget } from '../lib.ts';

/**
 * Issue: public docs API. Search for a common word over the full docs set, against the bare-route
 * ceiling. bench/run.ts lifts the per-IP limit (DOCS_RATE_LIMIT_PER_MINUTE), or every request past
 * the 120th would be a 429.
 */
export default async function docs(ctx: BenchContext): Promise<Section> {
  const ceiling = await ctx.ceiling();
  const url = `${ctx.apiUrl}/v1/docs/search?q=request`;
  const probe = await fetch(url);
  const { total } = (await probe.json()) as { total: number };
  const search = await ctx.measure('GET /v1/docs/search?q=request', { url });
  let miss = 0;
  const uncached = await ctx.measure('GET /v1/docs/search, a new query each time (uncached)', {
    url,
    requests: [
      {
        method: 'GET',
        setupRequest: (request) => ({ ...request, path: `/v1/docs/search?q=request%20${miss++}` }),
      },
    ],
  });
  const page = await ctx.measure('GET /v1/docs/pages/getting-started?product=platform', {
    url: `${ctx.apiUrl}/v1/docs/pages/getting-started?product=platform`,
  });
  return {
    title: 'Docs API: search over the full docs set',
    measurements: [ceiling, search, uncached, page],
    targets: [
      ratioTarget('GET /v1/docs/search ÷ bare route', search, ceiling, 0.5),
      latencyTarget('GET /v1/docs/search p99', search.p99Ms, 25),
    ],
    notes: [
      `"request" matches ${total} pages. Answers are cached per query in each process (the docs do not change while it runs), so this measures the cached path; a first search scans every page once.`,
    ],
  };
}
