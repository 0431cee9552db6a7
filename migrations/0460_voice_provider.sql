-- The voice provider's own records: which call ids it has placed (the idempotency of a dial, and the
-- simulator's timeline, so a re-placement re-queues the same reports), and the simulator's scripts.

CREATE TABLE voice_placements (
  call_id uuid PRIMARY KEY,
  provider text NOT NULL,
  -- Null while the provider has not answered yet (Retell: during create-phone-call).
  provider_call_id text UNIQUE,
  placed_at timestamptz NOT NULL DEFAULT now(),
  -- Simulator only: the reports the call plays, each with its delay from placed_at.
  timeline jsonb
);

-- What a simulated call to a number does; set through PUT /admin/v1/simulator/voice/numbers/{e164}.
CREATE TABLE voice_simulator_numbers (
  number text PRIMARY KEY CHECK (number ~ '^\+[1-9][0-9]{1,14}$'),
  outcome text NOT NULL CHECK (outcome IN ('answered', 'voicemail', 'no_answer', 'busy', 'failed', 'booked')),
  duration_seconds integer CHECK (duration_seconds BETWEEN 0 AND 86400),
  transcript jsonb,
  summary text,
  updated_at timestamptz NOT NULL DEFAULT now()
);
