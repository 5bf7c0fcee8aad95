// Stock levels on catalog records. The inventory room decides them (its
// ledger explains every unit); the products room owns the rows they live on.
import type { Sql } from '../../platform/db/db.ts';

export async function writeProductStock(tx: Sql, accountId: string, productId: string, stock: number | null, avgCost: number | null): Promise<void> {
  await tx.query('UPDATE products SET stock_quantity = $3, avg_cost = $4, updated_at = now() WHERE account_id = $1 AND id = $2', [
    accountId,
    productId,
    stock,
    avgCost,
  ]);
}

export async function writeVariantStock(tx: Sql, accountId: string, variantId: string, stock: number | null): Promise<void> {
  await tx.query('UPDATE product_variants SET stock_quantity = $3 WHERE account_id = $1 AND id = $2', [accountId, variantId, stock]);
}
