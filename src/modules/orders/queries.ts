// Reading orders: the public Order view and the keyset-paged list.
// Every query is scoped by account_id; hidden columns (attribution, IP,
// payment-provider ids, costs) are never selected.
import type { Sql } from '../../platform/db.ts';
import { parseStrictDate } from '../../platform/dates.ts';
import { afterCursor, pageOf, sqlParameters } from '../../platform/paging.ts';
import { notFound } from '../../platform/errors.ts';
import type { ListOrdersInput, OrderView } from './schema.ts';

const ORDER_COLUMNS = `o.id, o.number, o.order_number, o.status, o.payment_status, o.payment_method, o.funnel_step,
  o.parent_order_id, o.total, o.delivery_price, o.discount_amount, o.coupon_code, o.refund_amount_cents, o.refunded_at,
  o.customer_name, o.customer_email, o.customer_phone, o.customer_vat,
  o.shipping_address, o.shipping_city, o.shipping_zip, o.shipping_method, o.courier_slug, o.courier_delivery_mode,
  o.courier_office_id, o.courier, o.tracking_number, o.tracking_url, o.line_items, o.product_name, o.product_sku,
  o.quantity, o.unit_price, o.notes, o.admin_notes, o.return_note, o.page_id, o.invoice_number, o.created_at, o.updated_at,
  s.id AS s_id, s.courier_slug AS s_courier_slug, s.tracking_number AS s_tracking_number, s.status AS s_status,
  s.last_status_label AS s_last_status_label, s.last_status_at AS s_last_status_at`;

/** The latest shipment rides along for the view's `shipment` summary. */
const LATEST_SHIPMENT = `LEFT JOIN LATERAL (
    SELECT id, courier_slug, tracking_number, status, last_status_label, last_status_at FROM shipments
     WHERE account_id = o.account_id AND order_id = o.id ORDER BY created_at DESC, id DESC LIMIT 1
  ) s ON true`;

/** The lower-cased search text the orders_search trigram index is built on. */
export const SEARCH_TEXT = `lower(coalesce(o.customer_name, '') || chr(1) || coalesce(o.customer_phone, '') || chr(1) ||
  coalesce(o.customer_email, '') || chr(1) || coalesce(o.tracking_number, ''))`;

export function toOrderView(r: Record<string, any>): OrderView {
  return {
    id: r.id,
    number: r.number,
    order_number: r.order_number,
    status: r.status,
    payment_status: r.payment_status,
    payment_method: r.payment_method,
    funnel_step: r.funnel_step,
    parent_order_id: r.parent_order_id,
    total: r.total,
    delivery_price: r.delivery_price,
    discount_amount: r.discount_amount,
    coupon_code: r.coupon_code,
    refund_amount_cents: r.refund_amount_cents,
    refunded_at: r.refunded_at,
    customer: { name: r.customer_name, email: r.customer_email, phone: r.customer_phone, vat: r.customer_vat },
    shipping: {
      address: r.shipping_address,
      city: r.shipping_city,
      zip: r.shipping_zip,
      method: r.shipping_method,
      courier_slug: r.courier_slug,
      courier_delivery_mode: r.courier_delivery_mode,
      courier_office_id: r.courier_office_id,
    },
    courier: r.courier,
    tracking_number: r.tracking_number,
    tracking_url: r.tracking_url,
    line_items: r.line_items,
    product_name: r.product_name,
    product_sku: r.product_sku,
    quantity: r.quantity,
    unit_price: r.unit_price,
    notes: r.notes,
    admin_notes: r.admin_notes,
    return_note: r.return_note,
    page_id: r.page_id,
    invoice_number: r.invoice_number,
    shipment: r.s_id
      ? {
          id: r.s_id,
          courier_slug: r.s_courier_slug,
          tracking_number: r.s_tracking_number,
          status: r.s_status,
          last_status_label: r.s_last_status_label,
          last_status_at: r.s_last_status_at,
        }
      : null,
    created_at: r.created_at,
    updated_at: r.updated_at,
  };
}

export async function findOrder(sql: Sql, accountId: string, orderId: string): Promise<OrderView | null> {
  const { rows } = await sql.query(`SELECT ${ORDER_COLUMNS} FROM orders o ${LATEST_SHIPMENT} WHERE o.account_id = $1 AND o.id = $2`, [
    accountId,
    orderId,
  ]);
  return rows[0] ? toOrderView(rows[0]) : null;
}

