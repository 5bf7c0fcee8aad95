// The JavaScript views as they were before PostgreSQL wrote them (issue 12),
// kept as the reference the safety net (json-views.test.ts) compares the
// database-built JSON with: the same rows, read by the same driver type
// parsers, shaped by the old code.
import type { Sql } from '../../src/platform/db/db.ts';
import { countSegment } from '../../src/modules/customers/segments.ts';
import { isMembership } from '../../src/modules/customers/filters.ts';

export const LEGACY_ORDER_SQL = `SELECT o.id, o.number, o.order_number, o.status, o.payment_status, o.payment_method, o.funnel_step,
  o.parent_order_id, o.total, o.delivery_price, o.discount_amount, o.coupon_code, o.refund_amount_cents, o.refunded_at,
  o.customer_name, o.customer_email, o.customer_phone, o.customer_vat,
  o.shipping_address, o.shipping_city, o.shipping_zip, o.shipping_method, o.courier_slug, o.courier_delivery_mode,
  o.courier_office_id, o.courier, o.tracking_number, o.tracking_url, o.line_items, o.product_name, o.product_sku,
  o.quantity, o.unit_price, o.notes, o.admin_notes, o.return_note, o.page_id, o.invoice_number, o.created_at, o.updated_at,
  s.id AS s_id, s.courier_slug AS s_courier_slug, s.tracking_number AS s_tracking_number, s.status AS s_status,
  s.last_status_label AS s_last_status_label, s.last_status_at AS s_last_status_at
  FROM orders o LEFT JOIN LATERAL (
    SELECT id, courier_slug, tracking_number, status, last_status_label, last_status_at FROM shipments
     WHERE account_id = o.account_id AND order_id = o.id ORDER BY created_at DESC, id DESC LIMIT 1
  ) s ON true
 WHERE o.account_id = $1 AND o.id = $2`;

export function toOrderView(r: Record<string, any>) {
  return {
    id: r.id,
    number: r.number,
    order_number: r.order_number,
    status: r.status,
    payment_status: r.payment_status,
    payment_method: r.payment_method,
    funnel_step: r.funnel_step,
    parent_order_id: r.parent_order_id,
    total: r.total,
    delivery_price: r.delivery_price,
    discount_amount: r.discount_amount,
    coupon_code: r.coupon_code,
    refund_amount_cents: r.refund_amount_cents,
    refunded_at: r.refunded_at,
    customer: { name: r.customer_name, email: r.customer_email, phone: r.customer_phone, vat: r.customer_vat },
    shipping: {
      address: r.shipping_address,
      city: r.shipping_city,
      zip: r.shipping_zip,
      method: r.shipping_method,
      courier_slug: r.courier_slug,
      courier_delivery_mode: r.courier_delivery_mode,
      courier_office_id: r.courier_office_id,
    },
    courier: r.courier,
    tracking_number: r.tracking_number,
    tracking_url: r.tracking_url,
    line_items: r.line_items,
    product_name: r.product_name,
    product_sku: r.product_sku,
    quantity: r.quantity,
    unit_price: r.unit_price,
    notes: r.notes,
    admin_notes: r.admin_notes,
    return_note: r.return_note,
    page_id: r.page_id,
    invoice_number: r.invoice_number,
    shipment: r.s_id
      ? {
          id: r.s_id,
          courier_slug: r.s_courier_slug,
          tracking_number: r.s_tracking_number,
          status: r.s_status,
          last_status_label: r.s_last_status_label,
          last_status_at: r.s_last_status_at,
        }
      : null,
    created_at: r.created_at,
    updated_at: r.updated_at,
  };
}

export async function legacyOrder(sql: Sql, accountId: string, orderId: string) {
  const { rows } = await sql.query(LEGACY_ORDER_SQL, [accountId, orderId]);
  return toOrderView(rows[0]);
}

/** The Shipment view was the row as the driver's type parsers read it. */
export async function legacyShipment(sql: Sql, accountId: string, shipmentId: string) {
  const { rows } = await sql.query(
    `SELECT id, order_id, courier_slug, tracking_number, status, last_status_label, last_status_at,
       status_events, delivery_mode, office_id, recipient_address, cod_amount, shipping_cost, parcel_weight_g,
       parcel_dim_cm, sender_origin, shipment_terms, created_at, updated_at FROM shipments WHERE account_id = $1 AND id = $2`,
    [accountId, shipmentId],
  );
  return rows[0];
}

