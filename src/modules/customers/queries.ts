// Listing customers: an index scan over customer_aggregates, newest last
// order first; the unfiltered total is a kept count. PostgreSQL writes the Customer view (issue 12).
import type { Sql } from '../../platform/db/db.ts';
import { isoTime, jsonNumber, jsonObject, type JsonView, readOffsetPage, type Filter, JsonText } from '../../platform/read-path/index.ts';
import { sqlParameters } from '../../platform/contract/paging.ts';
import { substringSearch } from '../../platform/contract/search.ts';

export const CUSTOMER_SEARCH = `lower(coalesce(c.name, '') || chr(1) || coalesce(c.email, '') || chr(1) || coalesce(c.phone, ''))`;

export const CUSTOMER_VIEW: JsonView = {
  from: 'customer_aggregates c',
  alias: 'c',
  json: jsonObject({
    key: 'c.key',
    name: 'c.name',
    email: 'c.email',
    phone: 'c.phone',
    orders_count: 'c.orders_count',
    total_spent: jsonNumber('c.total_spent'),
    first_order_at: isoTime('c.first_order_at'),
    last_order_at: isoTime('c.last_order_at'),
  }),
};

/** The customer list's order: the most recent order first, then the key. */
export const CUSTOMER_ORDER = 'c.last_order_at DESC, c.key';

/** The customer list's filters (its page and export's). */
export function customerListFilter(accountId: string, input: { q?: string }): Filter {
  const { values, bind } = sqlParameters(accountId);
  const where = ['c.account_id = $1'];
  if (input.q) where.push(...substringSearch(CUSTOMER_SEARCH, input.q, bind));
  return { where, values, bind };
}

export async function listCustomers(sql: Sql, accountId: string, input: { limit?: number; offset?: number; q?: string }): Promise<JsonText> {
  const limit = input.limit ?? 50;
  const offset = input.offset ?? 0;
  const { where, values } = customerListFilter(accountId, input);
  const conditions = where.join(' AND ');
  // Unfiltered, the total is the account's kept count (aggregates.ts, migration 017), not a count of its customers.
  const totalSql = input.q
    ? `SELECT count(*)::int AS total FROM customer_aggregates c WHERE ${conditions}`
    : 'SELECT coalesce(sum(customers), 0)::int AS total FROM customer_counts WHERE account_id = $1';
  const [data, count] = await Promise.all([
    readOffsetPage(sql, CUSTOMER_VIEW, ['account_id', 'key'], conditions, values, { orderBy: CUSTOMER_ORDER, limit, offset }),
    sql.query<{ total: number }>(totalSql, input.q ? values : [accountId]),
  ]);
  const total = count.rows[0].total;
  const shown = offset >= total ? 0 : Math.min(limit, total - offset);
  return JsonText.object({ data, total, limit, offset, has_more: offset + shown < total });
}
