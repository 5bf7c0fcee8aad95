// The yardsticks of the read path (issue 29): the least SQL that returns what
// a page of orders, or one order, shows, as plain columns. Fixed text written
// here, never recorded from the service's query functions: a yardstick must
// not move with the code it measures, so a before and an after are divided by
// the same thing.
//
// The columns are those the Order view shows (SPEC Order; the view as
// src/modules/orders/view.ts built it when issue 29 was filed), as stored: no
// JSON built, no number or time formatted. line_items is the jsonb column
// itself, which every checkout has (main's view reads line_items_json, a
// generated copy from migration 014 that a later checkout may drop). The
// latest shipment's six columns come through the same LEFT JOIN LATERAL the
// view uses for its `shipment` summary.
import type { Statement } from './pgbench.ts';

const COLUMNS_AND_JOIN = `o.id, o.number, o.order_number, o.status, o.payment_status, o.payment_method, o.funnel_step,
       o.parent_order_id, o.total, o.delivery_price, o.discount_amount, o.coupon_code, o.refund_amount_cents, o.refunded_at,
       o.customer_name, o.customer_email, o.customer_phone, o.customer_vat,
       o.shipping_address, o.shipping_city, o.shipping_zip, o.shipping_method, o.courier_slug, o.courier_delivery_mode,
       o.courier_office_id, o.courier, o.tracking_number, o.tracking_url, o.line_items, o.product_name, o.product_sku,
       o.quantity, o.unit_price, o.notes, o.admin_notes, o.return_note, o.page_id, o.invoice_number, o.created_at, o.updated_at,
       s.id AS shipment_id, s.courier_slug AS shipment_courier_slug, s.tracking_number AS shipment_tracking_number,
       s.status AS shipment_status, s.last_status_label AS shipment_last_status_label, s.last_status_at AS shipment_last_status_at
  FROM orders o
  LEFT JOIN LATERAL (
    SELECT id, courier_slug, tracking_number, status, last_status_label, last_status_at FROM shipments
     WHERE account_id = o.account_id AND order_id = o.id ORDER BY created_at DESC, id DESC LIMIT 1
  ) s ON true`;

/** The first page of the order list: 50 rows and one more to learn has_more, newest first. */
export const MINIMAL_LIST_SQL = `SELECT ${COLUMNS_AND_JOIN}
 WHERE o.account_id = $1 AND o.status <> 'archived' ORDER BY o.created_at DESC, o.id DESC LIMIT 51`;

/** One order by id; pgbench gets one script per id, the id written in, the account bound (pgbench.ts). */
export const MINIMAL_BY_ID_SQL = `SELECT ${COLUMNS_AND_JOIN}
 WHERE o.account_id = $1 AND o.id = $2`;

export function minimalList(accountId: string): Statement {
  return { text: MINIMAL_LIST_SQL, params: [accountId] };
}

export function minimalById(accountId: string, ids: string[]): Statement[] {
  return ids.map((id) => ({ text: MINIMAL_BY_ID_SQL, params: [accountId, id] }));
}
