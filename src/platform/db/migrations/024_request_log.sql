-- EXTENSIONS 7, the request log: one row per REST request or MCP tool call
-- made with a valid key (src/platform/request-log.ts). Written in batches,
-- outside the request's transaction; kept 30 days. It never holds a body, a
-- query value, a header value or a secret: only what the entry's fields name.
-- No foreign keys: a batch of entries costs one INSERT and nothing more.
CREATE TABLE request_logs (
  id uuid PRIMARY KEY,
  account_id uuid NOT NULL,
  key_id uuid NOT NULL,
  key_prefix text NOT NULL,
  at timestamptz(3) NOT NULL,
  transport text NOT NULL,
  operation text NOT NULL,
  method text NOT NULL,
  path text NOT NULL,
  status integer NOT NULL,
  error_code text,
  dry_run boolean NOT NULL,
  idempotency_key text,
  replayed boolean NOT NULL,
  duration_ms integer NOT NULL,
  resource_ids uuid[] NOT NULL,
  event_ids uuid[] NOT NULL
);
CREATE INDEX request_logs_key ON request_logs (key_id, at DESC, id DESC);
CREATE INDEX request_logs_account ON request_logs (account_id, at DESC, id DESC);
CREATE INDEX request_logs_age ON request_logs (at);
