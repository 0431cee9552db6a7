-- A reply pauses the enrollments that texted the replying phone from the number it replied to: each SMS
-- step's send records the number it was sent from. Sends recorded before this migration take it from
-- their message.

ALTER TABLE sequence_step_sends ADD COLUMN from_address text;

UPDATE sequence_step_sends s SET from_address = m.from_number
FROM sms_messages m
WHERE s.kind = 'sms' AND m.org_id = s.org_id AND m.id::text = s.message_ref;

-- What a reply looks up: the SMS steps sent to a phone from one of the org's numbers.
CREATE INDEX sequence_step_sends_sms_pair ON sequence_step_sends (org_id, to_address, from_address)
  WHERE kind = 'sms';
