// Bulk synthetic catalog records for the operator's seed (operator/seed.ts):
// one set-based INSERT ... SELECT, deterministic under the caller's setseed().
// Stock is left untracked, so no movement is owed.
import type { Sql } from '../../platform/db/db.ts';

export async function seedProducts(tx: Sql, accountId: string, count: number): Promise<void> {
  await tx.query(
    `INSERT INTO products (id, account_id, name, sku, price, delivery_type, weight_g, created_at, updated_at)
     SELECT gen_random_uuid(), $1, 'Product ' || g, 'SKU-' || lpad(g::text, 6, '0'), round((5 + random() * 95)::numeric, 2),
            CASE WHEN g % 10 = 0 THEN 'digital' ELSE 'physical' END, 100 + (g * 37) % 900,
            now() - make_interval(mins => g), now() - make_interval(mins => g)
       FROM generate_series(1, $2::int) g`,
    [accountId, count],
  );
}
