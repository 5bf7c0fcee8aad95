// SPEC Order view, written by PostgreSQL (issue 12). Hidden columns
// (attribution, IP, payment-provider ids, costs) are never read.
import { isoTime, jsonNumber, jsonObject, type JsonView } from '../../platform/json-view.ts';

/** The latest shipment rides along for the view's `shipment` summary. */
export const LATEST_SHIPMENT = `LEFT JOIN LATERAL (
    SELECT id, courier_slug, tracking_number, status, last_status_label, last_status_at FROM shipments
     WHERE account_id = o.account_id AND order_id = o.id ORDER BY created_at DESC, id DESC LIMIT 1
  ) s ON true`;

const SHIPMENT_SUMMARY = jsonObject({
  id: 's.id',
  courier_slug: 's.courier_slug',
  tracking_number: 's.tracking_number',
  status: 's.status',
  last_status_label: 's.last_status_label',
  last_status_at: isoTime('s.last_status_at'),
});

export const ORDER_VIEW: JsonView = {
  from: 'orders o',
  alias: 'o',
  joins: LATEST_SHIPMENT,
  json: jsonObject({
    id: 'o.id',
    number: 'o.number',
    order_number: 'o.order_number',
    status: 'o.status',
    payment_status: 'o.payment_status',
    payment_method: 'o.payment_method',
    funnel_step: 'o.funnel_step',
    parent_order_id: 'o.parent_order_id',
    total: jsonNumber('o.total'),
    delivery_price: jsonNumber('o.delivery_price'),
    discount_amount: jsonNumber('o.discount_amount'),
    coupon_code: 'o.coupon_code',
    refund_amount_cents: 'o.refund_amount_cents',
    refunded_at: isoTime('o.refunded_at'),
    customer: jsonObject({ name: 'o.customer_name', email: 'o.customer_email', phone: 'o.customer_phone', vat: 'o.customer_vat' }),
    shipping: jsonObject({
      address: 'o.shipping_address',
      city: 'o.shipping_city',
      zip: 'o.shipping_zip',
      method: 'o.shipping_method',
      courier_slug: 'o.courier_slug',
      courier_delivery_mode: 'o.courier_delivery_mode',
      // string or integer: jsonb keeps which one it was.
      courier_office_id: 'o.courier_office_id',
    }),
    courier: 'o.courier',
    tracking_number: 'o.tracking_number',
    tracking_url: 'o.tracking_url',
    line_items: 'o.line_items_json',
    product_name: 'o.product_name',
    product_sku: 'o.product_sku',
    quantity: 'o.quantity',
    unit_price: jsonNumber('o.unit_price'),
    notes: 'o.notes',
    admin_notes: 'o.admin_notes',
    return_note: 'o.return_note',
    page_id: 'o.page_id',
    invoice_number: 'o.invoice_number',
    shipment: `CASE WHEN s.id IS NULL THEN NULL ELSE ${SHIPMENT_SUMMARY} END`,
    created_at: isoTime('o.created_at'),
    updated_at: isoTime('o.updated_at'),
  }),
};
