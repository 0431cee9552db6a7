import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { describe, test } from 'node:test';
import { cpuTimeUs, treeCpuTimeUs } from '../bench/lib.ts';

// The bench's CPU columns: PostgreSQL's is the postmaster's tree, where a backend that has exited is
// counted in the postmaster's reaped-children times.
// Spins until the process has used 300 ms of CPU, however busy the machine.
const SPIN = 'while (process.cpuUsage().user + process.cpuUsage().system < 300_000);';

describe('bench: CPU time of a process and its children', { skip: process.platform !== 'linux' }, () => {
  test('a child that burned CPU and was reaped counts for its parent’s tree, not for the parent alone', () => {
    const [ownBefore, treeBefore] = [cpuTimeUs(process.pid)!, treeCpuTimeUs(process.pid)!];
    const child = spawnSync(process.execPath, ['-e', SPIN]);
    assert.equal(child.status, 0);
    const [own, tree] = [cpuTimeUs(process.pid)! - ownBefore, treeCpuTimeUs(process.pid)! - treeBefore];
    assert.ok(
      tree - own >= 270_000,
      `the child's 300 ms (in 10-ms ticks) show in the tree: ${tree} µs against the process's ${own}`,
    );
    assert.ok(own < 200_000, `the process alone did not burn them: ${own} µs`);
  });

  test('a child still running counts for its parent’s tree', async () => {
    const treeBefore = treeCpuTimeUs(process.pid)!;
    const child = spawn(process.execPath, [
      '-e',
      `${SPIN} console.log('spun'); setInterval(() => {}, 1000);`,
    ]);
    try {
      await once(child.stdout, 'data');
      const tree = treeCpuTimeUs(process.pid)! - treeBefore;
      assert.ok(tree >= 270_000, `the running child's 300 ms show in the tree: ${tree} µs`);
    } finally {
      child.kill();
    }
  });

  test('a process /proc does not know has no CPU time', () => {
    assert.equal(treeCpuTimeUs(2 ** 22 + 1), null);
    assert.equal(cpuTimeUs(undefined), null);
  });
});
