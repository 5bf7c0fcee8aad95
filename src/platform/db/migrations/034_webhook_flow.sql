-- EXTENSIONS 9, webhook flow: one row per subscription that has flow settings
-- (a pause, a rate, the circuit breaker) or was told to back off (Retry-After).
-- No row is SPEC's behaviour exactly: the delivery engine's claims look for a
-- row only by primary key, so a subscription without one costs one index probe.
CREATE TABLE webhook_flows (
  webhook_id uuid PRIMARY KEY REFERENCES webhook_subscriptions(id) ON DELETE CASCADE,
  account_id uuid NOT NULL,
  paused boolean NOT NULL DEFAULT false,
  paused_at timestamptz,
  rate_per_second integer CHECK (rate_per_second BETWEEN 1 AND 1000),
  circuit_breaker boolean NOT NULL DEFAULT false,
  circuit_opened_at timestamptz,
  next_probe_at timestamptz,
  retry_after_until timestamptz,
  updated_at timestamptz NOT NULL DEFAULT now()
);
