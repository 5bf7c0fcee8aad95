-- EXTENSIONS 7, approvals: a key issued with writes 'approval' does not
-- perform a write; it asks a person first (src/platform/approvals.ts).
ALTER TABLE api_keys ADD COLUMN writes text NOT NULL DEFAULT 'direct' CHECK (writes IN ('direct', 'approval'));

CREATE TABLE approvals (
  id uuid PRIMARY KEY,
  account_id uuid NOT NULL REFERENCES accounts(id),
  key_id uuid NOT NULL REFERENCES api_keys(id),
  -- pending, approved, rejected, executed; 'expired' is read off expires_at (never stored).
  status text NOT NULL CHECK (status IN ('pending', 'approved', 'rejected', 'executed')),
  operation text NOT NULL,
  -- Path parameters and body as given, as one object; compared by meaning (canonical JSON).
  arguments jsonb NOT NULL,
  arguments_canonical text NOT NULL,
  preview jsonb,
  effects jsonb NOT NULL,
  resource_etag text,
  -- The Idempotency-Key of the request that asked: the same key asking again gets this approval.
  idempotency_key text,
  requested_at timestamptz(3) NOT NULL DEFAULT now(),
  expires_at timestamptz(3) NOT NULL,
  decided_at timestamptz(3),
  decided_by text,
  reason text,
  executed_at timestamptz(3),
  result_status integer
);
CREATE INDEX approvals_account ON approvals (account_id, status, requested_at DESC, id DESC);
CREATE UNIQUE INDEX approvals_idempotency ON approvals (account_id, idempotency_key) WHERE idempotency_key IS NOT NULL;
