// Stock levels of active physical products (SPEC Stock item; GAPS Inventory).
import type { Sql } from '../../platform/db.ts';

export async function stockLevels(sql: Sql, accountId: string, productId?: string) {
  const { rows: account } = await sql.query<{ default_threshold: number }>('SELECT default_threshold FROM accounts WHERE id = $1', [accountId]);
  const defaultThreshold = account[0]?.default_threshold ?? 5;
  const params: unknown[] = [accountId, defaultThreshold];
  if (productId) params.push(productId);
  const { rows } = await sql.query(
    `SELECT p.id AS product_id, p.name, p.sku, p.stock_quantity IS NOT NULL AS tracked, coalesce(p.stock_quantity, 0) AS stock_quantity,
            p.low_stock_threshold, coalesce(p.low_stock_threshold, $2) AS effective_threshold,
            (p.stock_quantity IS NOT NULL AND p.stock_quantity <= coalesce(p.low_stock_threshold, $2)) AS low, p.block_on_zero_stock,
            coalesce((SELECT json_agg(json_build_object('id', v.id, 'name', v.name, 'value', v.value,
                        'stock_quantity', coalesce(v.stock_quantity, 0), 'tracked', v.stock_quantity IS NOT NULL) ORDER BY v.position, v.id)
                        FROM product_variants v WHERE v.account_id = p.account_id AND v.product_id = p.id), '[]'::json) AS variants
       FROM products p
      WHERE p.account_id = $1 AND p.active AND p.delivery_type = 'physical' ${productId ? 'AND p.id = $3' : ''}
      ORDER BY p.name, p.id`,
    params,
  );
  return { data: rows, default_threshold: defaultThreshold };
}
