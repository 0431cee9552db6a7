-- Public wallet snapshot feed: membership (members, their wallets, the platform's wallets, marketplaces),
-- the holding index of the collection, and the chain log it is folded from.

CREATE TABLE feed_members (
  id text PRIMARY KEY,
  member_since date NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

-- Every address the platform knows, once (the primary key is what makes an address belong to at most
-- one member, and never to a member and the platform or a marketplace at the same time). Lower-case hex.
CREATE TABLE feed_addresses (
  address text PRIMARY KEY CHECK (address ~ '^0x[0-9a-f]{40}$'),
  role text NOT NULL CHECK (role IN ('custodial', 'connected', 'platform', 'marketplace')),
  member_id text REFERENCES feed_members (id) ON DELETE CASCADE,
  -- Order as the admin gave it: a member's first custodial wallet is its key in the feed.
  position integer NOT NULL,
  CHECK ((member_id IS NOT NULL) = (role IN ('custodial', 'connected')))
);
CREATE INDEX feed_addresses_member ON feed_addresses (member_id, role, position);
CREATE INDEX feed_addresses_role ON feed_addresses (role, position);

-- The holding index: the collection's live tokens as of the last successful refresh.
CREATE TABLE feed_tokens (
  token_id text PRIMARY KEY CHECK (token_id ~ '^[0-9]{1,78}$'),
  owner text NOT NULL,
  -- The `from` of the transfer that gave `owner` the token: the seller when the owner is a marketplace.
  previous_owner text,
  -- ERC-4907 user and its expiry in Unix seconds.
  renter text,
  rental_expires bigint
);

-- delegate.xyz v2 delegations in force: for a whole wallet, for a contract, or for one token.
CREATE TABLE feed_delegations (
  delegator text NOT NULL,
  delegate text NOT NULL,
  scope text NOT NULL CHECK (scope IN ('all', 'contract', 'token')),
  contract text,
  token_id text,
  rights text NOT NULL,
  CHECK ((scope = 'all') = (contract IS NULL)),
  CHECK ((scope = 'token') = (token_id IS NOT NULL))
);
CREATE UNIQUE INDEX feed_delegations_key
  ON feed_delegations (scope, delegator, delegate, coalesce(contract, ''), coalesce(token_id, ''), rights);

-- The decoded logs the rpc source has read, folded into the holding index at each refresh; a reorg
-- deletes those past the fork point.
CREATE TABLE feed_chain_logs (
  block_number bigint NOT NULL,
  log_index integer NOT NULL,
  block_hash text NOT NULL,
  event text NOT NULL,
  args jsonb NOT NULL,
  PRIMARY KEY (block_number, log_index)
);

-- Hashes of processed blocks (range ends and blocks with logs), to detect a reorg and find its fork point.
CREATE TABLE feed_index_blocks (
  block_number bigint PRIMARY KEY,
  block_hash text NOT NULL
);

-- One row: where the index stands and how its last refreshes went.
CREATE TABLE feed_index_state (
  id boolean PRIMARY KEY DEFAULT true CHECK (id),
  source text NOT NULL,
  collection text NOT NULL,
  supply integer NOT NULL DEFAULT 0,
  last_block bigint,
  refreshed_at timestamptz,
  attempted_at timestamptz,
  failed_at timestamptz,
  failure text
);
