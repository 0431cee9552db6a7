-- SDR campaigns may ask for a pre-call brief of each prospect before its first dial: the dialer asks
-- once (the prospect keeps the job's id), waits for it up to SDR_PRECALL_BRIEF_WAIT, and hands it to
-- the voice provider as the call's context, which the simulator records with its placement.

ALTER TABLE sdr_campaigns ADD COLUMN precall_brief boolean NOT NULL DEFAULT false;

ALTER TABLE sdr_prospects
  -- The brief asked for this prospect (an ai_jobs id), null until asked, and when it was asked.
  ADD COLUMN brief_job_id uuid,
  ADD COLUMN brief_requested_at timestamptz;

ALTER TABLE voice_placements ADD COLUMN context text;
