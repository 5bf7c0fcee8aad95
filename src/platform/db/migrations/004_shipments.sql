-- Courier integrations per account, and waybills the courier issued that we
-- could not record (kept for reconciliation instead of silently lost).

CREATE TABLE courier_integrations (
  account_id uuid NOT NULL REFERENCES accounts(id),
  slug text NOT NULL CHECK (slug IN ('courier_a', 'courier_b', 'courier_c')),
  enabled boolean NOT NULL DEFAULT false,
  credentials jsonb NOT NULL DEFAULT '{}',
  sender_origin jsonb,
  shipment_terms jsonb,
  -- The token a pushing courier presents when it reports statuses for this integration.
  push_token text NOT NULL UNIQUE,
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  updated_at timestamptz(3) NOT NULL DEFAULT now(),
  PRIMARY KEY (account_id, slug)
);

ALTER TABLE shipments ADD COLUMN content_label text;
CREATE INDEX shipments_tracking ON shipments (account_id, courier_slug, tracking_number);
CREATE INDEX shipments_live ON shipments (courier_slug, status) WHERE status IN ('pending', 'picked_up', 'in_transit');

CREATE TABLE courier_orphans (
  id uuid PRIMARY KEY,
  account_id uuid NOT NULL REFERENCES accounts(id),
  courier_slug text NOT NULL,
  tracking_number text NOT NULL,
  order_id uuid,
  reason text NOT NULL,
  resolved boolean NOT NULL DEFAULT false,
  created_at timestamptz(3) NOT NULL DEFAULT now()
);
