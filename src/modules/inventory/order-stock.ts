// Stock side effects of orders (SPEC order state table; GAPS Inventory):
// checkout sells, cancellation releases, returned/refunded restock; each at
// most once per order however often its status flips. The courier status
// mirror calls the same functions.
import type { Sql } from '../../platform/db/db.ts';
import { AppError } from '../../platform/contract/errors.ts';
import { applyMovement } from './movements.ts';

interface SoldItem {
  product_id: string | null;
  variant_id: string | null;
  qty: number;
}

/** Checkout: a `sale` per tracked product; a block_on_zero_stock product without the stock refuses the order. */
export async function recordSale(tx: Sql, accountId: string, orderId: string, items: SoldItem[]): Promise<void> {
  const totals = new Map<string, { productId: string; variantId: string | null; qty: number }>();
  for (const item of items) {
    if (!item.product_id) continue;
    const key = `${item.product_id}/${item.variant_id ?? ''}`;
    const entry = totals.get(key) ?? { productId: item.product_id, variantId: item.variant_id, qty: 0 };
    entry.qty += item.qty;
    totals.set(key, entry);
  }
  // A fixed lock order: two checkouts of the same products never deadlock.
  const sold = [...totals.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([, v]) => v);
  for (const line of sold) {
    const { rows } = await tx.query<{ stock_quantity: number | null; block_on_zero_stock: boolean; name: string }>(
      'SELECT stock_quantity, block_on_zero_stock, name FROM products WHERE account_id = $1 AND id = $2 FOR UPDATE',
      [accountId, line.productId],
    );
    const product = rows[0];
    if (!product || product.stock_quantity === null) continue; // not tracked: nothing to move
    let available = product.stock_quantity;
    if (line.variantId) {
      const { rows: variants } = await tx.query<{ stock_quantity: number | null }>(
        'SELECT stock_quantity FROM product_variants WHERE account_id = $1 AND id = $2 FOR UPDATE',
        [accountId, line.variantId],
      );
      // A variant without its own count draws on the product's.
      if (variants[0]?.stock_quantity != null) available = Math.min(available, variants[0].stock_quantity);
    }
    if (product.block_on_zero_stock && available < line.qty) {
      throw new AppError('conflict', `${product.name} is out of stock (${available} left)`, { kind: 'out_of_stock' });
    }
    await applyMovement(tx, accountId, { productId: line.productId, variantId: line.variantId, type: 'sale', qty: -line.qty, orderId });
  }
}

/** Gives an order's sold stock back once: `release` on cancellation, `return` on returned or refunded. */
export async function restockOrder(tx: Sql, accountId: string, orderId: string, type: 'release' | 'return'): Promise<void> {
  const { rows } = await tx.query<{ product_id: string; variant_id: string | null; qty: number; type: string }>(
    `SELECT product_id, variant_id, qty, type FROM stock_movements WHERE account_id = $1 AND order_id = $2 ORDER BY product_id, variant_id`,
    [accountId, orderId],
  );
  if (rows.some((m) => m.type === 'release' || m.type === 'return')) return;
  for (const sale of rows.filter((m) => m.type === 'sale')) {
    await applyMovement(tx, accountId, { productId: sale.product_id, variantId: sale.variant_id, type, qty: -sale.qty, orderId });
  }
}

/** The stock effect of an order reaching `status`, if any. */
export async function applyOrderStatusStock(tx: Sql, accountId: string, orderId: string, status: string): Promise<void> {
  if (status === 'cancelled') await restockOrder(tx, accountId, orderId, 'release');
  else if (status === 'returned' || status === 'refunded') await restockOrder(tx, accountId, orderId, 'return');
}
