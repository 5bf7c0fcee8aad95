// Listing customers: an index scan over customer_aggregates, newest last
// order first. PostgreSQL writes the Customer view (issue 12).
import type { Sql } from '../../platform/db.ts';
import { isoTime, jsonNumber, jsonObject, type JsonView } from '../../platform/json-view.ts';
import { readArray } from '../../platform/read-sql.ts';
import { JsonText } from '../../platform/json-text.ts';

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

export async function listCustomers(sql: Sql, accountId: string, input: { limit?: number; offset?: number; q?: string }): Promise<JsonText> {
  const limit = input.limit ?? 50;
  const offset = input.offset ?? 0;
  const params: unknown[] = [accountId];
  let where = 'c.account_id = $1';
  if (input.q) {
    params.push(`%${input.q.toLowerCase().replace(/[\\%_]/g, (ch) => `\\${ch}`)}%`);
    where += ` AND ${CUSTOMER_SEARCH} LIKE $2`;
  }
  const [data, count] = await Promise.all([
    readArray(sql, CUSTOMER_VIEW, where, params, `c.last_order_at DESC, c.key LIMIT ${limit} OFFSET ${offset}`),
    sql.query<{ total: number }>(`SELECT count(*)::int AS total FROM customer_aggregates c WHERE ${where}`, params),
  ]);
  const total = count.rows[0].total;
  const shown = offset >= total ? 0 : Math.min(limit, total - offset);
  return JsonText.object({ data, total, limit, offset, has_more: offset + shown < total });
}
