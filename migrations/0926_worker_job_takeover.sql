-- A worker process notes the graphile-worker ids its job runners lock jobs under. When its heartbeat
-- is older than WORKER_STALE_AFTER, a live worker unlocks those jobs (graphile_worker.force_unlock_workers)
-- and notes when (jobs_released_at), instead of leaving them locked for graphile-worker's 4 hours.
ALTER TABLE worker_heartbeats
  ADD COLUMN job_worker_ids text[] NOT NULL DEFAULT '{}',
  ADD COLUMN jobs_released_at timestamptz;
CREATE INDEX worker_heartbeats_unreleased ON worker_heartbeats (beat_at) WHERE jobs_released_at IS NULL;
