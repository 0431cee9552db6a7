-- A delivery whose lease ran out with no attempt recorded (its worker died, or stalled past the lease)
-- was taken over and sent again without limit: one that killed its worker every time was retried for
-- ever. Leased work counted by record now counts its claims since the last record
-- (src/platform/jobs/leased.ts); the dispatcher gives a delivery up at its limit, as `worker_lost`.
ALTER TABLE webhook_deliveries ADD COLUMN unrecorded_claims integer NOT NULL DEFAULT 0;
