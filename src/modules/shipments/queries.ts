// Reading shipments. Every query is scoped by account_id.
import type { Sql } from '../../platform/db.ts';
import { afterCursor, pageOf, sqlParameters } from '../../platform/paging.ts';

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

/** The account's shipments, newest first, keyset paged (the operator console's list). */
export async function listShipments(sql: Sql, accountId: string, filter: { status?: string; courier?: string; limit: number; cursor?: string }) {
  const { values, bind } = sqlParameters(accountId);
  const where = ['account_id = $1'];
  if (filter.status) where.push(`status = ${bind(filter.status)}`);
  if (filter.courier) where.push(`courier_slug = ${bind(filter.courier)}`);
  if (filter.cursor) where.push(afterCursor(filter.cursor, bind));
  const { rows } = await sql.query(
    `SELECT ${SHIPMENT_COLUMNS} FROM shipments WHERE ${where.join(' AND ')} ORDER BY created_at DESC, id DESC LIMIT ${bind(filter.limit + 1)}`,
    values,
  );
  return pageOf(rows, filter.limit, (row: Record<string, any>) => ({ createdAt: row.created_at, id: row.id }));
}
