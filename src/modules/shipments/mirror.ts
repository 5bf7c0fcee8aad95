// Mirroring courier statuses (SPEC shipment table; GAPS courier mirror).
// Raw events are kept; the normalised status follows the newest event by its
// own time, so repeated or out-of-order reports change nothing twice.
import type { Db } from '../../platform/db.ts';
import { emit } from '../../platform/events.ts';
import type { CourierEvent } from '../../couriers/adapter.ts';
import { changeOrder, type OrderChangeDeps } from '../orders/commands.ts';
import { getShipment, TERMINAL_STATUSES } from './view.ts';

/** GAPS: which courier statuses move the order, and where. */
const ORDER_MIRROR: Record<string, 'delivered' | 'returned' | 'cancelled'> = { delivered: 'delivered', returned: 'returned', cancelled: 'cancelled' };

const sameEvent = (a: { at: string; code: unknown }, b: { at: string; code: unknown }) => a.at === b.at && String(a.code) === String(b.code);

export async function applyCourierEvents(db: Db, deps: OrderChangeDeps, accountId: string, shipmentId: string, events: CourierEvent[]): Promise<boolean> {
  return db.tx(async (tx) => {
    const shipment = await getShipment(tx, accountId, shipmentId, { lock: true });
    const known: Array<{ at: string; code: unknown; label: string | null; status?: string | null }> = shipment.status_events;
    const fresh = events.filter((e) => !known.some((k) => sameEvent(k, e)));
    if (fresh.length === 0) return false;
    const all = [...known, ...fresh.map((e) => ({ at: e.at, code: e.code, label: e.label, status: e.status }))].sort((x, y) => x.at.localeCompare(y.at));
    const newest = [...all].reverse().find((e) => e.status);
    const next = newest?.status ?? shipment.status;
    const moves = next !== shipment.status && !TERMINAL_STATUSES.includes(shipment.status);
    await tx.query(
      `UPDATE shipments SET status_events = $3::jsonb, status = $4, last_status_label = $5, last_status_at = $6, updated_at = now()
        WHERE account_id = $1 AND id = $2`,
      [accountId, shipmentId, JSON.stringify(all), moves ? next : shipment.status,
        moves ? (newest?.label ?? null) : shipment.last_status_label, moves ? newest!.at : shipment.last_status_at],
    );
    if (!moves) return true;
    const updated = await getShipment(tx, accountId, shipmentId);
    await emit(tx, accountId, 'shipment.status_changed', {
      shipment: updated, previous_status: shipment.status, status: next,
      event: newest ? { at: newest.at, code: newest.code, label: newest.label } : null, source: 'courier',
    });
    const orderStatus = ORDER_MIRROR[next];
    if (orderStatus) await changeOrder(tx, deps, accountId, shipment.order_id, { status: orderStatus }, 'courier');
    return true;
  });
}
