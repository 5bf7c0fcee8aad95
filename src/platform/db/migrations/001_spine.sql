-- The spine: accounts, keys, storefront pages, products, orders, shipments,
-- the events outbox and outbound messages. Every table keys on account_id
-- first so the data shards by account (DESIGN "Growing past one machine").

CREATE EXTENSION IF NOT EXISTS pg_trgm;

CREATE TABLE settings (
  key text PRIMARY KEY,
  value text NOT NULL
);

CREATE TABLE accounts (
  id uuid PRIMARY KEY,
  name text NOT NULL,
  email text NOT NULL,
  plan text NOT NULL DEFAULT 'pro' CHECK (plan IN ('free', 'pro', 'business')),
  active boolean NOT NULL DEFAULT true,
  default_threshold integer NOT NULL DEFAULT 5 CHECK (default_threshold >= 0),
  default_parcel_weight_g integer NOT NULL DEFAULT 1000,
  notification_settings jsonb NOT NULL DEFAULT '{"email_on_shipped": true, "sms_on_shipped": false}',
  next_order_number integer NOT NULL DEFAULT 1,
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  updated_at timestamptz(3) NOT NULL DEFAULT now()
);

CREATE TABLE api_keys (
  id uuid PRIMARY KEY,
  account_id uuid NOT NULL REFERENCES accounts(id),
  name text NOT NULL,
  prefix text NOT NULL,
  key_hash text NOT NULL UNIQUE,
  scopes text[] NOT NULL,
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  last_used_at timestamptz(3),
  revoked_at timestamptz(3)
);
CREATE INDEX api_keys_account ON api_keys (account_id, created_at);

CREATE TABLE pages (
  id uuid PRIMARY KEY,
  account_id uuid NOT NULL REFERENCES accounts(id),
  title text NOT NULL,
  product_ids uuid[] NOT NULL DEFAULT '{}',
  created_at timestamptz(3) NOT NULL DEFAULT now()
);
CREATE INDEX pages_account_products ON pages USING gin (product_ids);
CREATE INDEX pages_account ON pages (account_id, created_at);

CREATE TABLE products (
  id uuid PRIMARY KEY,
  account_id uuid NOT NULL REFERENCES accounts(id),
  name text NOT NULL,
  marketing_name text,
  sku text,
  price numeric(12, 2) NOT NULL DEFAULT 0,
  original_price numeric(12, 2),
  active boolean NOT NULL DEFAULT true,
  delivery_type text NOT NULL DEFAULT 'physical',
  offer_type text,
  description text,
  images text[] NOT NULL DEFAULT '{}',
  stock_quantity integer,
  block_on_zero_stock boolean NOT NULL DEFAULT false,
  low_stock_threshold integer,
  weight_g integer,
  dim_cm jsonb,
  shipping_short_name text,
  shipping_category text,
  catalog_hidden boolean NOT NULL DEFAULT false,
  language text,
  avg_cost numeric(14, 4),
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  updated_at timestamptz(3) NOT NULL DEFAULT now()
);
CREATE INDEX products_account_created ON products (account_id, created_at DESC, id DESC);

CREATE TABLE product_variants (
  id uuid PRIMARY KEY,
  account_id uuid NOT NULL REFERENCES accounts(id),
  product_id uuid NOT NULL REFERENCES products(id),
  type text,
  name text,
  value text,
  price_delta numeric(12, 2),
  stock_quantity integer,
  image_url text,
  position integer
);
CREATE INDEX product_variants_product ON product_variants (account_id, product_id, position);

CREATE SEQUENCE order_number_seq;

