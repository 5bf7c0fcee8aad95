// Computed segment filters (SPEC Customers and segments; GAPS value types),
// compiled to SQL over customer_aggregates c.
import type { Sql } from '../../platform/db/db.ts';
import { AppError, notFound } from '../../platform/contract/errors.ts';
import { parseStrictDate } from '../../platform/contract/dates.ts';
import { UNCOUNTED_STATUSES } from './aggregates.ts';

export type Filters = Record<string, unknown>;

const MAX_NESTING = 3;

/** Builds the WHERE conditions for a computed segment; `bind` adds a parameter and returns its placeholder. */
export async function filterConditions(
  sql: Sql,
  accountId: string,
  filters: Filters,
  bind: (v: unknown) => string,
  depth = 0,
  strict = false,
): Promise<string[]> {
  const where: string[] = [];
  // Bound only when used: an unreferenced parameter has no type and Postgres refuses it.
  const counted = () => `o.status <> ALL(${bind(UNCOUNTED_STATUSES)}::text[])`;
  const f = filters as Record<string, any>;
  if (f.minTotal !== undefined) where.push(`c.total_spent >= ${bind(f.minTotal)}`);
  if (f.maxTotal !== undefined) where.push(`c.total_spent <= ${bind(f.maxTotal)}`);
  if (f.minOrders !== undefined) where.push(`c.orders_count >= ${bind(f.minOrders)}`);
  if (f.maxOrders !== undefined) where.push(`c.orders_count <= ${bind(f.maxOrders)}`);
  if (f.lastOrderBeforeDaysAgo !== undefined) where.push(`c.last_order_at < now() - make_interval(days => ${bind(f.lastOrderBeforeDaysAgo)}::int)`);
  if (f.lastOrderAfterDate !== undefined)
    where.push(`c.last_order_at >= ${bind(parseStrictDate('lastOrderAfterDate', f.lastOrderAfterDate))}::timestamptz`);
  if (f.lastOrderBeforeDate !== undefined)
    where.push(`c.last_order_at < ${bind(parseStrictDate('lastOrderBeforeDate', f.lastOrderBeforeDate))}::timestamptz`);
  if (f.productId !== undefined) {
    const product = bind(f.productId);
    const account = bind(accountId);
    // Uncorrelated: the orders of the product (GIN on line_items, page index), hashed once, not one probe per customer.
    where.push(`c.key IN (SELECT o.customer_key FROM orders o WHERE o.account_id = ${account}::uuid AND o.customer_key IS NOT NULL AND ${counted()}
      AND (o.line_items @> jsonb_build_array(jsonb_build_object('product_id', ${product}::text))
        OR o.page_id = ANY (ARRAY(SELECT p.id FROM pages p WHERE p.account_id = ${account}::uuid AND p.product_ids @> ARRAY[${product}::uuid]))))`);
  }
  if (f.pageId !== undefined) {
    where.push(
      `EXISTS (SELECT 1 FROM orders o WHERE o.account_id = c.account_id AND o.customer_key = c.key AND ${counted()} AND o.page_id = ${bind(f.pageId)}::uuid)`,
    );
  }
  if (f.hasEmail !== undefined) where.push(`(c.email IS NOT NULL) = ${bind(f.hasEmail)}`);
  if (f.hasPhone !== undefined) where.push(`(c.phone IS NOT NULL) = ${bind(f.hasPhone)}`);
  if (f.hasAbandonedCart !== undefined) {
    const account = bind(accountId);
    const emails = `SELECT customer_key_of(ac.email, NULL) FROM abandoned_carts ac WHERE ac.account_id = ${account}::uuid AND ac.email IS NOT NULL`;
    const phones = `SELECT ac.phone FROM abandoned_carts ac WHERE ac.account_id = ${account}::uuid AND ac.phone IS NOT NULL`;
    // Uncorrelated IN lists (hashed once) instead of an OR-ed probe per customer that no index can serve.
    where.push(
      `(c.key IN (${emails}) OR c.key IN (${phones}) OR coalesce(c.email IN (${emails}), false) OR coalesce(c.phone IN (${phones}), false)) = ${bind(f.hasAbandonedCart)}`,
    );
  }
  if (f.inSegment !== undefined) {
    const { rows } = await sql.query<{ id: string; filters: Filters }>('SELECT id, filters FROM segments WHERE account_id = $1 AND id = $2', [
      accountId,
      f.inSegment,
    ]);
    const target = rows[0];
    if (!target && !strict) return ['false'];
    if (!target) throw notFound('filters.inSegment: segment');
    if (isMembership(target.id, target.filters)) {
      where.push(`c.key IN (SELECT m.customer_key FROM segment_members m WHERE m.segment_id = ${bind(target.id)}::uuid)`);
    } else {
      if (depth >= MAX_NESTING) throw new AppError('validation_failed', `segments nest at most ${MAX_NESTING} deep through inSegment`);
      where.push(...(await filterConditions(sql, accountId, target.filters, bind, depth + 1, strict)));
    }
  }
  return where;
}

/** Filter ids that name a row of the account, and that row's table. */
const OWNED_IDS = { productId: ['products', 'product'], pageId: ['pages', 'page'] } as const;

/**
 * SPEC Errors: an id of another account's row is 404, as for path ids; ids
 * inside filters too (productId and pageId here, inSegment when compiled).
 */
export async function requireOwnFilterIds(sql: Sql, accountId: string, filters: Filters): Promise<void> {
  for (const [key, [table, noun]] of Object.entries(OWNED_IDS)) {
    const id = filters[key];
    if (id === undefined) continue;
    const { rowCount } = await sql.query(`SELECT 1 FROM ${table} WHERE account_id = $1 AND id = $2`, [accountId, id]);
    if (!rowCount) throw notFound(`filters.${key}: ${noun}`);
  }
}

/** SPEC: a segment whose filters are exactly {inSegment: <its own id>} is a membership segment. */
export function isMembership(segmentId: string, filters: Filters): boolean {
  const keys = Object.keys(filters);
  return keys.length === 1 && filters.inSegment === segmentId;
}
