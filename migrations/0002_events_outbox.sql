-- Events are the outbox: the worker's dispatcher claims undispatched events and queues their
-- fan-out jobs in batches. (Queuing a job inside every emitting transaction would NOTIFY in each of
-- them, and PostgreSQL serializes the commits of notifying transactions.)
ALTER TABLE events ADD COLUMN dispatched_at timestamptz;
CREATE INDEX events_undispatched ON events (id) WHERE dispatched_at IS NULL;
