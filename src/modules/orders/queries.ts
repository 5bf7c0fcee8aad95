// Reading orders: the stored Order view (view.ts) and the keyset-paged list.
// Every query is scoped by account_id.
import type { Sql } from '../../platform/db/db.ts';
import { parseStrictDate } from '../../platform/contract/dates.ts';
import { sqlParameters } from '../../platform/contract/paging.ts';
import { readOne, readPage, type Filter, valueOf, type JsonText } from '../../platform/read-path/index.ts';
import type { CursorSeal } from '../../platform/contract/cursor-seal.ts';
import { substringSearch } from '../../platform/contract/search.ts';
import { notFound } from '../../platform/contract/errors.ts';
import type { ListOrdersInput, OrderView } from './schema.ts';
import { orderView } from './view.ts';

/** The lower-cased search text the orders_search (trigram) and orders_search_short indexes are built on. */
export const SEARCH_TEXT = `lower(coalesce(o.customer_name, '') || chr(1) || coalesce(o.customer_phone, '') || chr(1) ||
  coalesce(o.customer_email, '') || chr(1) || coalesce(o.tracking_number, ''))`;

/** The order's stored view, or null. */
export function findOrderText(sql: Sql, accountId: string, orderId: string): Promise<JsonText | null> {
  return readOne(sql, orderView.read, 'o.account_id = $1 AND o.id = $2', [accountId, orderId]);
}

/** The same view as an object, for code that decides on its fields. */
export async function findOrder(sql: Sql, accountId: string, orderId: string): Promise<OrderView | null> {
  const text = await findOrderText(sql, accountId, orderId);
  return text && valueOf<OrderView>(text);
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

export async function getOrderText(sql: Sql, accountId: string, orderId: string): Promise<JsonText> {
  const order = await findOrderText(sql, accountId, orderId);
  if (!order) throw notFound('order');
  return order;
}

export async function getOrder(sql: Sql, accountId: string, orderId: string): Promise<OrderView> {
  const order = await findOrder(sql, accountId, orderId);
  if (!order) throw notFound('order');
  return order;
}

/** The order list's filters (its page and export's), newest first on (created_at, id); `limit` and `cursor` are the page's. */
export async function orderListFilter(sql: Sql, accountId: string, input: Omit<ListOrdersInput, 'limit' | 'cursor'>): Promise<Filter> {
  const productPages = input.product_id ? await pagesSelling(sql, accountId, input.product_id) : [];
  return listFilters(accountId, input, productPages);
}

/** Builds the WHERE clause of the order list; each filter is served by an index (bench/RESULTS-explain.md). */
function listFilters(accountId: string, input: Omit<ListOrdersInput, 'limit' | 'cursor'>, productPages: string[]): Filter {
  const { values, bind } = sqlParameters(accountId);
  const where = ['o.account_id = $1'];
  if (input.status) where.push(`o.status = ${bind(input.status)}`);
  else where.push(`o.status <> 'archived'`);
  if (input.payment !== undefined) where.push(`o.payment_status = ${bind(input.payment)}`);
  if (input.from) where.push(`o.created_at >= ${bind(parseStrictDate('from', input.from, 'start'))}`);
  if (input.to) where.push(`o.created_at <= ${bind(parseStrictDate('to', input.to, 'end'))}`);
  if (input.since) where.push(`o.updated_at >= ${bind(parseStrictDate('since', input.since, 'start'))}`);
  if (input.page_id) where.push(`o.page_id = ${bind(input.page_id)}`);
  if (input.product_id) {
    // The pages selling it are known before planning (productPages), so PostgreSQL can weigh both arms, each an
    // index condition (orders_account_page, orders_line_items): it walks the newest orders for a product on many
    // orders and looks the rows up (a BitmapOr) for one on few, instead of walking the account's orders.
    where.push(`(o.page_id = ANY (${bind(productPages)}::uuid[])
      OR o.line_items @> jsonb_build_array(jsonb_build_object('product_id', ${bind(input.product_id)}::text)))`);
  }
  if (input.courier === 'none') where.push('o.tracking_number IS NULL');
  else if (input.courier !== undefined) where.push(`o.courier = ${bind(input.courier)}`);
  // The latest shipment's status, kept on the order by the orders room (commands.ts, migration 017).
  if (input.shipment_status) where.push(`o.shipment_status = ${bind(input.shipment_status)}`);
  if (input.q) where.push(...substringSearch(SEARCH_TEXT, input.q, bind));
  // since too: its generic plan walks the created_at index (measured 100 ms a page at 100k orders, 1.2 ms on updated_at).
  return { where, values, bind, planPerValue: Boolean(input.product_id || input.q || input.since) };
}

/** A page of the list, newest first, as JSON text. */
export async function listOrders(sql: Sql, accountId: string, input: ListOrdersInput, cursors: CursorSeal): Promise<JsonText> {
  return readPage(sql, orderView.read, await orderListFilter(sql, accountId, input), {
    limit: input.limit ?? 50,
    cursor: input.cursor,
    seal: cursors.scopedTo(accountId),
  });
}

/** SPEC: product_id lists the orders of the pages selling the product (a handful of rows, on pages' GIN index). */
async function pagesSelling(sql: Sql, accountId: string, productId: string): Promise<string[]> {
  const { rows } = await sql.query<{ id: string }>(
    'SELECT id FROM pages WHERE account_id = $1 AND product_ids @> ARRAY[$2]::uuid[]',
    [accountId, productId],
    {
      prepared: true,
    },
  );
  return rows.map((r) => r.id);
}
