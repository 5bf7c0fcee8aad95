// The order operations' inputs and answers around the SPEC Order view
// (declared with its SQL in view.ts).
import { Type, type Static } from 'typebox';
import { Closed, Cursor, Limit, ListOf, Nullable, StrictDate, Uuid } from '../../platform/contract/schema.ts';
import { SHIPMENT_STATUSES } from './latest-shipment.ts';
import { orderView, OrderStatus, type OrderStatusName } from './view.ts';

export { LineItem, ORDER_STATUSES, OrderStatus, type OrderStatusName } from './view.ts';

export const Order = orderView.schema;
export type OrderView = Static<typeof Order>;

export const OrderIdParams = Closed({ id: Uuid({ description: 'Order id (not its number).' }) });

export const ListOrdersQuery = Closed({
  limit: Type.Optional(Limit()),
  cursor: Type.Optional(Cursor()),
  status: Type.Optional(Type.Unsafe<OrderStatusName>({ ...OrderStatus, description: 'Without it, archived orders are hidden.' })),
  payment: Type.Optional(Type.String({ maxLength: 50, description: 'payment_status, e.g. paid.' })),
  from: Type.Optional(StrictDate('created_at >= from.')),
  to: Type.Optional(StrictDate('created_at <= to (a date: its end).')),
  since: Type.Optional(StrictDate('updated_at >= since.')),
  page_id: Type.Optional(Uuid()),
  product_id: Type.Optional(Uuid({ description: 'Has this product.' })),
  courier: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'Courier slug, or none: no tracking number.' })),
  shipment_status: Type.Optional(Type.Unsafe<(typeof SHIPMENT_STATUSES)[number]>({ type: 'string', enum: [...SHIPMENT_STATUSES] })),
  q: Type.Optional(Type.String({ maxLength: 100, description: 'Searches name, phone, email, tracking number.' })),
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
  notify_customer: Type.Optional(Type.Boolean()),
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
