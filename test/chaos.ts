/**
 * `npm run chaos`: the longer versions of the process-fault tests (worker kill -9, PostgreSQL
 * restart, several processes on one database), run CHAOS_RUNS times in a row (default 3), each with
 * more iterations and more load than in CI. Stops at the first failing run and says which.
 *
 *   CHAOS_RUNS=10 CHAOS_ITERATIONS=5 CHAOS_EVENTS=300 npm run chaos
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
const runs = Number(process.env.CHAOS_RUNS ?? 3);
const files = process.argv.slice(2).length
  ? process.argv.slice(2)
  : [
      'test/reliability/worker-kill.test.ts',
      'test/reliability/sdr-dialer-kill.test.ts',
      'test/reliability/kb-ingestion-kill.test.ts',
      'test/sequences/crash.test.ts',
      'test/reliability/postgres-restart.test.ts',
      'test/reliability/multi-process.test.ts',
      'test/reliability/outbox-poison.test.ts',
    ];
const env = {
  ...process.env,
  CHAOS_ITERATIONS: process.env.CHAOS_ITERATIONS ?? '3',
  CHAOS_EVENTS: process.env.CHAOS_EVENTS ?? '150',
  CHAOS_CONTACTS: process.env.CHAOS_CONTACTS ?? '200',
  CHAOS_OUTAGE_MS: process.env.CHAOS_OUTAGE_MS ?? '15000',
  CHAOS_CAMPAIGNS: process.env.CHAOS_CAMPAIGNS ?? '60',
};
for (let run = 1; run <= runs; run++) {
  process.stdout.write(`\n== chaos run ${run}/${runs}: ${files.join(' ')}\n`);
  const result = spawnSync(process.execPath, ['--import', 'tsx', 'test/run.ts', ...files], {
    cwd: root,
    env,
    stdio: 'inherit',
  });
  if (result.status !== 0) {
    process.stderr.write(`chaos run ${run}/${runs} failed\n`);
    process.exit(result.status ?? 1);
  }
}
process.stdout.write(`\nchaos: ${runs} runs passed\n`);