/** Locks the order row for the rest of the transaction, so concurrent changes apply one after the other. */
export async function lockOrder(sql: Sql, accountId: string, orderId: string): Promise<OrderView> {
  const { rowCount } = await sql.query('SELECT 1 FROM orders WHERE account_id = $1 AND id = $2 FOR UPDATE', [accountId, orderId]);
  if (!rowCount) throw notFound('order');
  return (await findOrder(sql, accountId, orderId))!;
}

/** The operator API addresses orders by id alone; this finds whose order it is. */
export async function accountOfOrder(sql: Sql, orderId: string): Promise<string> {
  const { rows } = await sql.query<{ account_id: string }>('SELECT account_id FROM orders WHERE id = $1', [orderId]);
  if (!rows[0]) throw notFound('order');
  return rows[0].account_id;
}

export async function getOrder(sql: Sql, accountId: string, orderId: string): Promise<OrderView> {
  const order = await findOrder(sql, accountId, orderId);
  if (!order) throw notFound('order');
  return order;
}

/** Builds the WHERE clause of the order list; each filter is served by an index (bench/RESULTS.md). */
function listFilters(accountId: string, input: ListOrdersInput): { where: string[]; params: unknown[]; bind: (v: unknown) => string } {
  const { values: params, bind } = sqlParameters(accountId);
  const where = ['o.account_id = $1'];
  if (input.status) where.push(`o.status = ${bind(input.status)}`);
  else where.push(`o.status <> 'archived'`);
  if (input.payment !== undefined) where.push(`o.payment_status = ${bind(input.payment)}`);
  if (input.from) where.push(`o.created_at >= ${bind(parseStrictDate('from', input.from, 'start'))}`);
  if (input.to) where.push(`o.created_at <= ${bind(parseStrictDate('to', input.to, 'end'))}`);
  if (input.since) where.push(`o.updated_at >= ${bind(parseStrictDate('since', input.since, 'start'))}`);
  if (input.page_id) where.push(`o.page_id = ${bind(input.page_id)}`);
  if (input.product_id) {
    const product = bind(input.product_id);
    where.push(`(o.page_id IN (SELECT p.id FROM pages p WHERE p.account_id = $1 AND p.product_ids @> ARRAY[${product}]::uuid[])
      OR o.line_items @> jsonb_build_array(jsonb_build_object('product_id', ${product}::text)))`);
  }
  if (input.courier === 'none') where.push('o.tracking_number IS NULL');
  else if (input.courier !== undefined) where.push(`o.courier = ${bind(input.courier)}`);
  if (input.shipment_status) {
    where.push(`EXISTS (SELECT 1 FROM shipments ls WHERE ls.account_id = $1 AND ls.order_id = o.id AND ls.status = ${bind(input.shipment_status)}
      AND NOT EXISTS (SELECT 1 FROM shipments nx WHERE nx.account_id = $1 AND nx.order_id = o.id
        AND (nx.created_at, nx.id) > (ls.created_at, ls.id)))`);
  }
  if (input.q) {
    // GAPS: % and _ are literal characters in q.
    const pattern = `%${input.q.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    where.push(`${SEARCH_TEXT} LIKE ${bind(pattern)}`);
  }
  return { where, params, bind };
}

export async function listOrders(sql: Sql, accountId: string, input: ListOrdersInput) {
  const limit = input.limit ?? 50;
  const { where, params, bind } = listFilters(accountId, input);
  if (input.cursor) where.push(afterCursor(input.cursor, bind, 'o'));
  const { rows } = await sql.query(
    `SELECT ${ORDER_COLUMNS} FROM (
        SELECT * FROM orders o WHERE ${where.join(' AND ')}
         ORDER BY o.created_at DESC, o.id DESC LIMIT ${bind(limit + 1)}
      ) o ${LATEST_SHIPMENT}
      ORDER BY o.created_at DESC, o.id DESC`,
    params,
  );
  return pageOf(rows.map(toOrderView), limit, (order) => ({ createdAt: order.created_at, id: order.id }));
}
