-- The portal's overview counts an org's (or a client's) SMS messages of the last 7 days; ids are
-- UUIDv7, so a range of ids is a range of time.
CREATE INDEX sms_messages_org_recent ON sms_messages (org_id, id);
