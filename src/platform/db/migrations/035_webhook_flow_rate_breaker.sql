-- EXTENSIONS 9, webhook flow: the rate and the circuit breaker, on the
-- subscription's flow row (migration 034), which every instance locks
-- (FOR UPDATE) before it lets an attempt of the subscription start.

-- The rate: the starts of the last window (the database's clock, oldest
-- first; at most rate_per_second of them count), and when the next start is
-- allowed (null: now), which wakes the workers (webhooks/flow-gate.ts).
ALTER TABLE webhook_flows ADD COLUMN rate_starts timestamptz[] NOT NULL DEFAULT '{}';
ALTER TABLE webhook_flows ADD COLUMN rate_free_at timestamptz;

-- The circuit breaker: failed attempts in a row (any trigger; a success
-- resets it), and the wait after the next probe (60 s doubling to 900 s;
-- null while the circuit is closed).
ALTER TABLE webhook_flows ADD COLUMN failures_in_a_row integer NOT NULL DEFAULT 0;
ALTER TABLE webhook_flows ADD COLUMN probe_interval_sec integer;
