-- Webhook operations (EXTENSIONS 6): every attempt of every delivery, the
-- recoveries of a window, and the resource version each order/shipment
-- delivery carries.

-- The attempt log. No foreign key to the delivery: attempts are recorded in
-- batches beside the delivery rows (deliveries.ts), and a delivery deleted
-- meanwhile (its subscription deleted) must not fail the batch; deleting a
-- subscription deletes its attempts (subscriptions.ts), as it does its deliveries.
-- Size per row is bounded: request headers are the service's own (~10 headers),
-- response headers at most 20 values of 200 characters, the body 1000 characters.
CREATE TABLE webhook_attempts (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  account_id uuid NOT NULL,
  webhook_id uuid NOT NULL,
  delivery_id uuid NOT NULL,
  trigger text NOT NULL CHECK (trigger IN ('automatic', 'retry', 'recovery', 'test')),
  started_at timestamptz(3) NOT NULL,
  duration_ms integer NOT NULL,
  url text NOT NULL,
  request_headers jsonb NOT NULL,
  response_status integer,
  response_headers jsonb,
  response_body text,
  error text,
  -- The health outcome key: the status code as text, or timeout, connection_error, tls_error, dns_error, policy_refused, not_sent.
  outcome text NOT NULL
);
CREATE INDEX webhook_attempts_delivery ON webhook_attempts (delivery_id, started_at, id);
CREATE INDEX webhook_attempts_health ON webhook_attempts (webhook_id, started_at);

-- Recoveries: a background job per row, leased by one instance at a time.
CREATE TABLE webhook_recoveries (
  id uuid PRIMARY KEY,
  account_id uuid NOT NULL REFERENCES accounts(id),
  webhook_id uuid NOT NULL REFERENCES webhook_subscriptions(id) ON DELETE CASCADE,
  state text NOT NULL DEFAULT 'running' CHECK (state IN ('running', 'done', 'cancelled', 'stopped')),
  since timestamptz(3) NOT NULL,
  until timestamptz(3) NOT NULL,
  statuses text[] NOT NULL,
  matched integer NOT NULL,
  attempted integer NOT NULL DEFAULT 0,
  delivered integer NOT NULL DEFAULT 0,
  failed integer NOT NULL DEFAULT 0,
  failures_in_a_row integer NOT NULL DEFAULT 0,
  -- The last delivery taken, in (created_at, id) order: each is taken once.
  position_created_at timestamptz(3),
  position_id uuid,
  -- When the last attempt started: the next starts no sooner than 100 ms later, whichever instance makes it.
  last_start_at timestamptz(3),
  lease_owner text,
  lease_until timestamptz(3),
  started_at timestamptz(3) NOT NULL DEFAULT now(),
  finished_at timestamptz(3)
);
CREATE UNIQUE INDEX webhook_recoveries_one_running ON webhook_recoveries (webhook_id) WHERE state = 'running';
CREATE INDEX webhook_recoveries_lease ON webhook_recoveries (lease_until) WHERE state = 'running';

-- X-Merx-Resource-Version: drawn from one sequence when the fan-out writes an
-- event's deliveries, in the event's transaction. Every event about an order or
-- a shipment is emitted after its transaction wrote (and so locked) that row, so
-- a later change of the resource, which waits for that lock, draws a greater
-- value: per resource the versions grow with every change (and differ between
-- two events of one transaction, in the order they were emitted).
CREATE SEQUENCE webhook_resource_versions;
ALTER TABLE webhook_deliveries ADD COLUMN resource_version bigint;
