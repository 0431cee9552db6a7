import fs from 'node:fs/promises';
import { type Static, Type } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { isAddress } from 'viem/utils';
import type { Delegation, Holdings, HoldingsSource, SyncResult, TokenHolding } from './types.ts';

const Address = Type.String({ pattern: '^0x[0-9a-fA-F]{40}$' });
const TokenId = Type.String({ pattern: '^[0-9]{1,78}$' });

/** The holdings file of the `import` source (documented in docs/pages/wallet-feed/configuration.md). */
export const HoldingsFile = Type.Object(
  {
    collection: Address,
    supply: Type.Optional(Type.Integer({ minimum: 0 })),
    block: Type.Optional(Type.Integer({ minimum: 0 })),
    tokens: Type.Array(
      Type.Object(
        {
          token_id: TokenId,
          owner: Address,
          seller: Type.Optional(Address),
          renter: Type.Optional(Address),
          rental_expires: Type.Optional(
            Type.Union([Type.Integer({ minimum: 0 }), Type.String({ minLength: 10, maxLength: 40 })]),
          ),
        },
        { additionalProperties: false },
      ),
    ),
    delegations: Type.Optional(
      Type.Array(
        Type.Object(
          {
            from: Address,
            to: Address,
            scope: Type.Union([Type.Literal('all'), Type.Literal('contract'), Type.Literal('token')]),
            contract: Type.Optional(Address),
            token_id: Type.Optional(TokenId),
            rights: Type.Optional(Type.String({ pattern: '^0x[0-9a-fA-F]{64}$' })),
          },
          { additionalProperties: false },
        ),
      ),
    ),
  },
  { additionalProperties: false },
);
export type HoldingsFileContent = Static<typeof HoldingsFile>;

const FULL_RIGHTS = `0x${'0'.repeat(64)}`;

export class HoldingsFileError extends Error {}

/** Reads a JSON holdings file (or built-in holdings), for offline use or a chain the service cannot reach. */
export class ImportSource implements HoldingsSource {
  readonly kind = 'import';

  constructor(
    private readonly read: () => Promise<unknown>,
    /** The configured collection: the holdings must be about it. */
    readonly collection: string | null,
  ) {}

  static fromFile(file: string, collection: string | null): ImportSource {
    return new ImportSource(async () => {
      const text = await fs.readFile(file, 'utf8').catch((error) => {
        throw new HoldingsFileError(`cannot read holdings file ${file}: ${error.message}`);
      });
      try {
        return JSON.parse(text);
      } catch (error) {
        throw new HoldingsFileError(`holdings file ${file} is not JSON: ${(error as Error).message}`);
      }
    }, collection);
  }

  async sync(): Promise<SyncResult> {
    const content = await this.read();
    const holdings = parseHoldings(content);
    if (this.collection && holdings.collection !== this.collection) {
      throw new HoldingsFileError(
        `holdings file is about ${holdings.collection}, but COLLECTION_ADDRESS is ${this.collection}`,
      );
    }
    return { holdings, block: (content as HoldingsFileContent).block ?? null, reorg: null };
  }
}

/** Validates a holdings file's content and normalizes it (lower-case addresses, Unix-second expiries). */
export function parseHoldings(content: unknown): Holdings {
  const first = Value.Errors(HoldingsFile, content).First();
  if (first) throw new HoldingsFileError(`holdings file: ${first.path || '/'} ${first.message}`);
  const file = content as HoldingsFileContent;
  const address = (value: string, where: string) => {
    if (!isAddress(value))
      throw new HoldingsFileError(`holdings file: ${where} has a bad checksum: ${value}`);
    return value.toLowerCase();
  };
  const seen = new Set<string>();
  const tokens: TokenHolding[] = file.tokens.map((token, i) => {
    const tokenId = BigInt(token.token_id).toString();
    if (seen.has(tokenId)) throw new HoldingsFileError(`holdings file: token ${tokenId} is listed twice`);
    seen.add(tokenId);
    return {
      tokenId,
      owner: address(token.owner, `/tokens/${i}/owner`),
      previousOwner: token.seller ? address(token.seller, `/tokens/${i}/seller`) : null,
      renter: token.renter ? address(token.renter, `/tokens/${i}/renter`) : null,
      rentalExpires: token.renter ? expiry(token.rental_expires, `/tokens/${i}/rental_expires`) : null,
    };
  });
  const delegations: Delegation[] = (file.delegations ?? []).map((d, i) => {
    if (d.scope !== 'all' && !d.contract)
      throw new HoldingsFileError(`holdings file: /delegations/${i} needs a contract`);
    if (d.scope === 'token' && d.token_id === undefined)
      throw new HoldingsFileError(`holdings file: /delegations/${i} needs a token_id`);
    return {
      delegator: address(d.from, `/delegations/${i}/from`),
      delegate: address(d.to, `/delegations/${i}/to`),
      scope: d.scope,
      contract: d.scope === 'all' ? null : address(d.contract!, `/delegations/${i}/contract`),
      tokenId: d.scope === 'token' ? BigInt(d.token_id!).toString() : null,
      rights: (d.rights ?? FULL_RIGHTS).toLowerCase(),
    };
  });
  return {
    collection: address(file.collection, '/collection'),
    supply: file.supply ?? tokens.length,
    tokens,
    delegations,
  };
}

/** A rental without an expiry never expires (ERC-4907 has none of that, but a file may say so). */
function expiry(value: number | string | undefined, where: string): number {
  if (value === undefined) return Number.MAX_SAFE_INTEGER;
  if (typeof value === 'number') return value;
  const ms = Date.parse(value);
  if (Number.isNaN(ms)) throw new HoldingsFileError(`holdings file: ${where} is not a date-time: ${value}`);
  return Math.floor(ms / 1000);
}
