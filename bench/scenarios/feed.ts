import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { holders, LARGE, SMALL, seedFeed } from '../feed-seed.ts';
import type { BenchContext, Measurement, Section, Target } from '../lib.ts';
import { latencyTarget, ratioTarget } from '../lib.ts';

const run = promisify(execFile);

/**
 * Issue: public wallet snapshot feed. Builds a snapshot of 100,000 holders (150,000 wallets, 10,000
 * tokens) from the database in a child process (time and peak RSS), and serves the cached JSON against
 * the bare-route ceiling.
 */
export default async function feed(ctx: BenchContext): Promise<Section> {
  const ceiling = await ctx.ceiling();
  const url = `${ctx.feedUrl}/snapshot.json`;

  // Serving: a small feed, so the figure is the cache path's overhead and not the network's bandwidth.
  await seedFeed(ctx.pool, SMALL);
  const small = await waitForEntries(url, holders(SMALL));
  const served = await ctx.measure(`GET /snapshot.json (cached, ${small.bytes} bytes)`, { url });

  // Building: the large population, measured in its own process.
  await seedFeed(ctx.pool, LARGE);
  const child = await run(process.execPath, [path.join(import.meta.dirname, '..', 'feed-build.js')], {
    env: { ...process.env, DATABASE_URL: ctx.databaseUrl },
    maxBuffer: 1 << 20,
  });
  const build = JSON.parse(child.stdout);
  const median = [...build.buildsMs].sort((a: number, b: number) => a - b)[1];

  // The server's cache turns over to the large snapshot on its next rebuild (SNAPSHOT_CACHE_MS, 30 s).
  const large = await waitForEntries(url, holders(LARGE), 120_000);
  const notModified = await ctx.measure('GET /snapshot.json, 100k holders, If-None-Match (304)', {
    url,
    headers: { 'if-none-match': large.etag },
  });
  const full = await ctx.measure('GET /snapshot.json, 100k holders, gzip (10 connections)', {
    url,
    headers: { 'accept-encoding': 'gzip' },
    connections: 10,
    durationSeconds: 5,
  });

  const memoryTarget: Target = {
    name: 'snapshot build, peak RSS of a fresh process',
    pass: build.firstBuildPeakMb < 300,
    detail: `${build.firstBuildPeakMb} MB for one build (target < 300 MB; ${build.rssBeforeMb} MB before it); ${build.peakRssMb} MB over three back-to-back builds, garbage not yet collected`,
  };
  return {
    title: 'Wallet feed: snapshot build and cached serving',
    measurements: [ceiling, served, notModified, full],
    targets: [
      ratioTarget('cached GET /snapshot.json ÷ bare route', served, ceiling, 0.5),
      latencyTarget('snapshot build, 100k holders / 150k wallets / 10k tokens (median of 3)', median, 2000),
      memoryTarget,
    ],
    notes: [
      `Builds: ${build.buildsMs.join(', ')} ms wall, ${build.cpuMs.join(', ')} ms CPU (read + reduce + JSON + CSV; the database's own work is not in the CPU figure); gzip of the JSON afterwards ${build.gzipMs} ms.`,
      `Large snapshot: ${build.counts.entries} entries, ${build.counts.wallets} wallets; JSON ${mb(build.jsonBytes)}, CSV ${mb(build.csvBytes)}, JSON gzipped ${mb(build.gzipBytes)}.`,
      `Full large-snapshot transfers: ${rate(full)}.`,
    ],
  };
}

async function waitForEntries(
  url: string,
  entries: number,
  timeoutMs = 30_000,
): Promise<{ etag: string; bytes: number }> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const response = await fetch(url);
    if (response.ok) {
      const text = await response.text();
      if ((JSON.parse(text) as { counts: { entries: number } }).counts.entries === entries) {
        return { etag: response.headers.get('etag') ?? '', bytes: Buffer.byteLength(text) };
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
  throw new Error(`the feed did not reach ${entries} entries`);
}

const mb = (bytes: number) => `${(bytes / 1048576).toFixed(1)} MB`;
const rate = (m: Measurement) => `${m.requestsPerSecond} req/s, p99 ${m.p99Ms} ms`;
