-- Issue 24: the sequence tick, the SDR dialer and the gist claims are leased work
-- (src/platform/jobs/leased.ts), with its columns: `lease_id` (the fencing token of the claim holding
-- the row), `lease_until` (when the row may next be claimed; NULL when nothing is left to do) and
-- `attempts` (claims made, counted at claim). Columns are renamed, not rebuilt: the data is kept.

-- Sequence enrollments: the tick claims an active enrollment whose `next_run_at` has come. Every
-- active enrollment is claimable (an enrollment made without naming the column, too); a stopped or
-- completed one has nothing left to do.
ALTER TABLE sequence_enrollments RENAME COLUMN claimed_until TO lease_until;
ALTER TABLE sequence_enrollments ADD COLUMN lease_id uuid;
ALTER TABLE sequence_enrollments ALTER COLUMN lease_until SET DEFAULT now();
UPDATE sequence_enrollments SET lease_until = now() WHERE status = 'active' AND lease_until IS NULL;
UPDATE sequence_enrollments SET lease_until = NULL WHERE status <> 'active' AND lease_until IS NOT NULL;
COMMENT ON COLUMN sequence_enrollments.attempts IS
  'Claims of the current step (counted at claim); reset when it advances. Spent: paused with send_failed.';

-- SDR campaigns: a worker's visit of an active campaign (scan its due prospects, dial those it has room
-- for), prefixed `dial_` beside the prospects' `max_attempts`. After a visit the campaign may be visited
-- again one tick later, by any worker.
ALTER TABLE sdr_campaigns
  ADD COLUMN dial_lease_id uuid,
  ADD COLUMN dial_lease_until timestamptz NOT NULL DEFAULT now(),
  ADD COLUMN dial_attempts integer NOT NULL DEFAULT 0;
CREATE INDEX sdr_campaigns_visits ON sdr_campaigns (dial_lease_until) WHERE status = 'active';

-- Gists: the request that claims a subject holds its generation under a lease; one whose lease ran out
-- (its process died) is given up, and refunded, by the next request for the subject or by the sweep.
ALTER TABLE gists RENAME COLUMN claimed_until TO lease_until;
ALTER TABLE gists ADD COLUMN lease_id uuid, ADD COLUMN attempts integer NOT NULL DEFAULT 0;
UPDATE gists SET lease_id = gen_random_uuid() WHERE status = 'generating';
ALTER INDEX gists_claims RENAME TO gists_leases;
