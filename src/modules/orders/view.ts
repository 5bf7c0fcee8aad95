// SPEC Order view (closed: exactly these fields, legacy orders included),
// declared once (issue 29): each field's SQL and schema side by side. It is
// stored: the row keeps its JSON and ETag, written by the database whenever
// the order or one of its shipments changes. Hidden columns (attribution,
// IP, payment-provider ids, costs) are never read.
import { Type, type Static } from 'typebox';
import { DateTime, Nullable, NullableDateTime, NullableUuid, Uuid } from '../../platform/contract/schema.ts';
import { defineView, field } from '../../platform/read-path/index.ts';
import { LATEST_SHIPMENT_JOIN, LATEST_SHIPMENT_SOURCE, shipmentSummary } from './latest-shipment.ts';

export const ORDER_STATUSES = ['new', 'confirmed', 'processing', 'shipped', 'delivered', 'cancelled', 'returned', 'refunded', 'archived'] as const;
export type OrderStatusName = (typeof ORDER_STATUSES)[number];
export const OrderStatus = Type.Unsafe<OrderStatusName>({ type: 'string', enum: [...ORDER_STATUSES] });

const StringOrInteger = Type.Unsafe<string | number | null>({ type: ['string', 'integer', 'null'] });

export const LineItem = Type.Object(
  {
    kind: Type.String({ description: 'main, component, gift, bump, extra or free_shipping' }),
    product_id: NullableUuid(),
    variant_id: NullableUuid(),
    name: Type.String(),
    sku: Nullable('string'),
    qty: Type.Integer(),
    unit_price_cents: Type.Integer(),
    total_cents: Type.Integer(),
    delivery_type: Type.String(),
    digital: Type.Boolean(),
    note: Type.String(),
  },
  { additionalProperties: true, $id: 'LineItem', description: 'Amounts in cents; extra properties may appear.' },
);

const { value, number, time, document, object, nullable } = field;

export const orderView = defineView({
  name: 'order',
  table: 'orders',
  alias: 'o',
  joins: LATEST_SHIPMENT_JOIN,
  schema: { $id: 'Order' },
  stored: { sources: [LATEST_SHIPMENT_SOURCE] },
  fields: {
    id: value('o.id', Uuid()),
    number: value('o.number', Nullable('integer', { description: 'Merchant-facing number, per account.' })),
    order_number: value('o.order_number', Nullable('integer', { description: 'Platform-wide number.' })),
    status: value('o.status', OrderStatus),
    payment_status: value('o.payment_status', Nullable('string', { description: 'e.g. pending, paid, refunded' })),
    payment_method: value('o.payment_method', Nullable('string', { description: 'e.g. cod, bank, card, free' })),
    funnel_step: value('o.funnel_step', Nullable('string', { description: 'e.g. main, upsell, downsell, original' })),
    parent_order_id: value('o.parent_order_id', NullableUuid()),
    total: number('o.total', Nullable('number', { description: 'In the page currency.' })),
    delivery_price: number('o.delivery_price', Nullable('number')),
    discount_amount: number('o.discount_amount', Nullable('number')),
    coupon_code: value('o.coupon_code', Nullable('string')),
    refund_amount_cents: value('o.refund_amount_cents', Nullable('integer')),
    refunded_at: time('o.refunded_at', NullableDateTime()),
    customer: object({
      name: value('o.customer_name', Nullable('string')),
      email: value('o.customer_email', Nullable('string')),
      phone: value('o.customer_phone', Nullable('string')),
      vat: value('o.customer_vat', Nullable('string', { description: 'Company id when an invoice was requested.' })),
    }),
    shipping: object({
      address: value('o.shipping_address', Nullable('string')),
      city: value('o.shipping_city', Nullable('string')),
      zip: value('o.shipping_zip', Nullable('string')),
      method: value('o.shipping_method', Nullable('string')),
      courier_slug: value('o.courier_slug', Nullable('string')),
      courier_delivery_mode: value('o.courier_delivery_mode', Nullable('string', { description: 'office or home' })),
      // string or integer: jsonb keeps which one it was.
      courier_office_id: value('o.courier_office_id', StringOrInteger),
    }),
    courier: value('o.courier', Nullable('string', { description: 'Courier actually used: a slug, or free text set through the API.' })),
    tracking_number: value('o.tracking_number', Nullable('string')),
    tracking_url: value('o.tracking_url', Nullable('string')),
    line_items: document(
      'o.line_items',
      Type.Unsafe<Static<typeof LineItem>[] | null>({
        type: ['array', 'null'],
        items: LineItem,
        description: 'null for legacy orders, which carry product_name, quantity and unit_price instead.',
      }),
    ),
    product_name: value('o.product_name', Nullable('string')),
    product_sku: value('o.product_sku', Nullable('string')),
    quantity: value('o.quantity', Nullable('integer')),
    unit_price: number('o.unit_price', Nullable('number')),
    notes: value('o.notes', Nullable('string', { description: "The customer's checkout note." })),
    admin_notes: value('o.admin_notes', Nullable('string', { description: 'Internal notes.' })),
    return_note: value('o.return_note', Nullable('string')),
    page_id: value('o.page_id', NullableUuid()),
    invoice_number: value('o.invoice_number', StringOrInteger),
    shipment: nullable(
      's.id IS NULL',
      shipmentSummary,
      Type.Unsafe<Static<typeof shipmentSummary.schema> | null>({
        anyOf: [shipmentSummary.schema, { type: 'null' }],
        description: 'The latest waybill, or null.',
      }),
    ),
    created_at: time('o.created_at', DateTime()),
    updated_at: time('o.updated_at', NullableDateTime()),
  },
});
