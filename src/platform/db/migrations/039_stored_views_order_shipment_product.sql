-- The upkeep of the stored views order, shipment, product, generated from their declarations
-- by `npm run views:migration` (src/platform/read-path/view-migrations.ts). Do not edit: change the declaration and
-- generate a new migration. Each view rewrites its rows after the instances listen (view-upkeep.ts).

-- merx:view order begin
ALTER TABLE orders ADD COLUMN IF NOT EXISTS view_json text, ADD COLUMN IF NOT EXISTS view_etag text, ADD COLUMN IF NOT EXISTS view_version text;
CREATE OR REPLACE FUNCTION merx_view_order() RETURNS trigger LANGUAGE plpgsql AS $view$
BEGIN
  NEW.view_json := (SELECT (SELECT row_to_json(json_view_row) FROM (SELECT o.id AS "id", o.number AS "number", o.order_number AS "order_number", o.status AS "status", o.payment_status AS "payment_status", o.payment_method AS "payment_method", o.funnel_step AS "funnel_step", o.parent_order_id AS "parent_order_id", (o.total)::float8 AS "total", (o.delivery_price)::float8 AS "delivery_price", (o.discount_amount)::float8 AS "discount_amount", o.coupon_code AS "coupon_code", o.refund_amount_cents AS "refund_amount_cents", to_char((o.refunded_at) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24":"MI":"SS.MS"Z"') AS "refunded_at", (SELECT row_to_json(json_view_row) FROM (SELECT o.customer_name AS "name", o.customer_email AS "email", o.customer_phone AS "phone", o.customer_vat AS "vat") json_view_row) AS "customer", (SELECT row_to_json(json_view_row) FROM (SELECT o.shipping_address AS "address", o.shipping_city AS "city", o.shipping_zip AS "zip", o.shipping_method AS "method", o.courier_slug AS "courier_slug", o.courier_delivery_mode AS "courier_delivery_mode", o.courier_office_id AS "courier_office_id") json_view_row) AS "shipping", o.courier AS "courier", o.tracking_number AS "tracking_number", o.tracking_url AS "tracking_url", merx_compact_json(o.line_items) AS "line_items", o.product_name AS "product_name", o.product_sku AS "product_sku", o.quantity AS "quantity", (o.unit_price)::float8 AS "unit_price", o.notes AS "notes", o.admin_notes AS "admin_notes", o.return_note AS "return_note", o.page_id AS "page_id", o.invoice_number AS "invoice_number", CASE WHEN s.id IS NULL THEN NULL ELSE (SELECT row_to_json(json_view_row) FROM (SELECT s.id AS "id", s.courier_slug AS "courier_slug", s.tracking_number AS "tracking_number", s.status AS "status", s.last_status_label AS "last_status_label", to_char((s.last_status_at) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24":"MI":"SS.MS"Z"') AS "last_status_at") json_view_row) END AS "shipment", to_char((o.created_at) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24":"MI":"SS.MS"Z"') AS "created_at", to_char((o.updated_at) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24":"MI":"SS.MS"Z"') AS "updated_at") json_view_row)::text FROM (SELECT NEW.*) o LEFT JOIN LATERAL (
    SELECT id, courier_slug, tracking_number, status, last_status_label, last_status_at FROM shipments
     WHERE account_id = o.account_id AND order_id = o.id ORDER BY created_at DESC, id DESC LIMIT 1
  ) s ON true);
  NEW.view_etag := merx_view_etag(NEW.view_json);
  NEW.view_version := 'f65c07600e7a2263';
  RETURN NEW;
