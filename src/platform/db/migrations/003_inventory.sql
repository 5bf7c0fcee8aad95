-- The stock movement ledger: every change of a product's (or variant's) stock
-- is a row here, written in the same transaction as the change.

CREATE TABLE stock_movements (
  id uuid PRIMARY KEY,
  account_id uuid NOT NULL REFERENCES accounts(id),
  product_id uuid NOT NULL REFERENCES products(id),
  variant_id uuid REFERENCES product_variants(id),
  order_id uuid REFERENCES orders(id),
  type text NOT NULL CHECK (type IN ('sale', 'release', 'return', 'delivery', 'correction')),
  qty integer NOT NULL,
  unit_cost numeric(14, 4),
  note text,
  created_at timestamptz(3) NOT NULL DEFAULT now()
);
CREATE INDEX stock_movements_account ON stock_movements (account_id, created_at DESC, id DESC);
CREATE INDEX stock_movements_product ON stock_movements (account_id, product_id, created_at DESC, id DESC);
CREATE INDEX stock_movements_order ON stock_movements (account_id, order_id) WHERE order_id IS NOT NULL;
-- An order sells once and gives its stock back at most once (GAPS Inventory).
CREATE UNIQUE INDEX stock_movements_order_effect ON stock_movements (order_id, product_id, coalesce(variant_id, product_id),
  (CASE WHEN type = 'sale' THEN 'sale' ELSE 'restock' END)) WHERE order_id IS NOT NULL;

-- inventory.low_stock fires once per product per UTC day, whichever instance runs the job.
CREATE TABLE low_stock_alerts (
  account_id uuid NOT NULL REFERENCES accounts(id),
  product_id uuid NOT NULL REFERENCES products(id),
  day date NOT NULL,
  event_id uuid NOT NULL,
  PRIMARY KEY (account_id, product_id, day)
);
