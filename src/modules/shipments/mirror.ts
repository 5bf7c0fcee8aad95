// Mirroring courier statuses (SPEC shipment table; GAPS courier mirror).
// Raw events are kept; new events are applied in their own time order, one
// shipment.status_changed per new normalised status, so repeated or
// out-of-order reports change nothing twice.
import type { Db } from '../../platform/db/db.ts';
import { emit } from '../../platform/db/outbox.ts';
import type { CourierEvent } from '../../couriers/adapter.ts';
import { changeOrder, touchOrder, type OrderChangeDeps } from '../orders/commands.ts';
import { getShipment, TERMINAL_STATUSES } from './queries.ts';

/** GAPS: which courier statuses move the order, and where. */
const ORDER_MIRROR: Record<string, 'delivered' | 'returned' | 'cancelled'> = { delivered: 'delivered', returned: 'returned', cancelled: 'cancelled' };

interface StoredEvent {
  at: string;
  code: unknown;
  label: string | null;
  status?: string | null;
}

const sameEvent = (a: StoredEvent, b: StoredEvent) => a.at === b.at && String(a.code) === String(b.code);
const byTime = (x: StoredEvent, y: StoredEvent) => x.at.localeCompare(y.at);

export async function applyCourierEvents(
  db: Db,
  deps: OrderChangeDeps,
  accountId: string,
  shipmentId: string,
  events: CourierEvent[],
): Promise<boolean> {
  return db.tx(async (tx) => {
    const shipment = await getShipment(tx, accountId, shipmentId, { lock: true });
    const known: StoredEvent[] = shipment.status_events;
    const fresh: StoredEvent[] = events
      .filter((e) => !known.some((k) => sameEvent(k, e)))
      .map((e) => ({ at: e.at, code: e.code, label: e.label, status: e.status }))
      .sort(byTime);
    if (fresh.length === 0) return false;
    // Only events newer than the newest status already known can move the shipment on; older ones are history.
    const newestKnown =
      known
        .filter((e) => e.status)
        .sort(byTime)
        .at(-1)?.at ?? '';
    let status: string = shipment.status;
    let last: StoredEvent | null = null;
    const steps: Array<{ previous: string; event: StoredEvent }> = [];
    for (const event of fresh) {
      if (!event.status || event.at < newestKnown || TERMINAL_STATUSES.includes(status)) continue;
      last = event;
      if (event.status !== status) {
        steps.push({ previous: status, event });
        status = event.status;
      }
    }
    await tx.query(
      `UPDATE shipments SET status_events = $3::jsonb, status = $4, last_status_label = $5, last_status_at = $6, updated_at = now()
        WHERE account_id = $1 AND id = $2`,
      [
        accountId,
        shipmentId,
        JSON.stringify([...known, ...fresh].sort(byTime)),
        status,
        last ? last.label : shipment.last_status_label,
        last ? last.at : shipment.last_status_at,
      ],
    );
    if (last) {
      // The order view carries this shipment's summary: `since` polling must see it move.
      await touchOrder(tx, accountId, shipment.order_id);
    }
    for (const [i, step] of steps.entries()) {
      // Each event carries the shipment as it stood after that step; only the last step is the stored row.
      const current =
        i === steps.length - 1
          ? await getShipment(tx, accountId, shipmentId)
          : { ...shipment, status: step.event.status, last_status_label: step.event.label, last_status_at: step.event.at };
      await emit(tx, accountId, 'shipment.status_changed', {
        shipment: current,
        previous_status: step.previous,
        status: step.event.status,
        event: { at: step.event.at, code: step.event.code, label: step.event.label },
        source: 'courier',
      });
    }
    const orderStatus = steps.length ? ORDER_MIRROR[status] : undefined;
    if (orderStatus) await changeOrder(tx, deps, accountId, shipment.order_id, { status: orderStatus }, 'courier');
    return true;
  });
}
