// What an order shows and keeps of its latest waybill: the ShipmentSummary
// of the SPEC Order view, and that waybill's status on the order row
// (shipment_status, migration 017, which the list's filter reads). The
// shipments room writes waybills and depends on this room, never the other
// way, so the statuses a waybill moves through are declared here and the
// shipments room takes them from here. The order's SQL reads the shipments
// table in this file only.
import { Type } from 'typebox';
import { Nullable, NullableDateTime, Uuid } from '../../platform/contract/schema.ts';
import { field, type ViewSource } from '../../platform/read-path/index.ts';

export const SHIPMENT_STATUSES = ['pending', 'picked_up', 'in_transit', 'delivered', 'cancelled', 'refused', 'returned'] as const;
export const ShipmentStatus = Type.Unsafe<(typeof SHIPMENT_STATUSES)[number]>({
  type: 'string',
  enum: [...SHIPMENT_STATUSES],
  description: 'Normalized courier status; raw courier text is in status_events.',
});

/** The latest shipment rides along for the view's `shipment` summary (alias s). */
const SUMMARY_COLUMNS = ['id', 'courier_slug', 'tracking_number', 'status', 'last_status_label', 'last_status_at'];
export const LATEST_SHIPMENT_JOIN = `LEFT JOIN LATERAL (
    SELECT ${SUMMARY_COLUMNS.join(', ')} FROM shipments
     WHERE account_id = o.account_id AND order_id = o.id ORDER BY created_at DESC, id DESC LIMIT 1
  ) s ON true`;

/** A change to an order's shipments that the summary can see rewrites the order's stored view. */
export const LATEST_SHIPMENT_SOURCE: ViewSource = {
  table: 'shipments',
  match: { account_id: 'account_id', id: 'order_id' },
  columns: [...SUMMARY_COLUMNS, 'created_at'],
};

const { value, time, object } = field;

/** The summary of the latest shipment, read from the join's alias `s`. */
export const shipmentSummary = object(
  {
    id: value('s.id', Uuid()),
    courier_slug: value('s.courier_slug', Nullable('string')),
    tracking_number: value('s.tracking_number', Nullable('string')),
    status: value('s.status', ShipmentStatus),
    last_status_label: value('s.last_status_label', Nullable('string')),
    last_status_at: time('s.last_status_at', NullableDateTime()),
  },
  { $id: 'ShipmentSummary' },
);

/**
 * The latest shipment's status, for the order row's shipment_status ($1 the
 * account, $2 the order). The shipments room writes a waybill's status only
 * through recordWaybill and touchOrder (commands.ts), in the waybill's
 * transaction, so the order row keeps up.
 */
export const LATEST_SHIPMENT_STATUS = `(SELECT s.status FROM shipments s WHERE s.account_id = $1 AND s.order_id = $2 ORDER BY s.created_at DESC, s.id DESC LIMIT 1)`;
