import type pg from 'pg';

/** How many of each kind of holder and token the feed benchmark writes. */
export interface FeedScale {
  members: number;
  connected: number;
  platformWallets: number;
  memberTokens: number;
  ownerTokens: number;
  platformTokens: number;
  escrowTokens: number;
  rentals: number;
  ownerDelegations: number;
  memberDelegations: number;
}

/**
 * 100,000 holders, 150,000 wallets, 10,000 tokens: 80,000 members (49,991 with a connected wallet), the
 * platform (10 wallets) and 19,999 non-members who own (5,000), sold into escrow (500), rent (7,000)
 * or are delegated (7,499) a token.
 */
export const LARGE: FeedScale = {
  members: 80_000,
  connected: 49_991,
  platformWallets: 10,
  memberTokens: 4_000,
  ownerTokens: 5_000,
  platformTokens: 500,
  escrowTokens: 500,
  rentals: 7_000,
  ownerDelegations: 5_000,
  memberDelegations: 2_499,
};

/** About the size of the demo feed: 20 holders. */
export const SMALL: FeedScale = {
  members: 8,
  connected: 5,
  platformWallets: 2,
  memberTokens: 3,
  ownerTokens: 4,
  platformTokens: 1,
  escrowTokens: 1,
  rentals: 3,
  ownerDelegations: 2,
  memberDelegations: 1,
};

export const COLLECTION = '0x6a1afe0000000000000000000000000000000000';

export function holders(s: FeedScale): number {
  return (
    s.members + 1 + s.ownerTokens + s.escrowTokens + s.rentals + s.ownerDelegations + s.memberDelegations
  );
}

/** Replaces the feed's membership and holding index with a generated population, in one transaction. */
export async function seedFeed(pool: pg.Pool, s: FeedScale): Promise<void> {
  const tokens = s.memberTokens + s.ownerTokens + s.platformTokens + s.escrowTokens;
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    // Addresses as scattered as real ones (hashes of a number), so sorting costs what it would.
    await client.query(`CREATE OR REPLACE FUNCTION pg_temp.addr(n bigint) RETURNS text
      LANGUAGE sql IMMUTABLE AS $$ SELECT '0x' || md5(n::text) || left(md5('-' || n), 8) $$`);
    await client.query('TRUNCATE feed_members, feed_addresses, feed_tokens, feed_delegations CASCADE');
    await client.query(
      `INSERT INTO feed_members (id, member_since)
       SELECT 'member-' || i, date '2020-01-01' + (i % 1500) FROM generate_series(1, $1::int) i`,
      [s.members],
    );
    await client.query(
      `INSERT INTO feed_addresses (address, role, member_id, position)
       SELECT pg_temp.addr(1000000 + i), 'custodial', 'member-' || i, 0 FROM generate_series(1, $1::int) i
       UNION ALL
       SELECT pg_temp.addr(2000000 + i), 'connected', 'member-' || i, 0 FROM generate_series(1, $2::int) i
       UNION ALL
       SELECT pg_temp.addr(3000000 + i), 'platform', NULL, i FROM generate_series(1, $3::int) i
       UNION ALL
       SELECT pg_temp.addr(9000000), 'marketplace', NULL, 0`,
      [s.members, s.connected, s.platformWallets],
    );
    // Tokens: members', non-members', the platform's, then in escrow (sold by a non-member).
    await client.query(
      `INSERT INTO feed_tokens (token_id, owner, previous_owner, renter, rental_expires)
       SELECT i::text,
         CASE WHEN i <= $1 THEN pg_temp.addr(1000000 + i)
              WHEN i <= $1 + $2 THEN pg_temp.addr(4000000 + i - $1)
              WHEN i <= $1 + $2 + $3 THEN pg_temp.addr(3000000 + 1 + i % $5)
              ELSE pg_temp.addr(9000000) END,
         CASE WHEN i > $1 + $2 + $3 THEN pg_temp.addr(5000000 + i) END,
         CASE WHEN i <= $6 THEN pg_temp.addr(6000000 + i) END,
         CASE WHEN i <= $6 THEN 4102444800 END
       FROM generate_series(1, $4::int) i`,
      [s.memberTokens, s.ownerTokens, s.platformTokens, tokens, s.platformWallets, s.rentals],
    );
    await client.query(
      `INSERT INTO feed_delegations (delegator, delegate, scope, contract, token_id, rights)
       SELECT pg_temp.addr(4000000 + i), pg_temp.addr(7000000 + i), 'all', NULL, NULL, $3
       FROM generate_series(1, $1::int) i
       UNION ALL
       SELECT pg_temp.addr(1000000 + i), pg_temp.addr(8000000 + i), 'contract', $4, NULL, $3
       FROM generate_series(1, $2::int) i`,
      [s.ownerDelegations, s.memberDelegations, `0x${'0'.repeat(64)}`, COLLECTION],
    );
    await client.query(
      `INSERT INTO feed_index_state (id, source, collection, supply, refreshed_at, attempted_at)
       VALUES (true, 'import', $1, $2, now(), now())
       ON CONFLICT (id) DO UPDATE SET source = excluded.source, collection = excluded.collection,
         supply = excluded.supply, refreshed_at = now(), attempted_at = now(), failed_at = NULL, failure = NULL`,
      [COLLECTION, tokens],
    );
    await client.query('COMMIT');
    await client.query('ANALYZE feed_members, feed_addresses, feed_tokens, feed_delegations');
  } catch (error) {
    await client.query('ROLLBACK');
    throw error;
  } finally {
    client.release();
  }
}
