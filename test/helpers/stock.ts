// Shared checks for the products and inventory tests: SPEC's Product, Variant,
// Stock item and Stock movement field lists, the ledger-explains-stock check
// query, and small request helpers built on harness.ts.
import assert from 'node:assert/strict';
import { ADMIN_TOKEN, http, operator, type HttpResult, type TestService } from './harness.ts';
import { ISO_RE, UUID_RE, qs } from './contract.ts';

/** products:write is offered only in a custom scope list (SPEC Authentication 6). */
export const CATALOG_SCOPES = ['products:read', 'products:write', 'inventory:read', 'inventory:write', 'orders:read', 'orders:write'];

/** SPEC Product (all fields present). */
export const PRODUCT_FIELDS = [
  'id',
  'name',
  'marketing_name',
  'sku',
  'price',
  'original_price',
  'active',
  'delivery_type',
  'offer_type',
  'description',
  'images',
  'stock_quantity',
  'block_on_zero_stock',
  'low_stock_threshold',
  'weight_g',
  'dim_cm',
  'shipping_short_name',
  'shipping_category',
  'catalog_hidden',
  'language',
  'variants',
  'created_at',
  'updated_at',
].sort();
/** SPEC Variant. */
export const VARIANT_FIELDS = ['id', 'type', 'name', 'value', 'price_delta', 'stock_quantity', 'image_url', 'position'].sort();
/** SPEC Stock item. */
export const STOCK_ITEM_FIELDS = [
  'product_id',
  'name',
  'sku',
  'tracked',
  'stock_quantity',
  'low_stock_threshold',
  'effective_threshold',
  'low',
  'block_on_zero_stock',
  'variants',
].sort();
/** GAPS Inventory: stock item `variants` are `[{id, name, value, stock_quantity, tracked}]`. */
export const STOCK_VARIANT_FIELDS = ['id', 'name', 'value', 'stock_quantity', 'tracked'].sort();
/** SPEC Stock movement. */
export const MOVEMENT_FIELDS = ['id', 'product_id', 'variant_id', 'order_id', 'type', 'qty', 'note', 'created_at'].sort();
/** SPEC Products POST + GAPS "Product field types": every writable field, and nothing else. */
export const WRITABLE_PRODUCT_FIELDS = [
  'name',
  'price',
  'sku',
  'marketing_name',
  'original_price',
  'active',
  'description',
  'delivery_type',
  'weight_g',
  'dim_cm',
  'shipping_short_name',
  'shipping_category',
  'low_stock_threshold',
  'block_on_zero_stock',
  'catalog_hidden',
  'offer_type',
  'language',
].sort();
export const MOVEMENT_BODY_FIELDS = ['product_id', 'variant_id', 'type', 'qty', 'unit_cost', 'note'].sort();

export const DRY = { 'x-merx-dry-run': '1' };

export function assertProductView(product: any, note = ''): void {
  assert.ok(product && typeof product === 'object', `${note}: product is an object`);
  assert.deepEqual(Object.keys(product).sort(), PRODUCT_FIELDS, `${note}: Product fields`);
  assert.match(product.id, UUID_RE, `${note}: id`);
  assert.equal(typeof product.name, 'string', `${note}: name`);
  assert.equal(typeof product.price, 'number', `${note}: price is a number`);
  assert.equal(typeof product.active, 'boolean', `${note}: active`);
  assert.equal(typeof product.block_on_zero_stock, 'boolean', `${note}: block_on_zero_stock`);
  assert.equal(typeof product.catalog_hidden, 'boolean', `${note}: catalog_hidden`);
  assert.ok(Array.isArray(product.images), `${note}: images is an array`);
  assert.ok(product.stock_quantity === null || Number.isInteger(product.stock_quantity), `${note}: stock_quantity integer or null`);
  assert.match(product.created_at, ISO_RE, `${note}: created_at`);
  if (product.updated_at !== null) assert.match(product.updated_at, ISO_RE, `${note}: updated_at`);
  assert.ok(Array.isArray(product.variants), `${note}: variants is an array`);
  for (const variant of product.variants) {
    assert.deepEqual(Object.keys(variant).sort(), VARIANT_FIELDS, `${note}: Variant fields`);
    assert.match(variant.id, UUID_RE);
    assert.ok(variant.stock_quantity === null || Number.isInteger(variant.stock_quantity), `${note}: variant stock_quantity`);
  }
}

