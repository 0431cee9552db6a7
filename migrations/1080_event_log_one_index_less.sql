-- Every event pays an entry in each index of event_log (issue 25: an event costs one append).
-- event_log_org (org_id, id DESC) repeats the primary key (org_id, id): a B-tree is read backwards as
-- cheaply as forwards, so `GET /v1/events` of an agency key (org_id = $1 ORDER BY id DESC) walks the
-- primary key instead. Four indexes are left: the key, the client's and the type's listings, and seq
-- for the relay.
DROP INDEX event_log_org;
