-- Idempotency keys (EXTENSIONS 2): one row per (account, key), shared by REST
-- and MCP. While the first request runs, `owner` is its fencing token and
-- `locked_until` its lease (renewed while it runs); every transaction the
-- request commits also sets `effect_committed` under that token, so a request
-- whose lease was taken over cannot commit anything.
CREATE TABLE idempotency_keys (
  account_id uuid NOT NULL REFERENCES accounts(id),
  key text NOT NULL,
  fingerprint text NOT NULL,
  owner uuid,
  locked_until timestamptz(3),
  effect_committed boolean NOT NULL DEFAULT false,
  -- The stored answer, once the first request finished.
  response_status integer,
  response_headers jsonb,
  response_body text,
  -- Which transport produced the body: 'rest' (bytes as sent) or 'mcp' (the result's JSON text).
  response_origin text,
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  expires_at timestamptz(3) NOT NULL,
  PRIMARY KEY (account_id, key)
);
CREATE INDEX idempotency_keys_expiry ON idempotency_keys (expires_at);