export function assertStockItem(item: any, note = ''): void {
  assert.deepEqual(Object.keys(item).sort(), STOCK_ITEM_FIELDS, `${note}: Stock item fields`);
  assert.match(item.product_id, UUID_RE);
  assert.equal(typeof item.tracked, 'boolean', `${note}: tracked`);
  assert.ok(Number.isInteger(item.stock_quantity), `${note}: stock_quantity is an integer`);
  assert.ok(Number.isInteger(item.effective_threshold), `${note}: effective_threshold is an integer`);
  assert.equal(typeof item.low, 'boolean', `${note}: low`);
  assert.equal(typeof item.block_on_zero_stock, 'boolean', `${note}: block_on_zero_stock`);
  for (const variant of item.variants) {
    assert.deepEqual(Object.keys(variant).sort(), STOCK_VARIANT_FIELDS, `${note}: stock variant fields`);
    assert.ok(Number.isInteger(variant.stock_quantity), `${note}: variant stock_quantity is an integer`);
    assert.equal(typeof variant.tracked, 'boolean');
  }
}

export function assertMovement(movement: any, note = ''): void {
  assert.deepEqual(Object.keys(movement).sort(), MOVEMENT_FIELDS, `${note}: Stock movement fields`);
  assert.match(movement.id, UUID_RE);
  assert.match(movement.product_id, UUID_RE);
  assert.ok(['sale', 'release', 'return', 'delivery', 'correction'].includes(movement.type), `${note}: type ${movement.type}`);
  assert.ok(Number.isInteger(movement.qty), `${note}: qty is an integer`);
  assert.match(movement.created_at, ISO_RE);
}

/**
 * The "done" check: no product (and no variant) whose stock differs
 * from the sum of its movements. Runs over the whole database, every account.
 */
export async function ledgerMismatches(svc: TestService) {
  const { rows: products } = await svc.service.db.query(
    `SELECT p.id, p.stock_quantity, coalesce(m.total, 0)::int AS ledger
       FROM products p
       LEFT JOIN (SELECT product_id, sum(qty) AS total FROM stock_movements GROUP BY product_id) m ON m.product_id = p.id
      WHERE coalesce(p.stock_quantity, 0) <> coalesce(m.total, 0)`,
  );
  const { rows: variants } = await svc.service.db.query(
    `SELECT v.id, v.product_id, v.stock_quantity, coalesce(m.total, 0)::int AS ledger
       FROM product_variants v
       LEFT JOIN (SELECT variant_id, sum(qty) AS total FROM stock_movements WHERE variant_id IS NOT NULL GROUP BY variant_id) m ON m.variant_id = v.id
      WHERE coalesce(v.stock_quantity, 0) <> coalesce(m.total, 0)`,
  );
  return { products, variants };
}

export async function assertLedgerExplainsStock(svc: TestService, note = 'ledger check'): Promise<void> {
  const { products, variants } = await ledgerMismatches(svc);
  assert.deepEqual(products, [], `${note}: products whose stock differs from the sum of their movements`);
  assert.deepEqual(variants, [], `${note}: variants whose stock differs from the sum of their movements`);
}

/** The ledger sum of one product (or one variant), straight from the database. */
export async function ledgerSum(svc: TestService, productId: string, variantId?: string): Promise<number> {
  const { rows } = await svc.service.db.query<{ total: number }>(
    variantId
      ? 'SELECT coalesce(sum(qty), 0)::int AS total FROM stock_movements WHERE variant_id = $1'
      : 'SELECT coalesce(sum(qty), 0)::int AS total FROM stock_movements WHERE product_id = $1',
    [variantId ?? productId],
  );
  return rows[0].total;
}

