import type { BenchContext, Section } from '../lib.ts';
import { latencyTarget, ratioTarget } from '../lib.ts';

/** Issue: platform foundation. GET /v1/me with a valid key against the bare-route ceiling. */
export default async function foundation(ctx: BenchContext): Promise<Section> {
  const ceiling = await ctx.ceiling();
  const { headers } = await ctx.tenant();
  const me = await ctx.measure('GET /v1/me', { url: `${ctx.apiUrl}/v1/me`, headers });
  return {
    title: 'Foundation: authenticated request overhead',
    measurements: [ceiling, me],
    targets: [
      ratioTarget('GET /v1/me ÷ bare route', me, ceiling, 0.8),
      latencyTarget('GET /v1/me p99', me.p99Ms, 25),
    ],
  };
}
