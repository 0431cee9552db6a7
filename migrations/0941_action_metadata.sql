-- Metadata is one mechanism: every action that starts something takes a JSON object (at most 16 KB
-- serialized, checked by the API), stores it as given, and every event the action causes echoes it in the
-- envelope's `metadata`. Enrollments had it already; these are the other starting points, and the calls
-- an SDR campaign places (the campaign's metadata merged with the prospect's, written when it dials).

ALTER TABLE sms_messages ADD COLUMN metadata jsonb NOT NULL DEFAULT '{}';
ALTER TABLE kb_documents ADD COLUMN metadata jsonb NOT NULL DEFAULT '{}';
ALTER TABLE sdr_campaigns ADD COLUMN metadata jsonb NOT NULL DEFAULT '{}';
ALTER TABLE sdr_prospects ADD COLUMN metadata jsonb NOT NULL DEFAULT '{}';
ALTER TABLE calls ADD COLUMN metadata jsonb NOT NULL DEFAULT '{}';
