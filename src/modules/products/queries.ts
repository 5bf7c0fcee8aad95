// Reading the catalog: the stored Product view (view.ts), with its variants,
// keyset-paged newest first.
import type { Sql } from '../../platform/db/db.ts';
import { notFound } from '../../platform/contract/errors.ts';
import { sqlParameters } from '../../platform/contract/paging.ts';
import { readOne, readPage, type Filter, valueOf, type JsonText } from '../../platform/read-path/index.ts';
import type { CursorSeal } from '../../platform/contract/cursor-seal.ts';
import { productView } from './view.ts';
import type { ListProductsInput, ProductView } from './schema.ts';

export function findProductText(sql: Sql, accountId: string, productId: string): Promise<JsonText | null> {
  return readOne(sql, productView.read, 'p.account_id = $1 AND p.id = $2', [accountId, productId]);
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

/** The product list's filters (its page and export's), newest first on (created_at, id). */
export function productListFilter(accountId: string, input: Omit<ListProductsInput, 'limit' | 'cursor'>): Filter {
  const { values, bind } = sqlParameters(accountId);
  const where = ['p.account_id = $1'];
  if ((input.status ?? 'active') === 'active') where.push('p.active');
  if (input.delivery_type) where.push(`p.delivery_type = ${bind(input.delivery_type)}`);
  if (input.sku) where.push(`p.sku = ${bind(input.sku)}`);
  return { where, values, bind };
}

export function listProducts(sql: Sql, accountId: string, input: ListProductsInput, cursors: CursorSeal): Promise<JsonText> {
  return readPage(sql, productView.read, productListFilter(accountId, input), {
    limit: input.limit ?? 50,
    cursor: input.cursor,
    seal: cursors.scopedTo(accountId),
  });
}
