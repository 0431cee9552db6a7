import {
  type Abi,
  createPublicClient,
  http,
  numberToHex,
  type PublicClient,
  pad,
  parseEventLogs,
  type RpcLog,
  type Transport,
  toEventSelector,
} from 'viem';
import { collectionEvents, registryEvents, totalSupplyAbi } from './abi.ts';
import { foldLogs } from './fold.ts';
import type { BlockRef, ChainLog, HoldingsSource, IndexCheckpoints, SyncResult } from './types.ts';

export interface RpcSourceOptions {
  /** A JSON-RPC URL, or a viem transport (tests wrap one to inject node errors). */
  rpc: string | Transport;
  collection: string;
  registry: string;
  startBlock: number;
  confirmations: number;
  maxBlockRange: number;
  /** How many stored blocks a reorg search walks back before re-reading everything. */
  maxReorgSearch?: number;
  onProgress?: (range: { from: number; to: number; logs: number }) => void;
}

// Nodes word "too many results" differently: geth/erigon, Infura, Alchemy, QuickNode, Ankr, public nodes.
const TOO_MANY_RESULTS =
  /too many|more than \d+ results|response size|limit exceeded|exceeds? (the )?(max|limit)|block range|range (is )?too (large|wide|big)|query timeout|timed? ?out/i;

/**
 * Reads the collection's Transfer and ERC-4907 UpdateUser logs and the delegate registry's v2 logs
 * through JSON-RPC, up to `confirmations` blocks below the head, in block ranges that halve while the
 * node refuses them as too large. Before reading on, it checks the last processed block's hash: if it
 * is no longer on the chain, it walks back through the stored hashes to the fork point and re-reads
 * from there.
 */
export class RpcSource implements HoldingsSource {
  readonly kind = 'rpc';
  readonly collection: string;
  private readonly client: PublicClient;
  private span: number;

  constructor(private readonly options: RpcSourceOptions) {
    this.collection = options.collection.toLowerCase();
    const transport = typeof options.rpc === 'string' ? http(options.rpc, { retryCount: 2 }) : options.rpc;
    // An indexer must see every new block: no response caching.
    this.client = createPublicClient({ transport, cacheTime: 0 }) as PublicClient;
    this.span = options.maxBlockRange;
  }

  async sync(checkpoints: IndexCheckpoints): Promise<SyncResult> {
    const head = Number(await this.client.getBlockNumber({ cacheTime: 0 }));
    const reorg = await this.detectReorg(checkpoints);
    const target = head - this.options.confirmations;
    const last = await checkpoints.lastBlock();
    let from = Math.max(this.options.startBlock, (last ?? this.options.startBlock - 1) + 1);

    while (from <= target) {
      const to = Math.min(from + this.span - 1, target);
      let logs: ChainLog[];
      let end: BlockRef;
      try {
        ({ logs, end } = await this.readRange(from, to));
      } catch (error) {
        if (this.span > 1 && TOO_MANY_RESULTS.test(errorText(error))) {
          this.span = Math.max(1, Math.floor(this.span / 2));
          continue;
        }
        throw error;
      }
      await checkpoints.append(logs, end);
      this.options.onProgress?.({ from, to, logs: logs.length });
      from = to + 1;
      // Grow back after a success, so one dense stretch does not slow the rest of the history.
      this.span = Math.min(this.options.maxBlockRange, this.span * 2);
    }

    const indexed = await checkpoints.lastBlock();
    const { tokens, delegations } = foldLogs(await checkpoints.logs());
    const reported = indexed === null ? null : await this.totalSupply(indexed);
    return {
      holdings: { collection: this.collection, supply: reported ?? tokens.length, tokens, delegations },
      block: indexed,
      reorg,
    };
  }

  /** The logs of one block range, with the hash of its last block read before and after them. */
  private async readRange(from: number, to: number): Promise<{ logs: ChainLog[]; end: BlockRef }> {
    const before = await this.blockHash(to);
    const range = { fromBlock: numberToHex(from), toBlock: numberToHex(to) };
    const contractTopic = pad(this.collection as `0x${string}`);
    const [collectionLogs, allLogs, scopedLogs] = await Promise.all([
      this.getLogs({ ...range, address: this.collection, topics: [selectors(collectionEvents)] }),
      this.getLogs({
        ...range,
        address: this.options.registry,
        topics: [[toEventSelector(registryEvents[0])]],
      }),
      this.getLogs({
        ...range,
        address: this.options.registry,
        topics: [
          [toEventSelector(registryEvents[1]), toEventSelector(registryEvents[2])],
          null,
          null,
          contractTopic,
        ],
      }),
    ]);
    const after = await this.blockHash(to);
    if (!after || before !== after)
      throw new Error(`block ${to} changed while its range was read (reorg); retry later`);
    const logs = [
      ...decode(collectionEvents, collectionLogs),
      ...decode(registryEvents, [...allLogs, ...scopedLogs]),
    ].sort((a, b) => a.blockNumber - b.blockNumber || a.logIndex - b.logIndex);
    return { logs, end: { number: to, hash: after } };
  }

