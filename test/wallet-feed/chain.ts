import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import solc from 'solc';
import type { Abi, Hex } from 'viem';

const require = createRequire(import.meta.url);
const CONTRACTS = path.join(import.meta.dirname, 'contracts');

export interface Compiled {
  abi: Abi;
  bytecode: Hex;
}

/** Compiles the test contracts with solc (the npm package), so their source in the repo is the truth. */
export function compileContracts(): Record<string, Compiled> {
  const sources = Object.fromEntries(
    fs
      .readdirSync(CONTRACTS)
      .filter((file) => file.endsWith('.sol'))
      .map((file) => [file, { content: fs.readFileSync(path.join(CONTRACTS, file), 'utf8') }]),
  );
  const output = JSON.parse(
    solc.compile(
      JSON.stringify({
        language: 'Solidity',
        sources,
        settings: {
          optimizer: { enabled: true, runs: 200 },
          evmVersion: 'paris',
          outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object'] } },
        },
      }),
    ),
  );
  const problems = (output.errors ?? []).filter((e: { severity: string }) => e.severity === 'error');
  if (problems.length)
    throw new Error(problems.map((e: { formattedMessage: string }) => e.formattedMessage).join('\n'));
  const compiled: Record<string, Compiled> = {};
  for (const file of Object.values(output.contracts) as Record<string, any>[]) {
    for (const [name, contract] of Object.entries(file)) {
      compiled[name] = { abi: contract.abi, bytecode: `0x${contract.evm.bytecode.object}` };
    }
  }
  return compiled;
}

/** The anvil binary that @foundry-rs/anvil ships in its platform package. */
function anvilBinary(): string {
  const arch = process.arch === 'x64' ? 'amd64' : process.arch;
  const pkg = require.resolve(`@foundry-rs/anvil-${process.platform}-${arch}/package.json`);
  return path.join(path.dirname(pkg), 'bin', process.platform === 'win32' ? 'anvil.exe' : 'anvil');
}

export interface LocalChain {
  url: string;
  process: ChildProcess;
  /** Stops the chain by its pid and waits for it to exit. */
  stop(): Promise<void>;
}

/** Starts anvil on a free port on the loopback interface, with `accounts` unlocked accounts. */
export async function startAnvil(port: number, accounts = 20): Promise<LocalChain> {
  const child = spawn(
    anvilBinary(),
    ['--port', String(port), '--host', '127.0.0.1', '--accounts', String(accounts), '--silent'],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr?.on('data', (chunk) => {
    stderr += chunk;
  });
  const url = `http://127.0.0.1:${port}`;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    if (child.exitCode === null && child.pid) process.kill(child.pid, 'SIGTERM');
    await exited;
  };
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`anvil exited: ${stderr}`);
    try {
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] }),
      });
      if (response.ok) return { url, process: child, stop };
    } catch {}
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  await stop();
  throw new Error(`anvil did not start: ${stderr}`);
}
