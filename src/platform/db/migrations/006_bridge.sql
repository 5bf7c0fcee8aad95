-- Bridge briefs (MCP only) and the raw activity behind get_facts.

CREATE TABLE briefs (
  id uuid PRIMARY KEY,
  account_id uuid NOT NULL REFERENCES accounts(id),
  kind text NOT NULL CHECK (kind IN ('PAGE', 'AUTOMATION', 'CAMPAIGN', 'SEGMENT')),
  title text NOT NULL,
  brief text NOT NULL,
  operation text NOT NULL,
  step text NOT NULL,
  run text NOT NULL,
  status text NOT NULL DEFAULT 'RECEIVED',
  reason text,
  fail_code text,
  asset_id uuid,
  public_url text,
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  updated_at timestamptz(3) NOT NULL DEFAULT now(),
  -- GAPS: submit_brief is idempotent per (business_id, operation, step, run).
  UNIQUE (account_id, operation, step, run)
);
CREATE INDEX briefs_asset ON briefs (account_id, asset_id) WHERE asset_id IS NOT NULL;

CREATE TABLE asset_activity (
  id uuid PRIMARY KEY,
  account_id uuid NOT NULL REFERENCES accounts(id),
  asset_id uuid NOT NULL,
  kind text NOT NULL CHECK (kind IN ('page_visit', 'registration', 'attendance')),
  count integer NOT NULL CHECK (count > 0),
  at timestamptz(3) NOT NULL DEFAULT now()
);
CREATE INDEX asset_activity_asset ON asset_activity (account_id, asset_id, kind, at);
