// Cancelling a waybill (SPEC shipment state table; GAPS cancel result).
import type { Sql } from '../../platform/db/db.ts';
import { AppError } from '../../platform/contract/errors.ts';
import { emit } from '../../platform/db/outbox.ts';
import type { CourierSlug } from '../../couriers/adapter.ts';
import type { OrderChangeDeps } from '../orders/commands.ts';
import { changeOrder, touchOrder } from '../orders/commands.ts';
import { findOrder } from '../orders/queries.ts';
import { courierAccountFor } from './integrations.ts';
import { getShipment, liveShipmentOf, TERMINAL_STATUSES } from './queries.ts';
import type { ShipmentDeps } from './create.ts';

const localOnlyNote = (slug: string) =>
  `${slug} has no cancel API: the waybill is cancelled in Merx only. Tell the courier, or refuse the parcel at pickup, so it is not delivered.`;

export function isCancellable(shipment: { status: string }): boolean {
  return !TERMINAL_STATUSES.includes(shipment.status);
}

export async function cancelShipment(deps: ShipmentDeps & OrderChangeDeps, accountId: string, shipmentId: string, reason: string | null) {
  const source = deps.source ?? 'api';
  return deps.db.tx(async (tx: Sql) => {
    const shipment = await getShipment(tx, accountId, shipmentId, { lock: true });
    if (!isCancellable(shipment)) throw new AppError('conflict', `a ${shipment.status} shipment cannot be cancelled`, { kind: 'shipment_status' });
    const slug = shipment.courier_slug as CourierSlug;
    const adapter = deps.couriers.adapter(slug);
    const confirmed = adapter.capabilities.cancel;
    if (confirmed) await adapter.cancelWaybill(await courierAccountFor(tx, deps.couriers, accountId, slug), shipment.tracking_number);
    const now = new Date().toISOString();
    const event = { at: now, code: 'cancelled', label: reason ? `Cancelled by merchant: ${reason}` : 'Cancelled by merchant', source };
    await tx.query(
      `UPDATE shipments SET status = 'cancelled', last_status_label = $3, last_status_at = $4, status_events = status_events || $5::jsonb,
              updated_at = now() WHERE account_id = $1 AND id = $2`,
      [accountId, shipmentId, event.label, now, JSON.stringify([event])],
    );
    // The order's view changed (its shipment summary): updated_at moves, so a `since` poll sees it.
    await touchOrder(tx, accountId, shipment.order_id);
    const cancelled = await getShipment(tx, accountId, shipmentId);
    await emit(tx, accountId, 'shipment.cancelled', {
      shipment: cancelled,
      order_id: shipment.order_id,
      courier_cancelled: confirmed,
      courier_confirmed: confirmed,
      source,
    });
    // SPEC order table: a shipped order is freed for a new waybill when no live shipment remains.
    const order = await findOrder(tx, accountId, shipment.order_id);
    if (order?.status === 'shipped' && !(await liveShipmentOf(tx, accountId, order.id))) {
      await changeOrder(tx, deps, accountId, order.id, { status: 'processing' }, source);
    }
    return { data: cancelled, courier_cancelled: confirmed, courier_confirmed: confirmed, note: confirmed ? null : localOnlyNote(slug) };
  });
}
