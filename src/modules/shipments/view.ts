// Shipment rows -> the SPEC Shipment view and ShipmentSummary.
import type { Sql } from '../../platform/db.ts';
import { notFound } from '../../platform/errors.ts';
import { SHIPMENT_COLUMNS, SHIPMENT_VIEW } from './queries.ts';
import { readOne } from '../../platform/read-sql.ts';
import type { JsonText } from '../../platform/json-text.ts';
/** GAPS: a live shipment blocks a new one; cancelled, refused and returned do not. */
export const LIVE_STATUSES = ['pending', 'picked_up', 'in_transit', 'delivered'];
/** SPEC shipment state table: these cannot be cancelled or moved by the courier any more. */
export const TERMINAL_STATUSES = ['cancelled', 'delivered', 'refused', 'returned'];

export function summaryOf(shipment: Record<string, any>) {
  return {
    id: shipment.id,
    courier_slug: shipment.courier_slug,
    tracking_number: shipment.tracking_number,
    status: shipment.status,
    last_status_label: shipment.last_status_label,
    last_status_at: shipment.last_status_at,
  };
}

export async function getShipment(sql: Sql, accountId: string, shipmentId: string, options: { lock?: boolean } = {}) {
  const { rows } = await sql.query(
    `SELECT ${SHIPMENT_COLUMNS} FROM shipments WHERE account_id = $1 AND id = $2 ${options.lock ? 'FOR UPDATE' : ''}`,
    [accountId, shipmentId],
  );
  if (!rows[0]) throw notFound('shipment');
  return rows[0];
}

export async function liveShipmentOf(sql: Sql, accountId: string, orderId: string, exceptId?: string) {
  const { rows } = await sql.query(
    `SELECT ${SHIPMENT_COLUMNS} FROM shipments WHERE account_id = $1 AND order_id = $2 AND status = ANY($3::text[])
       AND ($4::uuid IS NULL OR id <> $4::uuid) ORDER BY created_at DESC LIMIT 1`,
    [accountId, orderId, LIVE_STATUSES, exceptId ?? null],
  );
  return rows[0] ?? null;
}

/** The Shipment view as PostgreSQL writes it (issue 12), or 404. */
export async function getShipmentText(sql: Sql, accountId: string, shipmentId: string): Promise<JsonText> {
  const text = await readOne(sql, SHIPMENT_VIEW, 's.account_id = $1 AND s.id = $2', [accountId, shipmentId]);
  if (!text) throw notFound('shipment');
  return text;
}
