// The values a person picks from in the pages' selects, in the order they
// are listed. Each list is checked against the generated type: a value
// missing, or one the API does not know, does not compile.
import type { Order, Shipment, StockMovement, WebhookDelivery } from './api-types';

const everyOf =
  <T extends string>() =>
  <const L extends readonly T[]>(list: L & ([Exclude<T, L[number]>] extends [never] ? unknown : { missing: Exclude<T, L[number]> })) =>
    list;

export const ORDER_STATUSES = everyOf<Order['status']>()([
  'new',
  'confirmed',
  'processing',
  'shipped',
  'delivered',
  'cancelled',
  'returned',
  'refunded',
  'archived',
]);
export const SHIPMENT_STATUSES = everyOf<Shipment['status']>()([
  'pending',
  'picked_up',
  'in_transit',
  'delivered',
  'cancelled',
  'refused',
  'returned',
]);
export const DELIVERY_STATUSES = everyOf<WebhookDelivery['status']>()(['pending', 'delivered', 'failed', 'dead']);
export const MOVEMENT_TYPES = everyOf<StockMovement['type']>()(['sale', 'release', 'return', 'delivery', 'correction']);
