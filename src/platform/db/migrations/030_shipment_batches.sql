-- EXTENSIONS 8: shipment batches, durable work shared by every instance.
-- A batch remembers the key it was created with (items run as that key, its
-- writes direct: a batch under an approval key was approved once, as a whole).
-- An item is claimed with a token and a lease (claim_token, lease_until); its
-- outcome is written only under the token it was claimed with, and a success
-- in the very transaction that creates the shipment, so an item whose claim
-- was taken over (an instance died, a lease ran out) never commits twice.
CREATE TABLE shipment_batches (
  id uuid PRIMARY KEY,
  account_id uuid NOT NULL REFERENCES accounts(id),
  -- The key the batch was created with (the console's operator runs as "operator").
  key_id text NOT NULL,
  key_prefix text NOT NULL,
  scopes text[] NOT NULL,
  -- Whom the items' events are attributed to, as the creating call's were: null (a key: "api") or 'merchant' (the console).
  source text CHECK (source = 'merchant'),
  state text NOT NULL DEFAULT 'running' CHECK (state IN ('running', 'done', 'cancelled')),
  total integer NOT NULL CHECK (total BETWEEN 1 AND 1000),
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  finished_at timestamptz(3)
);
CREATE INDEX shipment_batches_running ON shipment_batches (account_id) WHERE state = 'running';
CREATE INDEX shipment_batches_unfinished ON shipment_batches (created_at) WHERE finished_at IS NULL;

CREATE TABLE shipment_batch_items (
  batch_id uuid NOT NULL REFERENCES shipment_batches(id) ON DELETE CASCADE,
  idx integer NOT NULL,
  order_id uuid NOT NULL,
  body jsonb NOT NULL,
  -- pending: not started; running: claimed (in flight); succeeded / failed: done.
  status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'running', 'succeeded', 'failed')),
  -- The courier whose call limit the item counts under while running (resolved when claimed).
  courier text,
  claim_token uuid,
  lease_until timestamptz(3),
  started_at timestamptz(3),
  runs integer NOT NULL DEFAULT 0,
  shipment_id uuid,
  error jsonb,
  finished_at timestamptz(3),
  PRIMARY KEY (batch_id, idx)
);
CREATE INDEX shipment_batch_items_open ON shipment_batch_items (batch_id, idx) WHERE status IN ('pending', 'running');
