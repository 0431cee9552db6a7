-- The marks of 1040 on contacts, their phones and their emails become row triggers that first probe
-- whether the client has a sequence following a list. As statement triggers each write built a
-- transition table and ran an INSERT … SELECT even in the (common) client that follows no list, the
-- shape that cost gist versions 28 % of contact-create throughput (issue 25; docs/performance.md).
-- List member adds keep their statement trigger: one statement adds up to 10,000 members.

DROP TRIGGER contacts_list_mark_insert ON contacts;
DROP TRIGGER contacts_list_mark_update ON contacts;
DROP TRIGGER contact_phones_list_mark_insert ON contact_phones;
DROP TRIGGER contact_phones_list_mark_update ON contact_phones;
DROP TRIGGER contact_phones_list_mark_delete ON contact_phones;
DROP TRIGGER contact_emails_list_mark_insert ON contact_emails;
DROP TRIGGER contact_emails_list_mark_update ON contact_emails;
DROP TRIGGER contact_emails_list_mark_delete ON contact_emails;
DROP FUNCTION sequence_list_mark_contacts();
DROP FUNCTION sequence_list_mark_channels();

CREATE FUNCTION sequence_list_mark_contact() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF EXISTS (SELECT 1 FROM sequences s WHERE s.org_id = NEW.org_id AND s.client_id = NEW.client_id
               AND s.list_id IS NOT NULL AND s.status = 'active') THEN
    INSERT INTO sequence_list_marks (org_id, client_id, contact_id) VALUES (NEW.org_id, NEW.client_id, NEW.id);
  END IF;
  RETURN NULL;
END $$;

-- A phone or email row: its contact is marked (both contacts when an update moves the row).
CREATE FUNCTION sequence_list_mark_channel() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  org uuid := coalesce(NEW.org_id, OLD.org_id);
  client uuid := coalesce(NEW.client_id, OLD.client_id);
BEGIN
  IF EXISTS (SELECT 1 FROM sequences s WHERE s.org_id = org AND s.client_id = client
               AND s.list_id IS NOT NULL AND s.status = 'active') THEN
    INSERT INTO sequence_list_marks (org_id, client_id, contact_id)
    SELECT DISTINCT org, client, contact_id
    FROM (VALUES (CASE WHEN TG_OP <> 'INSERT' THEN OLD.contact_id END),
                 (CASE WHEN TG_OP <> 'DELETE' THEN NEW.contact_id END)) AS written (contact_id)
    WHERE contact_id IS NOT NULL;
  END IF;
  RETURN NULL;
END $$;

CREATE TRIGGER contacts_list_mark AFTER INSERT OR UPDATE ON contacts
  FOR EACH ROW EXECUTE FUNCTION sequence_list_mark_contact();
CREATE TRIGGER contact_phones_list_mark AFTER INSERT OR UPDATE OR DELETE ON contact_phones
  FOR EACH ROW EXECUTE FUNCTION sequence_list_mark_channel();
CREATE TRIGGER contact_emails_list_mark AFTER INSERT OR UPDATE OR DELETE ON contact_emails
  FOR EACH ROW EXECUTE FUNCTION sequence_list_mark_channel();