END
$view$;
DROP TRIGGER IF EXISTS merx_view_order ON orders;
CREATE TRIGGER merx_view_order BEFORE INSERT OR UPDATE ON orders FOR EACH ROW EXECUTE FUNCTION merx_view_order();
CREATE OR REPLACE FUNCTION merx_view_order_built(row_id uuid) RETURNS text LANGUAGE plpgsql STABLE PARALLEL SAFE AS $view$
BEGIN
  RETURN (SELECT (SELECT row_to_json(json_view_row) FROM (SELECT o.id AS "id", o.number AS "number", o.order_number AS "order_number", o.status AS "status", o.payment_status AS "payment_status", o.payment_method AS "payment_method", o.funnel_step AS "funnel_step", o.parent_order_id AS "parent_order_id", (o.total)::float8 AS "total", (o.delivery_price)::float8 AS "delivery_price", (o.discount_amount)::float8 AS "discount_amount", o.coupon_code AS "coupon_code", o.refund_amount_cents AS "refund_amount_cents", to_char((o.refunded_at) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24":"MI":"SS.MS"Z"') AS "refunded_at", (SELECT row_to_json(json_view_row) FROM (SELECT o.customer_name AS "name", o.customer_email AS "email", o.customer_phone AS "phone", o.customer_vat AS "vat") json_view_row) AS "customer", (SELECT row_to_json(json_view_row) FROM (SELECT o.shipping_address AS "address", o.shipping_city AS "city", o.shipping_zip AS "zip", o.shipping_method AS "method", o.courier_slug AS "courier_slug", o.courier_delivery_mode AS "courier_delivery_mode", o.courier_office_id AS "courier_office_id") json_view_row) AS "shipping", o.courier AS "courier", o.tracking_number AS "tracking_number", o.tracking_url AS "tracking_url", merx_compact_json(o.line_items) AS "line_items", o.product_name AS "product_name", o.product_sku AS "product_sku", o.quantity AS "quantity", (o.unit_price)::float8 AS "unit_price", o.notes AS "notes", o.admin_notes AS "admin_notes", o.return_note AS "return_note", o.page_id AS "page_id", o.invoice_number AS "invoice_number", CASE WHEN s.id IS NULL THEN NULL ELSE (SELECT row_to_json(json_view_row) FROM (SELECT s.id AS "id", s.courier_slug AS "courier_slug", s.tracking_number AS "tracking_number", s.status AS "status", s.last_status_label AS "last_status_label", to_char((s.last_status_at) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24":"MI":"SS.MS"Z"') AS "last_status_at") json_view_row) END AS "shipment", to_char((o.created_at) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24":"MI":"SS.MS"Z"') AS "created_at", to_char((o.updated_at) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24":"MI":"SS.MS"Z"') AS "updated_at") json_view_row)::text FROM orders o LEFT JOIN LATERAL (
    SELECT id, courier_slug, tracking_number, status, last_status_label, last_status_at FROM shipments
     WHERE account_id = o.account_id AND order_id = o.id ORDER BY created_at DESC, id DESC LIMIT 1
  ) s ON true WHERE o.id = row_id);
END
$view$;
CREATE OR REPLACE FUNCTION merx_view_order_from_shipments() RETURNS trigger LANGUAGE plpgsql AS $view$
BEGIN
  IF TG_OP <> 'INSERT' THEN
    UPDATE orders SET view_json = NULL WHERE account_id = OLD.account_id AND id = OLD.order_id;
  END IF;
  IF TG_OP = 'INSERT' OR (TG_OP = 'UPDATE' AND (NEW.account_id, NEW.order_id) IS DISTINCT FROM (OLD.account_id, OLD.order_id)) THEN
    UPDATE orders SET view_json = NULL WHERE account_id = NEW.account_id AND id = NEW.order_id;
  END IF;
  RETURN NULL;
END
$view$;
DROP TRIGGER IF EXISTS merx_view_order_from_shipments ON shipments;
CREATE TRIGGER merx_view_order_from_shipments AFTER INSERT OR DELETE OR UPDATE OF account_id, order_id, id, courier_slug, tracking_number, status, last_status_label, last_status_at, created_at
        ON shipments FOR EACH ROW EXECUTE FUNCTION merx_view_order_from_shipments();
INSERT INTO stored_views (name, definition_sha256, backfilled) VALUES ('order', 'f65c07600e7a2263', NOT EXISTS (SELECT FROM orders))
  ON CONFLICT (name) DO UPDATE SET definition_sha256 = EXCLUDED.definition_sha256, backfilled_through = NULL, backfilled = EXCLUDED.backfilled, updated_at = now()
  WHERE stored_views.definition_sha256 IS DISTINCT FROM EXCLUDED.definition_sha256;