CREATE TABLE orders (
  id uuid PRIMARY KEY,
  account_id uuid NOT NULL REFERENCES accounts(id),
  number integer,
  order_number bigint,
  status text NOT NULL DEFAULT 'new',
  payment_status text,
  payment_method text,
  funnel_step text,
  parent_order_id uuid,
  total numeric(12, 2),
  delivery_price numeric(12, 2),
  discount_amount numeric(12, 2),
  coupon_code text,
  refund_amount_cents integer,
  refunded_at timestamptz(3),
  customer_name text,
  customer_email text,
  customer_phone text,
  customer_vat text,
  shipping_address text,
  shipping_city text,
  shipping_zip text,
  shipping_method text,
  courier_slug text,
  courier_delivery_mode text,
  -- string or integer in the contract: jsonb keeps which one it was.
  courier_office_id jsonb,
  courier text,
  tracking_number text,
  tracking_url text,
  line_items jsonb,
  product_name text,
  product_sku text,
  quantity integer,
  unit_price numeric(12, 2),
  notes text,
  admin_notes text,
  return_note text,
  page_id uuid,
  invoice_number jsonb,
  -- Never shown in any view (SPEC "What the service does" 8).
  attribution jsonb,
  ip_address text,
  payment_provider_id text,
  cost_total numeric(12, 2),
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  updated_at timestamptz(3) NOT NULL DEFAULT now()
);
-- Keyset paging newest first, one index per list filter (bench/RESULTS.md shows the plans).
CREATE INDEX orders_account_created ON orders (account_id, created_at DESC, id DESC);
CREATE INDEX orders_account_status ON orders (account_id, status, created_at DESC, id DESC);
CREATE INDEX orders_account_payment ON orders (account_id, payment_status, created_at DESC, id DESC);
CREATE INDEX orders_account_updated ON orders (account_id, updated_at);
CREATE INDEX orders_account_page ON orders (account_id, page_id, created_at DESC, id DESC);
CREATE INDEX orders_account_courier ON orders (account_id, courier, created_at DESC, id DESC);
CREATE INDEX orders_account_untracked ON orders (account_id, created_at DESC, id DESC) WHERE tracking_number IS NULL;
CREATE INDEX orders_line_items ON orders USING gin (line_items jsonb_path_ops);
-- q: case-insensitive substring over name, phone, email and tracking number.
CREATE INDEX orders_search ON orders USING gin (
  (lower(coalesce(customer_name, '') || chr(1) || coalesce(customer_phone, '') || chr(1) ||
         coalesce(customer_email, '') || chr(1) || coalesce(tracking_number, ''))) gin_trgm_ops
);

CREATE TABLE shipments (
  id uuid PRIMARY KEY,
  account_id uuid NOT NULL REFERENCES accounts(id),
  order_id uuid NOT NULL REFERENCES orders(id),
  courier_slug text,
  tracking_number text,
  status text NOT NULL DEFAULT 'pending',
  last_status_label text,
  last_status_at timestamptz(3),
  status_events jsonb NOT NULL DEFAULT '[]',
  delivery_mode text,
  office_id jsonb,
  recipient_address jsonb,
  cod_amount numeric(12, 2),
  shipping_cost numeric(12, 2),
  parcel_weight_g integer,
  parcel_dim_cm jsonb,
  sender_origin jsonb,
  shipment_terms jsonb,
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  updated_at timestamptz(3) NOT NULL DEFAULT now()
);
CREATE INDEX shipments_order ON shipments (account_id, order_id, created_at DESC, id DESC);
CREATE INDEX shipments_status ON shipments (account_id, status, order_id);

-- The transactional outbox (DESIGN "Transactional outbox"): written in the
-- same transaction as the change it describes; delivery reads from it.
CREATE TABLE events (
  id uuid PRIMARY KEY,
  -- The order events were written in: several events of one transaction share its created_at.
  seq bigint GENERATED ALWAYS AS IDENTITY,
  account_id uuid NOT NULL REFERENCES accounts(id),
  event text NOT NULL,
  api_version text NOT NULL,
  -- json, not jsonb: the envelope keeps the field order of the views it carries.
  data json NOT NULL,
  created_at timestamptz(3) NOT NULL DEFAULT now()
);
CREATE INDEX events_account_created ON events (account_id, created_at DESC, id DESC);

CREATE TABLE outbound_messages (
  id uuid PRIMARY KEY,
  account_id uuid NOT NULL REFERENCES accounts(id),
  channel text NOT NULL CHECK (channel IN ('email', 'sms')),
  recipient text NOT NULL,
  subject text,
  body text NOT NULL,
  kind text NOT NULL,
  sent_via text NOT NULL DEFAULT 'outbox',
  created_at timestamptz(3) NOT NULL DEFAULT now()
);
CREATE INDEX outbound_messages_account ON outbound_messages (account_id, created_at DESC, id DESC);

CREATE TABLE contacts (
  id uuid PRIMARY KEY,
  account_id uuid NOT NULL REFERENCES accounts(id),
  name text,
  email text,
  phone text,
  created_at timestamptz(3) NOT NULL DEFAULT now()
);
CREATE INDEX contacts_account ON contacts (account_id, created_at);

CREATE TABLE abandoned_carts (
  id uuid PRIMARY KEY,
  account_id uuid NOT NULL REFERENCES accounts(id),
  email text,
  phone text,
  created_at timestamptz(3) NOT NULL DEFAULT now()
);
CREATE INDEX abandoned_carts_account ON abandoned_carts (account_id, created_at);