  private getLogs(filter: {
    fromBlock: `0x${string}`;
    toBlock: `0x${string}`;
    address: string;
    topics: (`0x${string}` | `0x${string}`[] | null)[];
  }): Promise<RpcLog[]> {
    return this.client.request({
      method: 'eth_getLogs',
      params: [{ ...filter, address: filter.address as `0x${string}` }],
    }) as Promise<RpcLog[]>;
  }

  private async blockHash(number: number): Promise<string | null> {
    try {
      const block = await this.client.getBlock({ blockNumber: BigInt(number) });
      return block.hash?.toLowerCase() ?? null;
    } catch (error) {
      if (/not found|could not be found/i.test(errorText(error))) return null;
      throw error;
    }
  }

  /** Compares stored hashes with the chain's, newest first; rewinds to the newest block both agree on. */
  private async detectReorg(checkpoints: IndexCheckpoints): Promise<SyncResult['reorg']> {
    const stored = await checkpoints.recentBlocks(this.options.maxReorgSearch ?? 256);
    if (stored.length === 0) return null;
    if ((await this.blockHash(stored[0].number)) === stored[0].hash) return null;
    for (const block of stored.slice(1)) {
      if ((await this.blockHash(block.number)) === block.hash) {
        await checkpoints.rewind(block.number);
        return { forkBlock: block.number, detectedAt: stored[0].number };
      }
    }
    await checkpoints.rewind(null);
    return { forkBlock: null, detectedAt: stored[0].number };
  }

  /** The collection's own count, when it has `totalSupply()`: an independent check of the index. */
  private async totalSupply(block: number): Promise<number | null> {
    try {
      const supply = await this.client.readContract({
        address: this.collection as `0x${string}`,
        abi: totalSupplyAbi,
        functionName: 'totalSupply',
        blockNumber: BigInt(block),
      });
      return Number(supply);
    } catch {
      return null;
    }
  }
}

function selectors(abi: Abi): `0x${string}`[] {
  return abi.filter((item) => item.type === 'event').map((item) => toEventSelector(item));
}

function decode(abi: typeof collectionEvents | typeof registryEvents, raw: RpcLog[]): ChainLog[] {
  const lower = (value: string) => value.toLowerCase();
  return parseEventLogs({ abi: abi as Abi, logs: raw }).map((log) => {
    const base = {
      blockNumber: Number(log.blockNumber),
      logIndex: Number(log.logIndex),
      blockHash: lower(log.blockHash!),
    };
    const args = log.args as Record<string, unknown>;
    const a = (name: string) => lower(String(args[name]));
    switch (log.eventName) {
      case 'Transfer':
        return {
          ...base,
          event: 'Transfer',
          args: { from: a('from'), to: a('to'), tokenId: String(args.tokenId) },
        };
      case 'UpdateUser':
        return {
          ...base,
          event: 'UpdateUser',
          args: { tokenId: String(args.tokenId), user: a('user'), expires: Number(args.expires) },
        };
      case 'DelegateAll':
        return {
          ...base,
          event: 'DelegateAll',
          args: { from: a('from'), to: a('to'), rights: a('rights'), enable: args.enable === true },
        };
      case 'DelegateContract':
        return {
          ...base,
          event: 'DelegateContract',
          args: {
            from: a('from'),
            to: a('to'),
            contract: a('contract_'),
            rights: a('rights'),
            enable: args.enable === true,
          },
        };
      default:
        return {
          ...base,
          event: 'DelegateERC721',
          args: {
            from: a('from'),
            to: a('to'),
            contract: a('contract_'),
            tokenId: String(args.tokenId),
            rights: a('rights'),
            enable: args.enable === true,
          },
        };
    }
  });
}

function errorText(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const details = (error as { details?: string; shortMessage?: string }).details ?? '';
  return `${error.message} ${details}`;
}
