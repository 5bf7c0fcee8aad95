// Reading shipments. Every query is scoped by account_id.
import type { Sql } from '../../platform/db.ts';

export const SHIPMENT_COLUMNS = `id, order_id, courier_slug, tracking_number, status, last_status_label, last_status_at,
  status_events, delivery_mode, office_id, recipient_address, cod_amount, shipping_cost, parcel_weight_g,
  parcel_dim_cm, sender_origin, shipment_terms, created_at, updated_at`;

/** The newest shipment of an order (SPEC: GET /orders/{id}/shipment), or null. */
export async function latestShipmentOf(sql: Sql, accountId: string, orderId: string) {
  const { rows } = await sql.query(
    `SELECT ${SHIPMENT_COLUMNS} FROM shipments WHERE account_id = $1 AND order_id = $2
      ORDER BY created_at DESC, id DESC LIMIT 1`,
    [accountId, orderId],
  );
  return rows[0] ?? null;
}
