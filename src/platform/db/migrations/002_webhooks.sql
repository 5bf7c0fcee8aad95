-- Webhook subscriptions, their deliveries (fed by the events outbox) and the debug sink's captures.

CREATE TABLE webhook_subscriptions (
  id uuid PRIMARY KEY,
  account_id uuid NOT NULL REFERENCES accounts(id),
  url text NOT NULL,
  description text,
  events text[] NOT NULL,
  active boolean NOT NULL DEFAULT true,
  -- The HMAC key must be usable, so it is stored as issued (as Stripe does); never shown after creation.
  secret text NOT NULL,
  last_triggered_at timestamptz(3),
  last_status_code integer,
  dead_notified_at timestamptz(3),
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  updated_at timestamptz(3) NOT NULL DEFAULT now()
);
CREATE INDEX webhook_subscriptions_account ON webhook_subscriptions (account_id, created_at, id);
CREATE INDEX webhook_subscriptions_events ON webhook_subscriptions USING gin (events) WHERE active;

CREATE TABLE webhook_deliveries (
  id uuid PRIMARY KEY,
  account_id uuid NOT NULL REFERENCES accounts(id),
  webhook_id uuid NOT NULL REFERENCES webhook_subscriptions(id) ON DELETE CASCADE,
  event_id uuid NOT NULL REFERENCES events(id),
  event text NOT NULL,
  status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'failed', 'dead')),
  attempt integer NOT NULL DEFAULT 0,
  -- While pending: when the next attempt is due. While an attempt runs it holds a lease (see deliveries.ts).
  next_attempt_at timestamptz(3) NOT NULL,
  last_status_code integer,
  last_error text,
  response_body text,
  delivered_at timestamptz(3),
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  updated_at timestamptz(3) NOT NULL DEFAULT now(),
  UNIQUE (webhook_id, event_id)
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_list ON webhook_deliveries (account_id, webhook_id, created_at DESC, id DESC);

CREATE TABLE webhook_sink_captures (
  id uuid PRIMARY KEY,
  account_id uuid NOT NULL REFERENCES accounts(id),
  webhook_id uuid NOT NULL REFERENCES webhook_subscriptions(id) ON DELETE CASCADE,
  headers jsonb NOT NULL,
  body text NOT NULL,
  received_at timestamptz(3) NOT NULL DEFAULT now()
);
CREATE INDEX webhook_sink_captures_webhook ON webhook_sink_captures (webhook_id, received_at DESC, id DESC);
