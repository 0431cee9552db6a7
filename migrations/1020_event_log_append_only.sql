-- An event is one append (issue 25). The relay used to claim undispatched events FOR NO KEY UPDATE
-- and set dispatched_at on each: a second row version and an entry in every index of the table, for
-- every event. Now the event row is written once and never touched again:
--
--   event_log            the events, append-only. seq (from event_seq) orders them; xid is the
--                        writing transaction, taken before seq (see eventInsert in emit.ts).
--   event_relay          one row: the relay's position (the last seq handed to the consumers) and
--                        frontier (every seq up to it is final: its transaction has ended, so no event
--                        can appear below it any more). The relay reads (position, frontier] in seq order.
--   event_relay_failures the events a consumer threw on: attempts, next retry, last error, dead.
--   events               a view with the old columns (dispatched_at, relay_*) for operators and tests.
ALTER TABLE events RENAME TO event_log;
ALTER INDEX events_pkey RENAME TO event_log_pkey;
ALTER INDEX events_org RENAME TO event_log_org;
ALTER INDEX events_client RENAME TO event_log_client;
ALTER INDEX events_org_type RENAME TO event_log_org_type;
DROP INDEX events_undispatched;

CREATE SEQUENCE event_seq;
-- Existing events take seq in id order (ids are time-ordered); xid only matters for new ones.
ALTER TABLE event_log ADD COLUMN seq bigint, ADD COLUMN xid xid8;
UPDATE event_log SET seq = ordered.n
  FROM (SELECT org_id, id, row_number() OVER (ORDER BY id) AS n FROM event_log) ordered
  WHERE event_log.org_id = ordered.org_id AND event_log.id = ordered.id;
SELECT setval('event_seq', COALESCE((SELECT max(seq) FROM event_log), 0) + 1, false);
UPDATE event_log SET xid = '0';
ALTER TABLE event_log
  ALTER COLUMN xid SET DEFAULT pg_current_xact_id(), ALTER COLUMN xid SET NOT NULL,
  ALTER COLUMN seq SET DEFAULT nextval('event_seq'), ALTER COLUMN seq SET NOT NULL;
ALTER SEQUENCE event_seq OWNED BY event_log.seq;
-- The relay reads by seq. Not unique: on Citus a unique index would need org_id first.
CREATE INDEX event_log_seq ON event_log (seq);

CREATE TABLE event_relay (
  id integer PRIMARY KEY CHECK (id = 1),
  -- Every event with seq <= position has been handed to every consumer (or recorded as failed).
  position bigint NOT NULL,
  -- Every seq <= frontier is final.
  frontier bigint NOT NULL,
  -- A probe not yet resolved: event_seq's value read before transaction probe_xid began; once no
  -- transaction of this database older than probe_xid runs, probe_seq becomes the frontier.
  probe_seq bigint,
  probe_xid xid8,
  moved_at timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE event_relay IS
  'local: the outbox relay''s position in event_log; on Citus one row per worker node (event_seq is per node)';

CREATE TABLE event_relay_failures (
  org_id uuid NOT NULL,
  event_id text NOT NULL,
  attempts integer NOT NULL,
  retry_at timestamptz,
  error text NOT NULL,
  dead_at timestamptz,
  PRIMARY KEY (org_id, event_id),
  FOREIGN KEY (org_id, event_id) REFERENCES event_log (org_id, id)
);
CREATE INDEX event_relay_failures_due ON event_relay_failures (retry_at) WHERE dead_at IS NULL;
COMMENT ON TABLE event_relay_failures IS
  'tenant: events of one org a consumer threw on, retried with backoff until dead';

-- Carry the old relay state over: failures as they were, and the position just before the first
-- event not yet handed over (everything after it is handed over again: consumers are idempotent).
INSERT INTO event_relay_failures (org_id, event_id, attempts, retry_at, error, dead_at)
  SELECT org_id, id, relay_attempts, relay_retry_at, COALESCE(relay_error, ''), relay_dead_at
  FROM event_log WHERE relay_attempts > 0 AND dispatched_at IS NULL;
INSERT INTO event_relay (id, position, frontier)
  SELECT 1, p, p FROM (SELECT COALESCE(
    (SELECT min(seq) - 1 FROM event_log WHERE dispatched_at IS NULL AND relay_attempts = 0),
    (SELECT max(seq) FROM event_log), 0) AS p) start;
ALTER TABLE event_log DROP COLUMN dispatched_at, DROP COLUMN relay_attempts, DROP COLUMN relay_retry_at,
  DROP COLUMN relay_error, DROP COLUMN relay_dead_at;
COMMENT ON TABLE event_log IS
  'tenant: the events of one org, append-only; the relay reads them in seq order below its frontier';

-- The old shape, read-only, for operators and tests: dispatched_at is not null once the relay has
-- handed the event over (its time is the event's own: the relay no longer writes one per event).
CREATE VIEW events AS
  SELECT e.id, e.org_id, e.client_id, e.type, e.data, e.metadata, e.created_at,
    CASE WHEN f.event_id IS NULL AND e.seq <= r.position THEN e.created_at END AS dispatched_at,
    COALESCE(f.attempts, 0) AS relay_attempts, f.retry_at AS relay_retry_at, f.error AS relay_error,
    f.dead_at AS relay_dead_at, e.seq, e.xid
  FROM event_log e
  CROSS JOIN event_relay r
  LEFT JOIN event_relay_failures f ON f.org_id = e.org_id AND f.event_id = e.id;
