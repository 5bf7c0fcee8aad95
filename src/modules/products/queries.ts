// Reading the catalog: products with their variants, keyset-paged newest first.
import type { Sql } from '../../platform/db.ts';
import { notFound } from '../../platform/errors.ts';
import { afterCursor, pageOf, sqlParameters } from '../../platform/paging.ts';
import type { ListProductsInput, ProductView } from './schema.ts';

const PRODUCT_COLUMNS = `id, name, marketing_name, sku, price, original_price, active, delivery_type, offer_type, description, images,
  stock_quantity, block_on_zero_stock, low_stock_threshold, weight_g, dim_cm, shipping_short_name, shipping_category,
  catalog_hidden, language, created_at, updated_at`;

async function withVariants(sql: Sql, accountId: string, rows: any[]): Promise<ProductView[]> {
  if (rows.length === 0) return [];
  const { rows: variants } = await sql.query(
    `SELECT id, product_id, type, name, value, price_delta, stock_quantity, image_url, position FROM product_variants
      WHERE account_id = $1 AND product_id = ANY($2::uuid[]) ORDER BY position NULLS LAST, id`,
    [accountId, rows.map((r) => r.id)],
  );
  const byProduct = new Map<string, any[]>();
  for (const { product_id, ...variant } of variants) {
    if (!byProduct.has(product_id)) byProduct.set(product_id, []);
    byProduct.get(product_id)!.push(variant);
  }
  return rows.map((r) => ({ ...r, variants: byProduct.get(r.id) ?? [] }));
}

export async function findProduct(sql: Sql, accountId: string, productId: string): Promise<ProductView | null> {
  const { rows } = await sql.query(`SELECT ${PRODUCT_COLUMNS} FROM products WHERE account_id = $1 AND id = $2`, [accountId, productId]);
  return (await withVariants(sql, accountId, rows))[0] ?? null;
}

export async function getProduct(sql: Sql, accountId: string, productId: string): Promise<ProductView> {
  const product = await findProduct(sql, accountId, productId);
  if (!product) throw notFound('product');
  return product;
}

export async function listProducts(sql: Sql, accountId: string, input: ListProductsInput) {
  const limit = input.limit ?? 50;
  const { values: params, bind } = sqlParameters(accountId);
  const where = ['account_id = $1'];
  if ((input.status ?? 'active') === 'active') where.push('active');
  if (input.delivery_type) where.push(`delivery_type = ${bind(input.delivery_type)}`);
  if (input.sku) where.push(`sku = ${bind(input.sku)}`);
  if (input.cursor) where.push(afterCursor(input.cursor, bind));
  const { rows } = await sql.query(
    `SELECT ${PRODUCT_COLUMNS} FROM products WHERE ${where.join(' AND ')} ORDER BY created_at DESC, id DESC LIMIT ${bind(limit + 1)}`,
    params,
  );
  const page = pageOf(rows, limit, (p) => ({ createdAt: p.created_at, id: p.id }));
  return { ...page, data: await withVariants(sql, accountId, page.data) };
}
