-- Sequences that follow a list (issue 26): an email address unsubscribing from the client's sequence emails
-- takes the contact that has it out of every followed list that excludes the unsubscribed, so the contact is
-- marked for the list pass, as the writes of 1040 mark theirs.
CREATE FUNCTION sequence_list_mark_unsubscribes() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO sequence_list_marks (org_id, client_id, contact_id)
  SELECT DISTINCT ce.org_id, ce.client_id, ce.contact_id FROM changed u
  JOIN contact_emails ce ON ce.org_id = u.org_id AND ce.client_id = u.client_id AND ce.email = u.email
  WHERE EXISTS (SELECT 1 FROM sequences s WHERE s.org_id = u.org_id AND s.client_id = u.client_id
                  AND s.list_id IS NOT NULL AND s.status = 'active');
  RETURN NULL;
END $$;

CREATE TRIGGER sequence_email_unsubscribes_list_mark AFTER INSERT ON sequence_email_unsubscribes
  REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION sequence_list_mark_unsubscribes();
