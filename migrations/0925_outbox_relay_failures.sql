-- The outbox relay handles a consumer's failure per event: the event is retried with backoff and,
-- after OUTBOX_MAX_ATTEMPTS, left dead (relay_dead_at) for an operator, instead of rolling back
-- its whole batch forever and stalling every tenant's fan-out.
ALTER TABLE events
  ADD COLUMN relay_attempts integer NOT NULL DEFAULT 0,
  ADD COLUMN relay_retry_at timestamptz,
  ADD COLUMN relay_error text,
  ADD COLUMN relay_dead_at timestamptz;
DROP INDEX events_undispatched;
CREATE INDEX events_undispatched ON events (id) WHERE dispatched_at IS NULL AND relay_dead_at IS NULL;
