-- Phone numbers an org sends from and receives on; each belongs to one client of the org.

CREATE TABLE phone_numbers (
  id uuid PRIMARY KEY,
  org_id uuid NOT NULL REFERENCES orgs (id),
  client_id uuid NOT NULL,
  number text NOT NULL,
  label text,
  created_at timestamptz NOT NULL DEFAULT now(),
  FOREIGN KEY (org_id, client_id) REFERENCES clients (org_id, id),
  -- One holder across all orgs: inbound messages are routed by this number alone.
  CONSTRAINT phone_numbers_number_key UNIQUE (number)
);

-- A client's numbers in the order the sender rule picks them (oldest first; ids are UUIDv7).
CREATE INDEX phone_numbers_tenant ON phone_numbers (org_id, client_id, id);
