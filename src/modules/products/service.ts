// Catalog records. The public product operations build on these (issue: products and inventory).
import crypto from 'node:crypto';
import type { Sql } from '../../platform/db.ts';
import { applyMovement } from '../inventory/movements.ts';

export interface ProductInput {
  name: string;
  price: number;
  sku?: string | null;
  delivery_type?: 'physical' | 'digital' | 'free';
  weight_g?: number | null;
  stock_quantity?: number | null;
  block_on_zero_stock?: boolean;
  low_stock_threshold?: number | null;
  variants?: Array<{ type?: string | null; name?: string | null; value?: string | null; price_delta?: number | null; stock_quantity?: number | null }>;
}

export async function insertProduct(tx: Sql, accountId: string, input: ProductInput) {
  const id = crypto.randomUUID();
  await tx.query(
    `INSERT INTO products (id, account_id, name, price, sku, delivery_type, weight_g, stock_quantity, block_on_zero_stock, low_stock_threshold)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
    [id, accountId, input.name, input.price, input.sku ?? null, input.delivery_type ?? 'physical', input.weight_g ?? null,
      // Initial stock goes through the ledger below, so the ledger explains every unit.
      input.stock_quantity == null ? null : 0, input.block_on_zero_stock ?? false, input.low_stock_threshold ?? null],
  );
  const variants = [];
  for (const [position, v] of (input.variants ?? []).entries()) {
    const variantId = crypto.randomUUID();
    await tx.query(
      `INSERT INTO product_variants (id, account_id, product_id, type, name, value, price_delta, stock_quantity, position)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
      [variantId, accountId, id, v.type ?? null, v.name ?? null, v.value ?? null, v.price_delta ?? null, v.stock_quantity == null ? null : 0, position],
    );
    variants.push({ id: variantId, ...v, position });
    if (v.stock_quantity) {
      await applyMovement(tx, accountId, { productId: id, variantId, type: 'correction', qty: v.stock_quantity, note: 'initial stock' });
    }
  }
  const variantStock = (input.variants ?? []).reduce((sum, v) => sum + (v.stock_quantity ?? 0), 0);
  const rest = (input.stock_quantity ?? 0) - variantStock;
  if (input.stock_quantity != null && rest !== 0) {
    await applyMovement(tx, accountId, { productId: id, type: 'correction', qty: rest, note: 'initial stock' });
  }
  return { id, name: input.name, sku: input.sku ?? null, price: input.price, delivery_type: input.delivery_type ?? 'physical', variants };
}
