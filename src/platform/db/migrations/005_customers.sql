-- Customers are aggregates of orders (SPEC). They are kept in a table that the
-- order transactions refresh, so listing them stays an index scan at any size
-- (docs/ARCHITECTURE.md says why this beats grouping orders on every read).

ALTER TABLE orders ADD COLUMN customer_key text
  GENERATED ALWAYS AS (coalesce(nullif(lower(btrim(customer_email)), ''), nullif(btrim(customer_phone), ''))) STORED;
CREATE INDEX orders_customer_key ON orders (account_id, customer_key);

CREATE TABLE customer_aggregates (
  account_id uuid NOT NULL REFERENCES accounts(id),
  key text NOT NULL,
  name text,
  email text,
  phone text,
  orders_count integer NOT NULL,
  total_spent numeric(14, 2) NOT NULL,
  first_order_at timestamptz(3) NOT NULL,
  last_order_at timestamptz(3) NOT NULL,
  PRIMARY KEY (account_id, key)
);
CREATE INDEX customer_aggregates_recent ON customer_aggregates (account_id, last_order_at DESC, key);
CREATE INDEX customer_aggregates_search ON customer_aggregates USING gin (
  (lower(coalesce(name, '') || chr(1) || coalesce(email, '') || chr(1) || coalesce(phone, ''))) gin_trgm_ops
);

CREATE TABLE segments (
  id uuid PRIMARY KEY,
  account_id uuid NOT NULL REFERENCES accounts(id),
  name text NOT NULL,
  filters jsonb NOT NULL,
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  updated_at timestamptz(3) NOT NULL DEFAULT now()
);
CREATE INDEX segments_account ON segments (account_id, created_at, id);

CREATE TABLE segment_members (
  account_id uuid NOT NULL REFERENCES accounts(id),
  segment_id uuid NOT NULL REFERENCES segments(id) ON DELETE CASCADE,
  customer_key text NOT NULL,
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  PRIMARY KEY (segment_id, customer_key)
);
CREATE INDEX segment_members_key ON segment_members (account_id, customer_key);

CREATE TABLE customer_notes (
  id uuid PRIMARY KEY,
  account_id uuid NOT NULL REFERENCES accounts(id),
  customer_key text NOT NULL,
  text text NOT NULL,
  created_at timestamptz(3) NOT NULL DEFAULT now()
);
CREATE INDEX customer_notes_key ON customer_notes (account_id, customer_key, created_at DESC);

CREATE INDEX abandoned_carts_email ON abandoned_carts (account_id, lower(email));
CREATE INDEX abandoned_carts_phone ON abandoned_carts (account_id, phone);
