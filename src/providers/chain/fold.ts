import type { ChainLog, Delegation, TokenHolding } from './types.ts';
import { ZERO_ADDRESS } from './types.ts';

/**
 * Replays the collection's and the registry's logs, in chain order, into the tokens that exist and
 * the delegations in force. Pure: the same logs always give the same holdings.
 */
export function foldLogs(logs: Iterable<ChainLog>): { tokens: TokenHolding[]; delegations: Delegation[] } {
  const tokens = new Map<string, TokenHolding>();
  const delegations = new Map<string, Delegation>();
  for (const log of logs) {
    switch (log.event) {
      case 'Transfer': {
        const { from, to, tokenId } = log.args;
        if (to === ZERO_ADDRESS) {
          tokens.delete(tokenId);
          break;
        }
        const existing = tokens.get(tokenId);
        const minted = from === ZERO_ADDRESS || !existing;
        tokens.set(tokenId, {
          tokenId,
          owner: to,
          previousOwner: from === ZERO_ADDRESS ? null : from,
          // ERC-4907 clears the user on transfer with its own UpdateUser log; a mint starts clean.
          renter: minted ? null : existing.renter,
          rentalExpires: minted ? null : existing.rentalExpires,
        });
        break;
      }
      case 'UpdateUser': {
        const token = tokens.get(log.args.tokenId);
        if (!token) break;
        const cleared = log.args.user === ZERO_ADDRESS;
        token.renter = cleared ? null : log.args.user;
        token.rentalExpires = cleared ? null : log.args.expires;
        break;
      }
      case 'DelegateAll':
      case 'DelegateContract':
      case 'DelegateERC721': {
        const delegation: Delegation = {
          delegator: log.args.from,
          delegate: log.args.to,
          scope:
            log.event === 'DelegateAll' ? 'all' : log.event === 'DelegateContract' ? 'contract' : 'token',
          contract: log.event === 'DelegateAll' ? null : log.args.contract,
          tokenId: log.event === 'DelegateERC721' ? log.args.tokenId : null,
          rights: log.args.rights,
        };
        const key = delegationKey(delegation);
        if (log.args.enable) delegations.set(key, delegation);
        else delegations.delete(key);
        break;
      }
    }
  }
  return { tokens: [...tokens.values()], delegations: [...delegations.values()] };
}

/** A delegation is identified by everything but its enable flag, as in the registry. */
export function delegationKey(d: Delegation): string {
  return `${d.scope}|${d.delegator}|${d.delegate}|${d.contract ?? ''}|${d.tokenId ?? ''}|${d.rights}`;
}
