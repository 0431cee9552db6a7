/**
 * Run in a child process by the feed scenario, so its resident memory is the build's own: builds the
 * snapshot from the database a few times and prints the timings and the peak RSS as JSON.
 */
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import { buildSnapshot } from '../src/modules/wallet-feed/snapshot-service.ts';
import { openDatabase } from '../src/platform/db/pool.ts';

const database = openDatabase(process.env.DATABASE_URL!, { max: 4 });
const rssBefore = process.memoryUsage().rss;
const buildsMs: number[] = [];
const cpuMs: number[] = [];
let firstBuildPeakMb = 0;
let result: Awaited<ReturnType<typeof buildSnapshot>> | null = null;
for (let i = 0; i < 3; i++) {
  const started = performance.now();
  const cpu = process.cpuUsage();
  result = await buildSnapshot(database.db, new Date());
  buildsMs.push(Math.round(performance.now() - started));
  const used = process.cpuUsage(cpu);
  cpuMs.push(Math.round((used.user + used.system) / 1000));
  if (i === 0) firstBuildPeakMb = Math.round(process.resourceUsage().maxRSS / 1024);
  if (result.status !== 'built') throw new Error(`build ${result.status}`);
}
const snapshot = (result as Extract<typeof result, { status: 'built' }>).snapshot;
const gzipStarted = performance.now();
const gzipped = await promisify(gzip)(snapshot.formats.json.body);
const gzipMs = Math.round(performance.now() - gzipStarted);
await database.close();
process.stdout.write(
  `${JSON.stringify({
    buildsMs,
    cpuMs,
    gzipMs,
    counts: snapshot.counts,
    jsonBytes: snapshot.formats.json.body.length,
    csvBytes: snapshot.formats.csv.body.length,
    gzipBytes: gzipped.length,
    rssBeforeMb: Math.round(rssBefore / 1048576),
    firstBuildPeakMb,
    peakRssMb: Math.round(process.resourceUsage().maxRSS / 1024),
  })}\n`,
);
