/**
 * The holding index of one ERC-721 collection, and the sources that produce it. Every address here is
 * lower-case hex; token ids are decimal strings (uint256 does not fit a number).
 */

export interface TokenHolding {
  tokenId: string;
  owner: string;
  /** The `from` of the transfer that gave `owner` the token (null for a mint): the seller of an escrowed token. */
  previousOwner: string | null;
  /** ERC-4907 user, with the expiry of the rental in Unix seconds. */
  renter: string | null;
  rentalExpires: number | null;
}

export type DelegationScope = 'all' | 'contract' | 'token';

/** A delegate.xyz v2 delegation in force. */
export interface Delegation {
  delegator: string;
  delegate: string;
  scope: DelegationScope;
  /** The delegated contract (null for a whole-wallet delegation). */
  contract: string | null;
  tokenId: string | null;
  /** bytes32 hex; all zeros means full rights. */
  rights: string;
}

export interface Holdings {
  collection: string;
  /** Tokens in existence, as the collection reports it (totalSupply) or as minted minus burned. */
  supply: number;
  tokens: TokenHolding[];
  delegations: Delegation[];
}

export interface BlockRef {
  number: number;
  hash: string;
}

/** A decoded log of the collection or of the delegate registry. */
export type ChainEvent =
  | { event: 'Transfer'; args: { from: string; to: string; tokenId: string } }
  | { event: 'UpdateUser'; args: { tokenId: string; user: string; expires: number } }
  | { event: 'DelegateAll'; args: { from: string; to: string; rights: string; enable: boolean } }
  | {
      event: 'DelegateContract';
      args: { from: string; to: string; contract: string; rights: string; enable: boolean };
    }
  | {
      event: 'DelegateERC721';
      args: { from: string; to: string; contract: string; tokenId: string; rights: string; enable: boolean };
    };

export type ChainLog = ChainEvent & { blockNumber: number; logIndex: number; blockHash: string };

/** What the rpc source keeps between refreshes; the caller stores it (in PostgreSQL). */
export interface IndexCheckpoints {
  /** Processed blocks, newest first. */
  recentBlocks(limit: number): Promise<BlockRef[]>;
  /** The last block whose logs are all stored, or null before the first range. */
  lastBlock(): Promise<number | null>;
  /** Forgets every log and block after `block` (all of them when null). */
  rewind(block: number | null): Promise<void>;
  /** Stores the logs of a processed range and marks every block up to `upTo` as processed. */
  append(logs: ChainLog[], upTo: BlockRef): Promise<void>;
  /** Every stored log, in chain order. */
  logs(): Promise<ChainLog[]>;
}

export interface SyncResult {
  holdings: Holdings;
  /** The highest block the holdings reflect (null for an import without one). */
  block: number | null;
  /** Set when stored blocks were no longer on the chain: the index was re-read from `forkBlock + 1`. */
  reorg: { forkBlock: number | null; detectedAt: number } | null;
}

/** Where the holding index comes from: the chain through JSON-RPC, or a holdings file. */
export interface HoldingsSource {
  readonly kind: 'rpc' | 'import';
  /** The collection, when known before syncing (rpc). */
  readonly collection: string | null;
  sync(checkpoints: IndexCheckpoints): Promise<SyncResult>;
}

export const ZERO_ADDRESS = '0x0000000000000000000000000000000000000000';
