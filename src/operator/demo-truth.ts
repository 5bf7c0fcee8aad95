// Issue 41 item 7: demo data that tells the truth. The bulk seed (seed.ts) is
// a data loader: its shipped and delivered orders carry a tracking number but
// no shipment, and its products track no stock. For the demo account those
// orders go back to processing, and a dozen of them are shipped the way a
// merchant ships: create_shipment through the service, which calls the
// courier simulator over HTTP for a real waybill; the simulator then reports
// some of them in transit and delivered, and the courier poll (or courier_c's
// push) moves the shipments and orders on. Six products get stock through
// the movement ledger (a delivery, a sale-sized correction), one of them
// below the account's low-stock threshold.
import type { OperatorServices } from './route.ts';
import { SCOPES } from '../platform/contract/scopes.ts';
import { execute } from '../platform/operations/execute.ts';
import { createShipmentOp } from '../modules/shipments/operations.ts';
import { updateOrderOp } from '../modules/orders/operations.ts';
import { unshipSeededOrders } from '../modules/orders/seed.ts';
import { applyMovement } from '../modules/inventory/movements.ts';
import { recordCourierEvent } from '../couriers/simulator/routes.ts';
import { JOBS } from '../workers/schedule.ts';

const SHIPMENTS = 12;
/** Of those, how many the courier reports in transit, and of those how many delivered. */
const IN_TRANSIT = 8;
const DELIVERED = 4;
/** Stock after the delivery and the correction; the last is below the default threshold of 5. */
const STOCK: Array<[delivered: number, corrected: number]> = [
  [60, -4],
  [40, -2],
  [25, 0],
  [30, -6],
  [12, -1],
  [6, -3],
];

export async function tellTheTruth(
  services: OperatorServices,
  accountId: string,
): Promise<{ shipments: number; delivered: number; tracked: number }> {
  await unshipSeededOrders(services.db, accountId);
  const tracked = await stockUp(services, accountId);
  if (!services.courierSimulator) return { shipments: 0, delivered: 0, tracked };
  const { rows } = await services.db.query<{ id: string }>(
    `SELECT id FROM orders WHERE account_id = $1 AND status = 'processing' AND courier_slug IS NOT NULL ORDER BY created_at DESC, id LIMIT $2`,
    [accountId, SHIPMENTS],
  );
  const caller = { accountId, keyId: 'operator', keyPrefix: 'operator', scopes: [...SCOPES], writes: 'direct' as const };
  const waybills: Array<{ orderId: string; waybill: string }> = [];
  for (const order of rows) {
    const created = (await execute(services, createShipmentOp, caller, { order_id: order.id })) as { data: { tracking_number: string | null } };
    if (created.data.tracking_number) waybills.push({ orderId: order.id, waybill: created.data.tracking_number });
  }
  for (const [i, { orderId, waybill }] of waybills.slice(0, IN_TRANSIT).entries()) {
    // Handed to the courier: the merchant marks the order shipped, as the console's status change does.
    await execute(services, updateOrderOp, caller, { id: orderId, status: 'shipped', notify_customer: false });
    await recordCourierEvent(services.courierSimulator, waybill, 'in_transit');
    if (i < DELIVERED) await recordCourierEvent(services.courierSimulator, waybill, 'delivered');
  }
  await JOBS['courier-poll'](services, new Date());
  const { rows: done } = await services.db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM shipments WHERE account_id = $1 AND status = 'delivered'`,
    [accountId],
  );
  return { shipments: waybills.length, delivered: done[0].n, tracked };
}

/** Stock for the first physical products (in natural order), through the ledger: a delivery, then a correction. */
async function stockUp(services: OperatorServices, accountId: string): Promise<number> {
  const { rows } = await services.db.query<{ id: string }>(
    `SELECT id FROM products WHERE account_id = $1 AND active AND delivery_type = 'physical' AND stock_quantity IS NULL
      ORDER BY substring(name from '^\\D*'), substring(name from '\\d+')::numeric NULLS FIRST, name, id LIMIT $2`,
    [accountId, STOCK.length],
  );
  await services.db.tx(async (tx) => {
    for (const [i, product] of rows.entries()) {
      const [delivered, corrected] = STOCK[i];
      await applyMovement(tx, accountId, { productId: product.id, type: 'delivery', qty: delivered, unitCost: 4 + i, note: 'demo: first delivery' });
      if (corrected)
        await applyMovement(tx, accountId, { productId: product.id, type: 'correction', qty: corrected, note: 'demo: counted on the shelf' });
    }
  });
  return rows.length;
}
