-- A foreign key is checked by a query PostgreSQL plans once per connection, and keeps: `org_id = $1 AND
-- id = $2` on the referenced table. Planned while the table is still empty (a fresh database), every index
-- that starts with org_id costs the same, and webhook_deliveries and calls had a unique key that starts
-- with it and was chosen: each check then read every row of the org. On webhook_delivery_attempts that
-- was 3 ms an attempt at 30,000 deliveries (issue 25). Led by their own columns, these keys cannot serve
-- `org_id = $1` alone, so the checks take the primary key; they keep org_id, as Citus requires.
ALTER TABLE webhook_deliveries DROP CONSTRAINT webhook_deliveries_subscription_id_event_id_key,
  ADD CONSTRAINT webhook_deliveries_subscription_id_event_id_key UNIQUE (subscription_id, event_id, org_id);

-- The key now serves lookups by the provider's call id, which had an index of their own.
ALTER TABLE calls DROP CONSTRAINT calls_provider_provider_call_id_key,
  ADD CONSTRAINT calls_provider_provider_call_id_key UNIQUE (provider, provider_call_id, org_id);
DROP INDEX calls_provider_call;
