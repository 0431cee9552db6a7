-- A campaign made with only a name is a draft: its number (like its voice and business name) may come
-- from the org's SDR settings, read when dialing starts, so settings made later apply. A campaign whose
-- start arrives with no number anywhere never dials: the dialer pauses it and says why in paused_reason.
ALTER TABLE sdr_campaigns ALTER COLUMN from_number DROP NOT NULL;
ALTER TABLE sdr_campaigns ADD COLUMN paused_reason text
  CHECK (paused_reason IN ('from_number_required'))
  CHECK (paused_reason IS NULL OR status = 'paused');