export function postMovement(base: string, key: string, body: unknown, headers: Record<string, string> = {}): Promise<HttpResult> {
  return http(base, 'POST', '/api/v1/inventory/movements', { token: key, body, headers });
}

/** POST a movement that must be accepted (201) and return its body. */
export async function recordMovement(base: string, key: string, body: Record<string, unknown>) {
  const res = await postMovement(base, key, body);
  assert.equal(res.status, 201, `POST /inventory/movements ${JSON.stringify(body)} -> ${res.status} ${res.text}`);
  return res.body as { ok: true; applied: number; new_cost: number | null };
}

export async function getStock(base: string, key: string, params: Record<string, string | undefined> = {}) {
  const res = await http(base, 'GET', `/api/v1/inventory/stock${qs(params)}`, { token: key });
  assert.equal(res.status, 200, `GET /inventory/stock -> ${res.status} ${res.text}`);
  assert.deepEqual(Object.keys(res.body).sort(), ['data', 'default_threshold']);
  for (const item of res.body.data) assertStockItem(item);
  return res.body as { data: any[]; default_threshold: number };
}

/** The stock item of one product from the full list (undefined when the list leaves it out). */
export async function stockItem(base: string, key: string, productId: string) {
  return (await getStock(base, key)).data.find((i) => i.product_id === productId);
}

export async function getProduct(base: string, key: string, id: string) {
  const res = await http(base, 'GET', `/api/v1/products/${id}`, { token: key });
  assert.equal(res.status, 200, `GET /products/${id} -> ${res.status} ${res.text}`);
  assert.deepEqual(Object.keys(res.body), ['data']);
  assertProductView(res.body.data);
  return res.body.data;
}

/** Every page of a list route (products or movements), following next_cursor. */
export async function listAll(base: string, key: string, path: string, params: Record<string, string | number | undefined> = {}) {
  const rows: any[] = [];
  let cursor = params.cursor as string | undefined;
  for (let guard = 0; guard < 1000; guard++) {
    const res = await http(base, 'GET', `${path}${qs({ limit: 200, ...params, cursor })}`, { token: key });
    assert.equal(res.status, 200, `GET ${path} -> ${res.status} ${res.text}`);
    assert.deepEqual(Object.keys(res.body).sort(), ['data', 'has_more', 'next_cursor']);
    rows.push(...res.body.data);
    if (!res.body.has_more) {
      assert.equal(res.body.next_cursor, null, 'next_cursor is null on the last page');
      return rows;
    }
    assert.equal(typeof res.body.next_cursor, 'string');
    cursor = res.body.next_cursor;
  }
  throw new Error('paging did not end');
}

/** A checkout body (OPERATOR_API) selling catalog line items. */
export function lineItemOrder(lineItems: Array<{ product_id: string; variant_id?: string; qty: number }>, extra: Record<string, unknown> = {}) {
  return {
    customer: { name: 'Ana Petrova', email: 'ana@example.com', phone: '+359888000111' },
    shipping: {
      address: 'ul. Vitosha 1',
      city: 'Sofia',
      zip: '1000',
      courier_slug: 'courier_a',
      courier_delivery_mode: 'office',
      courier_office_id: 101,
    },
    line_items: lineItems,
    payment_method: 'cod',
    ...extra,
  };
}

/** Checkout through the operator API without throwing: the caller checks the status (201, or 409 for a blocked product). */
export function tryCheckout(base: string, accountId: string, lineItems: Array<{ product_id: string; variant_id?: string; qty: number }>) {
  return operatorHttp(base, 'POST', `/accounts/${accountId}/orders`, lineItemOrder(lineItems));
}

export function operatorHttp(base: string, method: string, path: string, body?: unknown): Promise<HttpResult> {
  return http(base, method, `/admin/api${path}`, { token: ADMIN_TOKEN, body });
}

/** Runs the low-stock job as if the clock read `now`. */
export async function runLowStock(base: string, now: string) {
  return (await operator(base).call('POST', '/jobs/low-stock/run', { now })).data as { job: string; processed: number };
}
