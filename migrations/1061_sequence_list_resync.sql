-- Sequences that follow a list (issue 26): a smart list whose filter is relative to now (`within_last_days`)
-- changes its members as time passes, with no write for the triggers of 1040 to mark, so the list pass
-- syncs such a list whole again once `list_synced_at` is older than SEQUENCE_LIST_RESYNC.
ALTER TABLE sequences ADD COLUMN list_synced_at timestamptz;
