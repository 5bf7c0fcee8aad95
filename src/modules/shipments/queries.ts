// Reading shipments: the stored Shipment view (view.ts) and the rows the
// shipment commands decide on. Every query is scoped by account_id.
import type { Sql } from '../../platform/db/db.ts';
import { notFound } from '../../platform/contract/errors.ts';
import { sqlParameters } from '../../platform/contract/paging.ts';
import { JsonText, readOne, readPage, type Filter } from '../../platform/read-path/index.ts';
import { parseStrictDate } from '../../platform/contract/dates.ts';
import type { CursorSeal } from '../../platform/contract/cursor-seal.ts';
import { shipmentView } from './view.ts';

export const SHIPMENT_COLUMNS = `id, order_id, courier_slug, tracking_number, status, last_status_label, last_status_at,
  status_events, delivery_mode, office_id, recipient_address, cod_amount, shipping_cost, parcel_weight_g,
  parcel_dim_cm, sender_origin, shipment_terms, created_at, updated_at`;

/** The newest shipment of an order as PostgreSQL writes its view (SPEC: GET /orders/{id}/shipment), or JSON null. */
export async function latestShipmentText(sql: Sql, accountId: string, orderId: string): Promise<JsonText> {
  const { rows } = await sql.query<{ v: string }>(
    `SELECT ${shipmentView.read.json} AS v FROM shipments s WHERE s.account_id = $1 AND s.order_id = $2
      ORDER BY s.created_at DESC, s.id DESC LIMIT 1`,
    [accountId, orderId],
    { prepared: true },
  );
  return new JsonText(rows[0]?.v ?? 'null');
}

/** The account's shipments, newest first, keyset paged (the operator console's list). */
export function listShipments(
  sql: Sql,
  accountId: string,
  filter: { status?: string; courier?: string; limit: number; cursor?: string },
  cursors: CursorSeal,
): Promise<JsonText> {
  const { values, bind } = sqlParameters(accountId);
  const where = ['s.account_id = $1'];
  if (filter.status) where.push(`s.status = ${bind(filter.status)}`);
  if (filter.courier) where.push(`s.courier_slug = ${bind(filter.courier)}`);
  return readPage(sql, shipmentView.read, { where, values, bind }, { limit: filter.limit, cursor: filter.cursor, seal: cursors.scopedTo(accountId) });
}

/** EXTENSIONS 8: an export's shipments (SPEC has no shipment list): status, courier, created at or after `since`; newest first. */
export function shipmentExportFilter(accountId: string, input: { status?: string; courier?: string; since?: string }): Filter {
  const { values, bind } = sqlParameters(accountId);
  const where = ['s.account_id = $1'];
  if (input.status) where.push(`s.status = ${bind(input.status)}`);
  if (input.courier) where.push(`s.courier_slug = ${bind(input.courier)}`);
  if (input.since) where.push(`s.created_at >= ${bind(parseStrictDate('since', input.since, 'start'))}`);
  return { where, values, bind };
}

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

/** The stored Shipment view, or 404. */
export async function getShipmentText(sql: Sql, accountId: string, shipmentId: string): Promise<JsonText> {
  const text = await readOne(sql, shipmentView.read, 's.account_id = $1 AND s.id = $2', [accountId, shipmentId]);
  if (!text) throw notFound('shipment');
  return text;
}