-- merx:view order end
-- merx:view shipment begin
ALTER TABLE shipments ADD COLUMN IF NOT EXISTS view_json text, ADD COLUMN IF NOT EXISTS view_etag text, ADD COLUMN IF NOT EXISTS view_version text;
CREATE OR REPLACE FUNCTION merx_view_shipment() RETURNS trigger LANGUAGE plpgsql AS $view$
BEGIN
  NEW.view_json := (SELECT (SELECT row_to_json(json_view_row) FROM (SELECT s.id AS "id", s.order_id AS "order_id", s.courier_slug AS "courier_slug", s.tracking_number AS "tracking_number", s.status AS "status", s.last_status_label AS "last_status_label", to_char((s.last_status_at) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24":"MI":"SS.MS"Z"') AS "last_status_at", merx_compact_json(s.status_events) AS "status_events", s.delivery_mode AS "delivery_mode", s.office_id AS "office_id", merx_compact_json(s.recipient_address) AS "recipient_address", (s.cod_amount)::float8 AS "cod_amount", (s.shipping_cost)::float8 AS "shipping_cost", s.parcel_weight_g AS "parcel_weight_g", merx_compact_json(s.parcel_dim_cm) AS "parcel_dim_cm", merx_compact_json(s.sender_origin) AS "sender_origin", merx_compact_json(s.shipment_terms) AS "shipment_terms", to_char((s.created_at) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24":"MI":"SS.MS"Z"') AS "created_at", to_char((s.updated_at) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24":"MI":"SS.MS"Z"') AS "updated_at") json_view_row)::text FROM (SELECT NEW.*) s );
  NEW.view_etag := merx_view_etag(NEW.view_json);
  NEW.view_version := 'c301c69dd2670a58';
  RETURN NEW;
END
$view$;
DROP TRIGGER IF EXISTS merx_view_shipment ON shipments;
CREATE TRIGGER merx_view_shipment BEFORE INSERT OR UPDATE ON shipments FOR EACH ROW EXECUTE FUNCTION merx_view_shipment();
CREATE OR REPLACE FUNCTION merx_view_shipment_built(row_id uuid) RETURNS text LANGUAGE plpgsql STABLE PARALLEL SAFE AS $view$
BEGIN
  RETURN (SELECT (SELECT row_to_json(json_view_row) FROM (SELECT s.id AS "id", s.order_id AS "order_id", s.courier_slug AS "courier_slug", s.tracking_number AS "tracking_number", s.status AS "status", s.last_status_label AS "last_status_label", to_char((s.last_status_at) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24":"MI":"SS.MS"Z"') AS "last_status_at", merx_compact_json(s.status_events) AS "status_events", s.delivery_mode AS "delivery_mode", s.office_id AS "office_id", merx_compact_json(s.recipient_address) AS "recipient_address", (s.cod_amount)::float8 AS "cod_amount", (s.shipping_cost)::float8 AS "shipping_cost", s.parcel_weight_g AS "parcel_weight_g", merx_compact_json(s.parcel_dim_cm) AS "parcel_dim_cm", merx_compact_json(s.sender_origin) AS "sender_origin", merx_compact_json(s.shipment_terms) AS "shipment_terms", to_char((s.created_at) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24":"MI":"SS.MS"Z"') AS "created_at", to_char((s.updated_at) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24":"MI":"SS.MS"Z"') AS "updated_at") json_view_row)::text FROM shipments s  WHERE s.id = row_id);
END
$view$;
INSERT INTO stored_views (name, definition_sha256, backfilled) VALUES ('shipment', 'c301c69dd2670a58', NOT EXISTS (SELECT FROM shipments))
  ON CONFLICT (name) DO UPDATE SET definition_sha256 = EXCLUDED.definition_sha256, backfilled_through = NULL, backfilled = EXCLUDED.backfilled, updated_at = now()
  WHERE stored_views.definition_sha256 IS DISTINCT FROM EXCLUDED.definition_sha256;
-- merx:view shipment end
-- merx:view product begin
ALTER TABLE products ADD COLUMN IF NOT EXISTS view_json text, ADD COLUMN IF NOT EXISTS view_etag text, ADD COLUMN IF NOT EXISTS view_version text;
CREATE OR REPLACE FUNCTION merx_view_product() RETURNS trigger LANGUAGE plpgsql AS $view$
BEGIN
  NEW.view_json := (SELECT (SELECT row_to_json(json_view_row) FROM (SELECT p.id AS "id", p.name AS "name", p.marketing_name AS "marketing_name", p.sku AS "sku", (p.price)::float8 AS "price", (p.original_price)::float8 AS "original_price", p.active AS "active", p.delivery_type AS "delivery_type", p.offer_type AS "offer_type", p.description AS "description", p.images AS "images", p.stock_quantity AS "stock_quantity", p.block_on_zero_stock AS "block_on_zero_stock", p.low_stock_threshold AS "low_stock_threshold", p.weight_g AS "weight_g", merx_compact_json(p.dim_cm) AS "dim_cm", p.shipping_short_name AS "shipping_short_name", p.shipping_category AS "shipping_category", p.catalog_hidden AS "catalog_hidden", p.language AS "language", to_char((p.created_at) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24":"MI":"SS.MS"Z"') AS "created_at", to_char((p.updated_at) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24":"MI":"SS.MS"Z"') AS "updated_at", array_to_json(ARRAY(SELECT (SELECT row_to_json(json_view_row) FROM (SELECT pv.id AS "id", pv.type AS "type", pv.name AS "name", pv.value AS "value", (pv.price_delta)::float8 AS "price_delta", pv.stock_quantity AS "stock_quantity", pv.image_url AS "image_url", pv.position AS "position") json_view_row) FROM product_variants pv WHERE pv.account_id = p.account_id AND pv.product_id = p.id ORDER BY pv.position NULLS LAST, pv.id)) AS "variants") json_view_row)::text FROM (SELECT NEW.*) p );
  NEW.view_etag := merx_view_etag(NEW.view_json);
  NEW.view_version := 'c930b3f89e1b69f6';
  RETURN NEW;
END
$view$;
DROP TRIGGER IF EXISTS merx_view_product ON products;
CREATE TRIGGER merx_view_product BEFORE INSERT OR UPDATE ON products FOR EACH ROW EXECUTE FUNCTION merx_view_product();
CREATE OR REPLACE FUNCTION merx_view_product_built(row_id uuid) RETURNS text LANGUAGE plpgsql STABLE PARALLEL SAFE AS $view$
BEGIN
  RETURN (SELECT (SELECT row_to_json(json_view_row) FROM (SELECT p.id AS "id", p.name AS "name", p.marketing_name AS "marketing_name", p.sku AS "sku", (p.price)::float8 AS "price", (p.original_price)::float8 AS "original_price", p.active AS "active", p.delivery_type AS "delivery_type", p.offer_type AS "offer_type", p.description AS "description", p.images AS "images", p.stock_quantity AS "stock_quantity", p.block_on_zero_stock AS "block_on_zero_stock", p.low_stock_threshold AS "low_stock_threshold", p.weight_g AS "weight_g", merx_compact_json(p.dim_cm) AS "dim_cm", p.shipping_short_name AS "shipping_short_name", p.shipping_category AS "shipping_category", p.catalog_hidden AS "catalog_hidden", p.language AS "language", to_char((p.created_at) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24":"MI":"SS.MS"Z"') AS "created_at", to_char((p.updated_at) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24":"MI":"SS.MS"Z"') AS "updated_at", array_to_json(ARRAY(SELECT (SELECT row_to_json(json_view_row) FROM (SELECT pv.id AS "id", pv.type AS "type", pv.name AS "name", pv.value AS "value", (pv.price_delta)::float8 AS "price_delta", pv.stock_quantity AS "stock_quantity", pv.image_url AS "image_url", pv.position AS "position") json_view_row) FROM product_variants pv WHERE pv.account_id = p.account_id AND pv.product_id = p.id ORDER BY pv.position NULLS LAST, pv.id)) AS "variants") json_view_row)::text FROM products p  WHERE p.id = row_id);
END
$view$;
CREATE OR REPLACE FUNCTION merx_view_product_from_product_variants() RETURNS trigger LANGUAGE plpgsql AS $view$
BEGIN
  IF TG_OP <> 'INSERT' THEN
    UPDATE products SET view_json = NULL WHERE account_id = OLD.account_id AND id = OLD.product_id;
  END IF;
  IF TG_OP = 'INSERT' OR (TG_OP = 'UPDATE' AND (NEW.account_id, NEW.product_id) IS DISTINCT FROM (OLD.account_id, OLD.product_id)) THEN
    UPDATE products SET view_json = NULL WHERE account_id = NEW.account_id AND id = NEW.product_id;
  END IF;
  RETURN NULL;
END
$view$;
DROP TRIGGER IF EXISTS merx_view_product_from_product_variants ON product_variants;
CREATE TRIGGER merx_view_product_from_product_variants AFTER INSERT OR DELETE OR UPDATE OF account_id, product_id, id, type, name, value, price_delta, stock_quantity, image_url, position
        ON product_variants FOR EACH ROW EXECUTE FUNCTION merx_view_product_from_product_variants();
INSERT INTO stored_views (name, definition_sha256, backfilled) VALUES ('product', 'c930b3f89e1b69f6', NOT EXISTS (SELECT FROM products))
  ON CONFLICT (name) DO UPDATE SET definition_sha256 = EXCLUDED.definition_sha256, backfilled_through = NULL, backfilled = EXCLUDED.backfilled, updated_at = now()
  WHERE stored_views.definition_sha256 IS DISTINCT FROM EXCLUDED.definition_sha256;
-- merx:view product end
