-- Issue 24: one convention for leased work (src/platform/jobs/leased.ts). A row a worker loop claims has
-- `lease_id` (the fencing token of the claim holding it), `lease_until` (when it may next be claimed: now
-- for new work, the lease's end, the end of a back-off or of an "unconfirmed" grace; NULL when nothing is
-- left to do) and `attempts` (counted at claim); a row with two kinds of leased work prefixes them. Renames,
-- so no data moves; the indexes and checks on the renamed columns follow them. The webhook deliveries
-- already follow it.

-- SMS sends (`send_state` is the "maybe done" state: 'unconfirmed') and held delivery reports.
ALTER TABLE sms_messages RENAME COLUMN send_after TO send_lease_until;
ALTER TABLE sms_messages ADD COLUMN send_lease_id uuid;
ALTER TABLE sms_messages RENAME COLUMN report_after TO report_lease_until;
ALTER TABLE sms_messages ADD COLUMN report_lease_id uuid,
  ADD COLUMN report_attempts integer NOT NULL DEFAULT 0;

-- Outbound call placement (`placement_state` 'unconfirmed' is its "maybe done" state). An unconfirmed
-- placement used to wait for a `call_placement_watchdog` job; now its `placement_lease_until` is when the
-- placement loop's sweep settles it: those waiting get the job's deadline (ring time + length + 30 min).
ALTER TABLE calls RENAME COLUMN place_after TO placement_lease_until;
ALTER TABLE calls ADD COLUMN placement_lease_id uuid;
UPDATE calls SET placement_lease_until = updated_at + interval '30 minutes'
    + make_interval(secs => coalesce((placement->>'ringTimeoutSeconds')::int, 0)
                           + coalesce((placement->>'maxDurationSeconds')::int, 0))
  WHERE placement_state = 'unconfirmed' AND ended_at IS NULL;
CREATE INDEX calls_placement_unconfirmed ON calls (placement_lease_until) WHERE placement_state = 'unconfirmed';
DO $$
BEGIN
  IF to_regclass('graphile_worker._private_jobs') IS NOT NULL THEN
    DELETE FROM graphile_worker._private_jobs job USING graphile_worker._private_tasks task
      WHERE task.id = job.task_id AND task.identifier = 'call_placement_watchdog' AND job.locked_at IS NULL;
  END IF;
END $$;

-- Knowledge-base ingestion (`attempts` already has its name).
ALTER TABLE kb_documents RENAME COLUMN due_at TO lease_until;
ALTER TABLE kb_documents ADD COLUMN lease_id uuid;