/** The Product view was the row plus its variants, read in a second query. */
export async function legacyProduct(sql: Sql, accountId: string, productId: string) {
  const { rows } = await sql.query(
    `SELECT id, name, marketing_name, sku, price, original_price, active, delivery_type, offer_type, description, images,
       stock_quantity, block_on_zero_stock, low_stock_threshold, weight_g, dim_cm, shipping_short_name, shipping_category,
       catalog_hidden, language, created_at, updated_at FROM products WHERE account_id = $1 AND id = $2`,
    [accountId, productId],
  );
  const { rows: variants } = await sql.query(
    `SELECT id, type, name, value, price_delta, stock_quantity, image_url, position FROM product_variants
      WHERE account_id = $1 AND product_id = $2 ORDER BY position NULLS LAST, id`,
    [accountId, productId],
  );
  return { ...rows[0], variants };
}

/** The stock levels were built half in SQL (variants with json_agg) and half from the row. */
export async function legacyStockItem(sql: Sql, accountId: string, productId: string, defaultThreshold: number) {
  const { rows } = await sql.query(
    `SELECT p.id AS product_id, p.name, p.sku, p.stock_quantity IS NOT NULL AS tracked, coalesce(p.stock_quantity, 0) AS stock_quantity,
            p.low_stock_threshold, coalesce(p.low_stock_threshold, $2) AS effective_threshold,
            (p.stock_quantity IS NOT NULL AND p.stock_quantity <= coalesce(p.low_stock_threshold, $2)) AS low, p.block_on_zero_stock,
            coalesce((SELECT json_agg(json_build_object('id', v.id, 'name', v.name, 'value', v.value,
                        'stock_quantity', coalesce(v.stock_quantity, 0), 'tracked', v.stock_quantity IS NOT NULL) ORDER BY v.position, v.id)
                        FROM product_variants v WHERE v.account_id = p.account_id AND v.product_id = p.id), '[]'::json) AS variants
       FROM products p WHERE p.account_id = $1 AND p.id = $3`,
    [accountId, defaultThreshold, productId],
  );
  return rows[0];
}

export async function legacyMovement(sql: Sql, accountId: string, movementId: string) {
  const { rows } = await sql.query(
    'SELECT id, product_id, variant_id, order_id, type, qty, note, created_at FROM stock_movements WHERE account_id = $1 AND id = $2',
    [accountId, movementId],
  );
  return rows[0];
}

export async function legacyCustomer(sql: Sql, accountId: string, key: string) {
  const { rows } = await sql.query(
    'SELECT key, name, email, phone, orders_count, total_spent, first_order_at, last_order_at FROM customer_aggregates WHERE account_id = $1 AND key = $2',
    [accountId, key],
  );
  return rows[0];
}

export async function legacyDelivery(sql: Sql, accountId: string, deliveryId: string) {
  const { rows } = await sql.query(
    `SELECT id, webhook_id, event_id, event, status, attempt, next_attempt_at, last_status_code, last_error,
       response_body, delivered_at, created_at FROM webhook_deliveries WHERE account_id = $1 AND id = $2`,
    [accountId, deliveryId],
  );
  return rows[0];
}

/** The Segment view was the row plus its kind and a count, one statement per segment. */
export async function legacySegment(sql: Sql, accountId: string, segmentId: string) {
  const { rows } = await sql.query('SELECT id, name, filters, created_at, updated_at FROM segments WHERE account_id = $1 AND id = $2', [
    accountId,
    segmentId,
  ]);
  const row = rows[0];
  const kind = isMembership(row.id, row.filters) ? 'membership' : 'computed';
  return { ...row, kind, customer_count: await countSegment(sql, accountId, row) };
}

/** The list: the segments oldest first, each viewed as above. */
export async function legacySegments(sql: Sql, accountId: string) {
  const { rows } = await sql.query<{ id: string }>('SELECT id FROM segments WHERE account_id = $1 ORDER BY created_at, id', [accountId]);
  const views = [];
  for (const row of rows) views.push(await legacySegment(sql, accountId, row.id));
  return views;
}

/** The Note view was the inserted row as RETURNING gave it. */
export async function legacyNote(sql: Sql, accountId: string, noteId: string) {
  const { rows } = await sql.query('SELECT id, customer_key, text, created_at FROM customer_notes WHERE account_id = $1 AND id = $2', [
    accountId,
    noteId,
  ]);
  return rows[0];
}

/** The Subscription view was the row without its secret, and the secret's first 8 characters with an ellipsis. */
export async function legacySubscription(sql: Sql, accountId: string, webhookId: string) {
  const { rows } = await sql.query(
    `SELECT id, url, description, events, active, secret, last_triggered_at, last_status_code, dead_notified_at, created_at, updated_at
       FROM webhook_subscriptions WHERE account_id = $1 AND id = $2`,
    [accountId, webhookId],
  );
  const { secret, ...rest } = rows[0];
  // Sealed at rest since issue 27: opened with the keyring of the service whose Db `sql` is.
  return { ...rest, secret_prefix: `${sql.keyring.open(String(secret)).slice(0, 8)}…` };
}
