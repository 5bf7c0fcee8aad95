// Reading the catalog: products with their variants, keyset-paged newest
// first. PostgreSQL writes the Product view (issue 12).
import type { Sql } from '../../platform/db.ts';
import { notFound } from '../../platform/errors.ts';
import { sqlParameters } from '../../platform/paging.ts';
import { readOne, readPage } from '../../platform/read-sql.ts';
import type { CursorSeal } from '../../platform/cursor-seal.ts';
import { isoTime, jsonArray, jsonNumber, jsonObject, type JsonView } from '../../platform/json-view.ts';
import { valueOf, type JsonText } from '../../platform/json-text.ts';
import type { ListProductsInput, ProductView } from './schema.ts';

const VARIANT = jsonObject({
  id: 'pv.id',
  type: 'pv.type',
  name: 'pv.name',
  value: 'pv.value',
  price_delta: jsonNumber('pv.price_delta'),
  stock_quantity: 'pv.stock_quantity',
  image_url: 'pv.image_url',
  position: 'pv.position',
});

export const PRODUCT_VIEW: JsonView = {
  from: 'products p',
  alias: 'p',
  json: jsonObject({
    id: 'p.id',
    name: 'p.name',
    marketing_name: 'p.marketing_name',
    sku: 'p.sku',
    price: jsonNumber('p.price'),
    original_price: jsonNumber('p.original_price'),
    active: 'p.active',
    delivery_type: 'p.delivery_type',
    offer_type: 'p.offer_type',
    description: 'p.description',
    images: 'p.images',
    stock_quantity: 'p.stock_quantity',
    block_on_zero_stock: 'p.block_on_zero_stock',
    low_stock_threshold: 'p.low_stock_threshold',
    weight_g: 'p.weight_g',
    dim_cm: 'p.dim_cm_json',
    shipping_short_name: 'p.shipping_short_name',
    shipping_category: 'p.shipping_category',
    catalog_hidden: 'p.catalog_hidden',
    language: 'p.language',
    created_at: isoTime('p.created_at'),
    updated_at: isoTime('p.updated_at'),
    variants: jsonArray(
      VARIANT,
      'product_variants pv WHERE pv.account_id = p.account_id AND pv.product_id = p.id',
      'pv.position NULLS LAST, pv.id',
    ),
  }),
};

export function findProductText(sql: Sql, accountId: string, productId: string): Promise<JsonText | null> {
  return readOne(sql, PRODUCT_VIEW, 'p.account_id = $1 AND p.id = $2', [accountId, productId]);
}

export async function getProductText(sql: Sql, accountId: string, productId: string): Promise<JsonText> {
  const product = await findProductText(sql, accountId, productId);
  if (!product) throw notFound('product');
  return product;
}

/** The same view as an object, for code that decides on its fields. */
export async function getProduct(sql: Sql, accountId: string, productId: string): Promise<ProductView> {
  return valueOf<ProductView>(await getProductText(sql, accountId, productId));
}

export function listProducts(sql: Sql, accountId: string, input: ListProductsInput, cursors: CursorSeal): Promise<JsonText> {
  const { values, bind } = sqlParameters(accountId);
  const where = ['p.account_id = $1'];
  if ((input.status ?? 'active') === 'active') where.push('p.active');
  if (input.delivery_type) where.push(`p.delivery_type = ${bind(input.delivery_type)}`);
  if (input.sku) where.push(`p.sku = ${bind(input.sku)}`);
  return readPage(sql, PRODUCT_VIEW, { where, values, bind }, { limit: input.limit ?? 50, cursor: input.cursor, seal: cursors.scopedTo(accountId) });
}
