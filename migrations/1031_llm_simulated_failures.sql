-- The builtin model's failure switch (`POST /admin/v1/simulator/llm/failures`): the next `remaining`
-- model calls fail as an unavailable model would, whichever process makes them. One row.

CREATE TABLE llm_simulated_failures (
  singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
  remaining integer NOT NULL CHECK (remaining >= 0)
);

COMMENT ON TABLE llm_simulated_failures IS 'local: the builtin model''s simulated failures; simulator only';
