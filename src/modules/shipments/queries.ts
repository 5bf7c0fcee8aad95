// Reading shipments. Every query is scoped by account_id.
import type { Sql } from '../../platform/db.ts';
import { sqlParameters } from '../../platform/paging.ts';
import { JsonText } from '../../platform/json-text.ts';
import { readPage } from '../../platform/read-sql.ts';
import type { CursorSeal } from '../../platform/cursor-seal.ts';
import { isoTime, jsonNumber, jsonObject, type JsonView } from '../../platform/json-view.ts';

/** SPEC Shipment view, written by PostgreSQL (issue 12). */
export const SHIPMENT_VIEW: JsonView = {
  from: 'shipments s',
  alias: 's',
  json: jsonObject({
    id: 's.id',
    order_id: 's.order_id',
    courier_slug: 's.courier_slug',
    tracking_number: 's.tracking_number',
    status: 's.status',
    last_status_label: 's.last_status_label',
    last_status_at: isoTime('s.last_status_at'),
    status_events: 's.status_events_json',
    delivery_mode: 's.delivery_mode',
    office_id: 's.office_id',
    recipient_address: 's.recipient_address_json',
    cod_amount: jsonNumber('s.cod_amount'),
    shipping_cost: jsonNumber('s.shipping_cost'),
    parcel_weight_g: 's.parcel_weight_g',
    parcel_dim_cm: 's.parcel_dim_cm_json',
    sender_origin: 's.sender_origin_json',
    shipment_terms: 's.shipment_terms_json',
    created_at: isoTime('s.created_at'),
    updated_at: isoTime('s.updated_at'),
  }),
};

export const SHIPMENT_COLUMNS = `id, order_id, courier_slug, tracking_number, status, last_status_label, last_status_at,
  status_events, delivery_mode, office_id, recipient_address, cod_amount, shipping_cost, parcel_weight_g,
  parcel_dim_cm, sender_origin, shipment_terms, created_at, updated_at`;

/** The newest shipment of an order as PostgreSQL writes its view (SPEC: GET /orders/{id}/shipment), or JSON null. */
export async function latestShipmentText(sql: Sql, accountId: string, orderId: string): Promise<JsonText> {
  const { rows } = await sql.query<{ v: string }>(
    `SELECT ${SHIPMENT_VIEW.json}::text AS v FROM shipments s WHERE s.account_id = $1 AND s.order_id = $2
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
  return readPage(sql, SHIPMENT_VIEW, { where, values, bind }, { limit: filter.limit, cursor: filter.cursor, seal: cursors.scopedTo(accountId) });
}
