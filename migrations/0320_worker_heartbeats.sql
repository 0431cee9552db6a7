-- Each worker process notes it is alive every few seconds; /readyz reports the newest beat, so an
-- operator sees whether any worker runs at all (the API alone would accept writes whose events
-- and webhooks never go out).
CREATE TABLE worker_heartbeats (
  worker_id text PRIMARY KEY,
  hostname text NOT NULL,
  pid integer NOT NULL,
  started_at timestamptz NOT NULL,
  beat_at timestamptz NOT NULL
);
