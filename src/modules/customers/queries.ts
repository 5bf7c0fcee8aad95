// Listing customers: an index scan over customer_aggregates, newest last order first.
import type { Sql } from '../../platform/db.ts';

const COLUMNS = 'key, name, email, phone, orders_count, total_spent, first_order_at, last_order_at';
export const CUSTOMER_SEARCH = `lower(coalesce(c.name, '') || chr(1) || coalesce(c.email, '') || chr(1) || coalesce(c.phone, ''))`;

export async function listCustomers(sql: Sql, accountId: string, input: { limit?: number; offset?: number; q?: string }) {
  const limit = input.limit ?? 50;
  const offset = input.offset ?? 0;
  const params: unknown[] = [accountId];
  let where = 'c.account_id = $1';
  if (input.q) {
    params.push(`%${input.q.toLowerCase().replace(/[\\%_]/g, (ch) => `\\${ch}`)}%`);
    where += ` AND ${CUSTOMER_SEARCH} LIKE $2`;
  }
  const [page, count] = await Promise.all([
    sql.query(`SELECT ${COLUMNS} FROM customer_aggregates c WHERE ${where} ORDER BY c.last_order_at DESC, c.key LIMIT ${limit} OFFSET ${offset}`, params),
    sql.query<{ total: number }>(`SELECT count(*)::int AS total FROM customer_aggregates c WHERE ${where}`, params),
  ]);
  const total = count.rows[0].total;
  return { data: page.rows, total, limit, offset, has_more: offset + page.rows.length < total };
}
