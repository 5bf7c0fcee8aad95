// Stock levels of active physical products (SPEC Stock item; GAPS Inventory),
// written by PostgreSQL (issue 12).
import type { Sql } from '../../platform/db/db.ts';
import { jsonArray, jsonObject, type JsonView, readArray, JsonText } from '../../platform/read-path/index.ts';

/** $2 is the account's default threshold. */
export const STOCK_ITEM_VIEW: JsonView = {
  from: 'products p',
  alias: 'p',
  json: jsonObject({
    product_id: 'p.id',
    name: 'p.name',
    sku: 'p.sku',
    tracked: 'p.stock_quantity IS NOT NULL',
    stock_quantity: 'coalesce(p.stock_quantity, 0)',
    low_stock_threshold: 'p.low_stock_threshold',
    effective_threshold: 'coalesce(p.low_stock_threshold, $2::int)',
    low: '(p.stock_quantity IS NOT NULL AND p.stock_quantity <= coalesce(p.low_stock_threshold, $2::int))',
    block_on_zero_stock: 'p.block_on_zero_stock',
    variants: jsonArray(
      jsonObject({
        id: 'v.id',
        name: 'v.name',
        value: 'v.value',
        stock_quantity: 'coalesce(v.stock_quantity, 0)',
        tracked: 'v.stock_quantity IS NOT NULL',
      }),
      'product_variants v WHERE v.account_id = p.account_id AND v.product_id = p.id',
      'v.position, v.id',
    ),
  }),
};

/**
 * Issue 41: natural order of names, "Product 2" before "Product 11": the text before the first number, then that
 * number's value, then the whole name. (ICU's numeric collation is not in every build PGlite and PostgreSQL ship.)
 */
export const NATURAL_NAME_ORDER = "substring(p.name from '^\\D*'), substring(p.name from '\\d+')::numeric NULLS FIRST, p.name, p.id";

export async function stockLevels(sql: Sql, accountId: string, productId?: string): Promise<JsonText> {
  const { rows: account } = await sql.query<{ default_threshold: number }>('SELECT default_threshold FROM accounts WHERE id = $1', [accountId]);
  const defaultThreshold = account[0]?.default_threshold ?? 5;
  const params: unknown[] = [accountId, defaultThreshold];
  if (productId) params.push(productId);
  const where = `p.account_id = $1 AND p.active AND p.delivery_type = 'physical' ${productId ? 'AND p.id = $3' : ''}`;
  const data = await readArray(sql, STOCK_ITEM_VIEW, where, params, NATURAL_NAME_ORDER);
  return JsonText.object({ data, default_threshold: defaultThreshold });
}
