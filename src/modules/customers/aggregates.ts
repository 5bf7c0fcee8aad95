// Keeping customer aggregates in step with orders. Every order write that can
// change a customer's numbers calls refreshCustomer in its own transaction,
// which also keeps the account's customer count (customer_counts) exact.
import type { Sql } from '../../platform/db/db.ts';

/** SPEC: cancelled, archived and refunded orders do not count. */
export const UNCOUNTED_STATUSES = ['cancelled', 'archived', 'refunded'];

const AGGREGATE = `
  SELECT o.account_id, o.customer_key AS key,
         (array_agg(o.customer_name ORDER BY o.created_at DESC, o.id DESC))[1] AS name,
         (array_agg(customer_key_of(o.customer_email, NULL) ORDER BY o.created_at DESC, o.id DESC))[1] AS email,
         (array_agg(nullif(btrim(o.customer_phone), '') ORDER BY o.created_at DESC, o.id DESC))[1] AS phone,
         count(*) AS orders_count, coalesce(sum(o.total), 0) AS total_spent,
         min(o.created_at) AS first_order_at, max(o.created_at) AS last_order_at
    FROM orders o
   WHERE o.account_id = $1 AND o.customer_key IS NOT NULL AND o.status <> ALL($2::text[]) %KEYS%
   GROUP BY o.account_id, o.customer_key`;

const UPSERT = `
  INSERT INTO customer_aggregates (account_id, key, name, email, phone, orders_count, total_spent, first_order_at, last_order_at)
  %SELECT%
  ON CONFLICT (account_id, key) DO UPDATE SET name = EXCLUDED.name, email = EXCLUDED.email, phone = EXCLUDED.phone,
    orders_count = EXCLUDED.orders_count, total_spent = EXCLUDED.total_spent,
    first_order_at = EXCLUDED.first_order_at, last_order_at = EXCLUDED.last_order_at`;

/** Recomputes one customer from their orders (an index lookup on orders.customer_key). */
export async function refreshCustomer(tx: Sql, accountId: string, key: string | null): Promise<void> {
  if (!key) return;
  // Two transactions refreshing one customer at once (different orders locked) must not interleave.
  await tx.query("SELECT pg_advisory_xact_lock(hashtextextended($1::text || ':' || $2, 0))", [accountId, key]);
  const removed = await tx.query('DELETE FROM customer_aggregates WHERE account_id = $1 AND key = $3 AND $2::text[] IS NOT NULL', [
    accountId,
    UNCOUNTED_STATUSES,
    key,
  ]);
  const added = await tx.query(UPSERT.replace('%SELECT%', AGGREGATE.replace('%KEYS%', 'AND o.customer_key = $3')), [
    accountId,
    UNCOUNTED_STATUSES,
    key,
  ]);
  const change = added.rowCount - removed.rowCount;
  if (change !== 0) {
    // Only a customer's first counted order or the loss of their last one moves the total, on the key's stripe.
    await tx.query(
      `INSERT INTO customer_counts (account_id, stripe, customers) VALUES ($1, hashtextextended($2, 0) & 15, $3)
       ON CONFLICT (account_id, stripe) DO UPDATE SET customers = customer_counts.customers + EXCLUDED.customers`,
      [accountId, key, change],
    );
  }
}

export async function refreshCustomerOfOrder(tx: Sql, accountId: string, orderId: string): Promise<void> {
  const { rows } = await tx.query<{ customer_key: string | null }>('SELECT customer_key FROM orders WHERE account_id = $1 AND id = $2', [
    accountId,
    orderId,
  ]);
  await refreshCustomer(tx, accountId, rows[0]?.customer_key ?? null);
}

/** Rebuilds every customer of an account (after a bulk load). */
export async function rebuildCustomers(tx: Sql, accountId: string): Promise<void> {
  await tx.query('DELETE FROM customer_aggregates WHERE account_id = $1', [accountId]);
  await tx.query(UPSERT.replace('%SELECT%', AGGREGATE.replace('%KEYS%', '')), [accountId, UNCOUNTED_STATUSES]);
  await tx.query('DELETE FROM customer_counts WHERE account_id = $1', [accountId]);
  await tx.query(
    `INSERT INTO customer_counts (account_id, stripe, customers)
     SELECT account_id, hashtextextended(key, 0) & 15, count(*) FROM customer_aggregates WHERE account_id = $1 GROUP BY 1, 2`,
    [accountId],
  );
}
