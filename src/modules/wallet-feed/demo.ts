import type { Db } from '../../platform/db/pool.ts';
import { inTransaction } from '../../platform/db/transaction.ts';
import type { HoldingsFileContent } from '../../providers/chain/import.ts';
import { putMember, replaceRole } from './membership.ts';

/**
 * The demo of the first start: a few members, the platform's wallet, a marketplace and the holdings of
 * a made-up collection, so a newcomer's feed shows every rule (ownership, rental, delegation, escrow,
 * a member left out for want of a custodial wallet). Used only when no chain source is configured and
 * demo data is on (`SEED_DEMO`): the first refresh of the index seeds it.
 */
const address = (prefix: string) => `0x${prefix.padEnd(40, '0')}`;
const alice = [address('a11ce1'), address('a11ce2')];
const bob = address('b0b1');
const carol = address('ca401');
const dave = address('da7e2');
const platformWallet = address('91a7f04');
const marketplace = address('3a4e7');
const [holder1, holder2, holder3] = [address('401de41'), address('401de42'), address('401de43')];

export const DEMO_HOLDINGS: HoldingsFileContent = {
  collection: address('6a1afe'),
  supply: 7,
  tokens: [
    { token_id: '1', owner: alice[0] },
    { token_id: '2', owner: platformWallet },
    { token_id: '3', owner: marketplace, seller: carol },
    { token_id: '4', owner: holder1 },
    { token_id: '5', owner: holder1, renter: alice[1], rental_expires: '2099-01-01T00:00:00Z' },
    { token_id: '6', owner: holder3 },
    { token_id: '7', owner: dave },
  ],
  delegations: [{ from: holder1, to: holder2, scope: 'all' }],
};

/** Seeds the demo membership, unless membership has already been set up. */
export async function seedFeedDemo(db: Db): Promise<void> {
  if (await db.selectFrom('feed_addresses').select('address').limit(1).executeTakeFirst()) return;
  await inTransaction(db, async (trx) => {
    await putMember(trx, 'demo-alice', {
      member_since: '2023-03-14',
      custodial_wallets: [alice[0]],
      connected_wallets: [alice[1]],
    });
    await putMember(trx, 'demo-bob', {
      member_since: '2024-06-01',
      custodial_wallets: [bob],
      connected_wallets: [],
    });
    await putMember(trx, 'demo-carol', {
      member_since: '2025-01-20',
      custodial_wallets: [carol],
      connected_wallets: [],
    });
    await putMember(trx, 'demo-dave', {
      member_since: '2025-09-09',
      custodial_wallets: [],
      connected_wallets: [dave],
    });
    await replaceRole(trx, 'platform', [platformWallet], 'wallets');
    await replaceRole(trx, 'marketplace', [marketplace], 'addresses');
  });
}
