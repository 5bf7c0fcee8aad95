// SPEC Order view (closed: exactly these fields, legacy orders included) and
// the inputs of the order operations.
import { Type, type Static } from 'typebox';
import { Closed, Cursor, DateTime, Limit, ListOf, Nullable, NullableDateTime, NullableUuid, StrictDate, Uuid } from '../../platform/schema.ts';
import { SHIPMENT_STATUSES, ShipmentSummary } from '../shipments/schema.ts';

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

export const Order = Closed(
  {
    id: Uuid(),
    number: Nullable('integer', { description: 'Merchant-facing number, per account.' }),
    order_number: Nullable('integer', { description: 'Platform-wide number.' }),
    status: OrderStatus,
    payment_status: Nullable('string', { description: 'e.g. pending, paid, refunded' }),
    payment_method: Nullable('string', { description: 'e.g. cod, bank, card, free' }),
    funnel_step: Nullable('string', { description: 'e.g. main, upsell, downsell, original' }),
    parent_order_id: NullableUuid(),
    total: Nullable('number', { description: 'In the page currency.' }),
    delivery_price: Nullable('number'),
    discount_amount: Nullable('number'),
    coupon_code: Nullable('string'),
    refund_amount_cents: Nullable('integer'),
    refunded_at: NullableDateTime(),
    customer: Closed({
      name: Nullable('string'),
      email: Nullable('string'),
      phone: Nullable('string'),
      vat: Nullable('string', { description: 'Company id when an invoice was requested.' }),
    }),
    shipping: Closed({
      address: Nullable('string'),
      city: Nullable('string'),
      zip: Nullable('string'),
      method: Nullable('string'),
      courier_slug: Nullable('string'),
      courier_delivery_mode: Nullable('string', { description: 'office or home' }),
      courier_office_id: StringOrInteger,
    }),
    courier: Nullable('string', { description: 'Courier actually used: a slug, or free text set through the API.' }),
    tracking_number: Nullable('string'),
    tracking_url: Nullable('string'),
    line_items: Type.Unsafe<Static<typeof LineItem>[] | null>({
      type: ['array', 'null'],
      items: LineItem,
      description: 'null for legacy orders, which carry product_name, quantity and unit_price instead.',
    }),
    product_name: Nullable('string'),
    product_sku: Nullable('string'),
    quantity: Nullable('integer'),
    unit_price: Nullable('number'),
    notes: Nullable('string', { description: "The customer's checkout note." }),
    admin_notes: Nullable('string', { description: 'Internal notes.' }),
    return_note: Nullable('string'),
    page_id: NullableUuid(),
    invoice_number: StringOrInteger,
    shipment: Type.Unsafe<Static<typeof ShipmentSummary> | null>({
      anyOf: [ShipmentSummary, { type: 'null' }],
      description: 'The latest waybill, or null.',
    }),
    created_at: DateTime(),
    updated_at: NullableDateTime(),
  },
  { $id: 'Order' },
);
export type OrderView = Static<typeof Order>;

export const OrderIdParams = Closed({ id: Uuid({ description: 'Order id (a UUID; order numbers are not ids).' }) });

export const ListOrdersQuery = Closed({
  limit: Type.Optional(Limit()),
  cursor: Type.Optional(Cursor()),
  status: Type.Optional(Type.Unsafe<OrderStatusName>({ ...OrderStatus, description: 'Without it, archived orders are hidden.' })),
  payment: Type.Optional(Type.String({ maxLength: 50, description: 'Matches payment_status, e.g. paid.' })),
  from: Type.Optional(StrictDate('created_at >= from (inclusive; a date means 00:00:00Z).')),
  to: Type.Optional(StrictDate('created_at <= to (inclusive; a date means the end of that day).')),
  since: Type.Optional(StrictDate('updated_at >= since: the cheap poll for changes.')),
  page_id: Type.Optional(Uuid()),
  product_id: Type.Optional(Uuid({ description: 'Orders of pages selling the product, or whose line items contain it.' })),
  courier: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'Courier slug, or `none` for orders without a tracking number.' })),
  shipment_status: Type.Optional(Type.Unsafe<(typeof SHIPMENT_STATUSES)[number]>({ type: 'string', enum: [...SHIPMENT_STATUSES] })),
  q: Type.Optional(Type.String({ maxLength: 100, description: 'Case-insensitive substring of customer name, phone, email or tracking number.' })),
});
export type ListOrdersInput = Static<typeof ListOrdersQuery>;

export const OrderList = ListOf(Order);
export const OrderEnvelope = Closed({ data: Order });

export const UpdateOrderBody = Closed({
  status: Type.Optional(OrderStatus),
  tracking_number: Type.Optional(Nullable('string', { maxLength: 200 })),
  tracking_url: Type.Optional(Nullable('string', { maxLength: 2000 })),
  courier: Type.Optional(Nullable('string', { maxLength: 100 })),
  admin_notes: Type.Optional(Nullable('string', { maxLength: 10000 })),
  notify_customer: Type.Optional(Type.Boolean({ description: 'false suppresses the shipped notice (default true).' })),
});
export type UpdateOrderInput = Static<typeof UpdateOrderBody>;

export const UpdateOrderResult = Closed({
  data: Order,
  status_changed: Type.Boolean(),
  email_sent: Type.Boolean({ description: 'Whether a shipped-notice email went out to the customer.' }),
});

export const UpdateOrderPreview = Closed({
  dry_run: Type.Literal(true),
  data: Order,
  changes: Type.Record(Type.String(), Type.Unknown(), { description: 'The fields that would change, with their new values.' }),
  status_would_change: Type.Boolean(),
  would_notify_customer: Type.Boolean(),
});
