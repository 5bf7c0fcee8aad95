// SPEC Product and Variant views, Endpoints > Products (list, get, create,
// patch, dry runs), MCP list_products/get_product/create_product/update_product;
// GAPS General (201, unknown fields and query parameters 400) and "Inventory and
// products" (field types, dry-run shapes). Every test ends with the
// ledger-explains-stock check.
import { test, before, after, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { startTestService, http, freshTenant, type TestService } from './helpers/harness.ts';
import { assertError, assertScopeMissing, assertSameSet, qs, sleep } from './helpers/contract.ts';
import { assertRefusal, callTool, callToolError, request, rpc } from './helpers/mcp.ts';
import {
  CATALOG_SCOPES,
  DRY,
  WRITABLE_PRODUCT_FIELDS,
  assertLedgerExplainsStock,
  assertProductView,
  getProduct,
  getStock,
  listAll,
  lineItemOrder,
  operatorHttp,
} from './helpers/stock.ts';

let svc: TestService;
before(async () => {
  svc = await startTestService();
});
afterEach(async () => {
  await assertLedgerExplainsStock(svc);
});
after(async () => {
  await svc.close();
});

const tenant = () => freshTenant(svc.url, { scopes: CATALOG_SCOPES });
const postProduct = (key: string, body: unknown, headers: Record<string, string> = {}) =>
  http(svc.url, 'POST', '/api/v1/products', { token: key, body, headers });
const patchProduct = (key: string, id: string, body: unknown, headers: Record<string, string> = {}) =>
  http(svc.url, 'PATCH', `/api/v1/products/${id}`, { token: key, body, headers });
const listProducts = (key: string, params: Record<string, string | number | undefined> = {}) =>
  http(svc.url, 'GET', `/api/v1/products${qs(params)}`, { token: key });

async function createProduct(key: string, body: Record<string, unknown>) {
  const res = await postProduct(key, body);
  assert.equal(res.status, 201, `POST /products -> ${res.status} ${res.text}`);
  assert.deepEqual(Object.keys(res.body), ['data']);
  assertProductView(res.body.data, 'created product');
  return res.body.data;
}

const FULL_BODY = {
  name: 'Desk lamp',
  price: 0,
  sku: 'LAMP-1',
  marketing_name: 'The lamp',
  original_price: 39.9,
  active: true,
  description: 'Warm light',
  delivery_type: 'free',
  weight_g: 0,
  dim_cm: { l: 10, w: 20.5, h: 30 },
  shipping_short_name: 'lamp',
  shipping_category: 'fragile',
  low_stock_threshold: 0,
  block_on_zero_stock: true,
  catalog_hidden: true,
  offer_type: 'single',
  language: 'bg',
};

test('POST /products: 201 {data: Product} with defaults; not tracked, no images, no variants; GET returns the same view', async () => {
  const { key } = await tenant();
  const created = await createProduct(key, { name: 'Mug', price: 12.5 });
  assert.equal(created.name, 'Mug');
  assert.equal(created.price, 12.5);
  assert.equal(created.active, true, 'active defaults to true');
  assert.equal(created.delivery_type, 'physical', 'delivery_type defaults to physical');
  assert.equal(created.block_on_zero_stock, false);
  assert.equal(created.catalog_hidden, false);
  assert.equal(created.stock_quantity, null, 'stock is not tracked until the first delivery');
  assert.deepEqual(created.images, []);
  assert.deepEqual(created.variants, []);
  for (const f of [
    'sku',
    'marketing_name',
    'original_price',
    'description',
    'offer_type',
    'weight_g',
    'dim_cm',
    'low_stock_threshold',
    'shipping_short_name',
    'shipping_category',
    'language',
  ]) {
    assert.equal(created[f], null, `${f} defaults to null`);
  }
  assert.ok(created.updated_at !== null, 'GAPS: updated_at is set at creation');
  assert.deepEqual(await getProduct(svc.url, key, created.id), created);
});

test('POST /products stores every writable field with its GAPS type', async () => {
  const { key } = await tenant();
  const created = await createProduct(key, FULL_BODY);
  for (const [field, value] of Object.entries(FULL_BODY)) assert.deepEqual(created[field], value, field);
  assert.equal(created.stock_quantity, null);
  const nulls = await createProduct(key, {
    name: 'Nulls',
    price: 1,
    sku: null,
    marketing_name: null,
    original_price: null,
    description: null,
    weight_g: null,
    dim_cm: null,
    shipping_short_name: null,
    shipping_category: null,
    low_stock_threshold: null,
    offer_type: null,
    language: null,
  });
  for (const f of ['sku', 'marketing_name', 'original_price', 'description', 'weight_g', 'dim_cm', 'low_stock_threshold'])
    assert.equal(nulls[f], null, f);
  const digital = await createProduct(key, { name: 'E-book', price: 9, delivery_type: 'digital', active: false });
  assert.equal(digital.delivery_type, 'digital');
  assert.equal(digital.active, false, 'a product may be created deactivated');
  const longName = await createProduct(key, { name: 'n'.repeat(500), price: 1 });
  assert.equal(longName.name.length, 500, 'name up to 500 characters');
});

test('POST /products rejects wrong types, missing name/price and out-of-range values with 400 validation_failed; nothing is written', async () => {
  const { key } = await tenant();
  const bad: Array<[string, unknown]> = [
    ['empty body', {}],
    ['no price', { name: 'x' }],
    ['no name', { price: 1 }],
    ['empty name', { name: '', price: 1 }],
    ['name over 500', { name: 'n'.repeat(501), price: 1 }],
    ['name not a string', { name: 5, price: 1 }],
    ['negative price', { name: 'x', price: -0.01 }],
    ['price as string', { name: 'x', price: '1' }],
    ['price null', { name: 'x', price: null }],
    ['sku not a string', { name: 'x', price: 1, sku: 5 }],
    ['original_price as string', { name: 'x', price: 1, original_price: '3' }],
    ['active as string', { name: 'x', price: 1, active: 'true' }],
    ['active null', { name: 'x', price: 1, active: null }],
    ['block_on_zero_stock as number', { name: 'x', price: 1, block_on_zero_stock: 1 }],
    ['catalog_hidden null', { name: 'x', price: 1, catalog_hidden: null }],
    ['delivery_type unknown', { name: 'x', price: 1, delivery_type: 'service' }],
    ['weight_g fractional', { name: 'x', price: 1, weight_g: 1.5 }],
    ['weight_g negative', { name: 'x', price: 1, weight_g: -1 }],
    ['low_stock_threshold negative', { name: 'x', price: 1, low_stock_threshold: -1 }],
    ['low_stock_threshold fractional', { name: 'x', price: 1, low_stock_threshold: 2.5 }],
    ['dim_cm missing h', { name: 'x', price: 1, dim_cm: { l: 1, w: 2 } }],
    ['dim_cm string side', { name: 'x', price: 1, dim_cm: { l: '1', w: 2, h: 3 } }],
    ['dim_cm array', { name: 'x', price: 1, dim_cm: [1, 2, 3] }],
    ['description not a string', { name: 'x', price: 1, description: 5 }],
    ['language not a string', { name: 'x', price: 1, language: true }],
    ['body is an array', [{ name: 'x', price: 1 }]],
  ];
  for (const [label, body] of bad) {
    assertError(await postProduct(key, body), 400, 'validation_failed', label);
    assertError(await postProduct(key, body, DRY), 400, 'validation_failed', `${label} (dry run)`);
  }
  assert.deepEqual(await listAll(svc.url, key, '/api/v1/products', { status: 'all' }), [], 'no product was written');
});

test('unknown fields give 400 with details.allowed; stock, cost, images, files, bundles and variants cannot be set (POST and PATCH)', async () => {
  const { key } = await tenant();
  const product = await createProduct(key, { name: 'Mug', price: 10 });
  const notWritable = {
    stock_quantity: 5,
    avg_cost: 2,
    cost: 2,
    unit_cost: 2,
    images: ['https://img.example.com/a.png'],
    files: [],
    bundles: [],
    variants: [],
    id: crypto.randomUUID(),
    created_at: '2026-01-01T00:00:00Z',
    updated_at: '2026-01-01T00:00:00Z',
    colour: 'red',
  };
  for (const [field, value] of Object.entries(notWritable)) {
    const created = assertError(await postProduct(key, { name: 'x', price: 1, [field]: value }), 400, 'validation_failed', `POST ${field}`);
    assert.ok(created.details && Array.isArray(created.details.allowed), `POST ${field}: details.allowed`);
    assertSameSet(created.details.allowed, WRITABLE_PRODUCT_FIELDS, `POST ${field}: allowed = the writable fields`);
    const patched = assertError(await patchProduct(key, product.id, { [field]: value }), 400, 'validation_failed', `PATCH ${field}`);
    assertSameSet(patched.details.allowed, WRITABLE_PRODUCT_FIELDS, `PATCH ${field}: allowed = the writable fields`);
    assertError(await patchProduct(key, product.id, { [field]: value }, DRY), 400, 'validation_failed', `PATCH ${field} (dry run)`);
  }
  assert.deepEqual(await getProduct(svc.url, key, product.id), product, 'the product is unchanged');
  assert.equal((await listAll(svc.url, key, '/api/v1/products', { status: 'all' })).length, 1);
});

test('POST dry run: 200 {dry_run: true, changes: normalized record}; nothing is written', async () => {
  const { key } = await tenant();
  for (const value of ['1', 'true', 'yes']) {
    const res = await postProduct(key, { name: 'Preview', price: 3, sku: 'PRE-1' }, { 'x-merx-dry-run': value });
    assert.equal(res.status, 200, `dry run (${value}) answers 200: ${res.text}`);
    assert.deepEqual(Object.keys(res.body).sort(), ['changes', 'dry_run']);
    assert.equal(res.body.dry_run, true);
    const changes = res.body.changes;
    assert.equal(changes.name, 'Preview');
    assert.equal(changes.price, 3);
    assert.equal(changes.sku, 'PRE-1');
    assert.equal(changes.active, true, 'normalized: active defaults to true');
    assert.equal(changes.delivery_type, 'physical', 'normalized: delivery_type defaults to physical');
    for (const f of Object.keys(changes)) assert.ok(WRITABLE_PRODUCT_FIELDS.includes(f), `changes holds writable fields only (${f})`);
  }
  const full = await postProduct(key, FULL_BODY, DRY);
  assert.equal(full.status, 200);
  for (const [field, value] of Object.entries(FULL_BODY)) assert.deepEqual(full.body.changes[field], value, `dry-run changes.${field}`);
  assert.deepEqual(await listAll(svc.url, key, '/api/v1/products', { status: 'all' }), [], 'a dry run writes nothing');
});

test('a dry run previews exactly what the write stores (create and PATCH), prices included', async () => {
  const { key } = await tenant();
  const body = { name: 'Scale', price: 12.345, original_price: 20.999, sku: 'SC-1', weight_g: 250, dim_cm: { l: 1.25, w: 2, h: 3 } };
  const preview = await postProduct(key, body, DRY);
  const created = await postProduct(key, body);
  if (created.status === 400) {
    assertError(preview, 400, 'validation_failed', 'a body the write refuses is refused by the dry run too');
  } else {
    assert.equal(created.status, 201, created.text);
    assert.equal(preview.status, 200, preview.text);
    for (const [field, value] of Object.entries(preview.body.changes)) {
      assert.deepEqual(created.body.data[field], value, `create: dry-run changes.${field} is what was stored`);
    }
  }
  const product = await createProduct(key, { name: 'Weights', price: 1 });
  const change = { price: 3.3333, original_price: 0.005 };
  const patchPreview = await patchProduct(key, product.id, change, DRY);
  const patched = await patchProduct(key, product.id, change);
  if (patched.status === 400) {
    assertError(patchPreview, 400, 'validation_failed', 'PATCH dry run refuses what PATCH refuses');
  } else {
    assert.equal(patchPreview.status, 200);
    for (const [field, value] of Object.entries(patchPreview.body.changes)) {
      assert.deepEqual(patched.body.data[field], value, `PATCH: dry-run changes.${field} is what was stored`);
    }
  }
});

test('PATCH /products/{id} changes any subset of writable fields and leaves the rest; stock is untouched', async () => {
  const { key, op, accountId } = await tenant();
  const stocked = await op.createProduct(accountId, { name: 'Kettle', price: 30, sku: 'KET-1', stock_quantity: 7 });
  const before = await getProduct(svc.url, key, stocked.id);
  await sleep(10);
  const change = {
    name: 'Kettle 2',
    price: 31.5,
    sku: 'KET-2',
    marketing_name: 'Fast kettle',
    original_price: null,
    description: 'Boils',
    delivery_type: 'physical',
    weight_g: 900,
    dim_cm: { l: 20, w: 15, h: 25 },
    shipping_short_name: 'kettle',
    shipping_category: 'kitchen',
    low_stock_threshold: 2,
    block_on_zero_stock: true,
    catalog_hidden: true,
    offer_type: 'bundle',
    language: 'en',
  };
  const res = await patchProduct(key, stocked.id, change);
  assert.equal(res.status, 200, res.text);
  assert.deepEqual(Object.keys(res.body), ['data']);
  const after = res.body.data;
  assertProductView(after);
  for (const [field, value] of Object.entries(change)) assert.deepEqual(after[field], value, field);
  assert.equal(after.stock_quantity, 7, 'stock is not changed by a product PATCH');
  assert.equal(after.active, true);
  assert.equal(after.created_at, before.created_at);
  assert.ok(after.updated_at > before.updated_at, 'updated_at moves on a change');
  assert.deepEqual(await getProduct(svc.url, key, stocked.id), after);

  const partial = await patchProduct(key, stocked.id, { price: 0 });
  assert.equal(partial.status, 200);
  assert.deepEqual({ ...partial.body.data, price: 31.5, updated_at: null }, { ...after, updated_at: null }, 'only price changed');
  const nulled = await patchProduct(key, stocked.id, { sku: null, low_stock_threshold: null, dim_cm: null, weight_g: null });
  assert.equal(nulled.status, 200);
  for (const f of ['sku', 'low_stock_threshold', 'dim_cm', 'weight_g']) assert.equal(nulled.body.data[f], null, f);

  for (const [label, body] of [
    ['name null', { name: null }],
    ['empty name', { name: '' }],
    ['price null', { price: null }],
    ['negative price', { price: -1 }],
    ['bad delivery_type', { delivery_type: 'service' }],
    ['active null', { active: null }],
    ['weight_g string', { weight_g: '9' }],
  ] as Array<[string, unknown]>) {
    assertError(await patchProduct(key, stocked.id, body), 400, 'validation_failed', label);
  }
  assertError(await patchProduct(key, 'not-a-uuid', { price: 1 }), 400, 'validation_failed', 'non-UUID id');
  assertError(await patchProduct(key, crypto.randomUUID(), { price: 1 }), 404, 'not_found', 'unknown id');
});

test('PATCH dry run: 200 {dry_run: true, data: current Product, changes: normalized changes}; nothing is written', async () => {
  const { key } = await tenant();
  const product = await createProduct(key, { name: 'Mug', price: 10, sku: 'MUG-1' });
  const res = await patchProduct(key, product.id, { price: 11, active: false, low_stock_threshold: 4 }, DRY);
  assert.equal(res.status, 200, res.text);
  assert.deepEqual(Object.keys(res.body).sort(), ['changes', 'data', 'dry_run']);
  assert.equal(res.body.dry_run, true);
  assertProductView(res.body.data);
  assert.deepEqual(res.body.data, product, 'data is the current product');
  assert.deepEqual(res.body.changes, { price: 11, active: false, low_stock_threshold: 4 });
  assert.deepEqual(await getProduct(svc.url, key, product.id), product, 'a dry run writes nothing');
  assertError(await patchProduct(key, crypto.randomUUID(), { price: 1 }, DRY), 404, 'not_found', 'dry run on an unknown id');
  const notDry = await patchProduct(key, product.id, { price: 12 }, { 'x-merx-dry-run': 'no' });
  assert.equal(notDry.status, 200);
  assert.equal(notDry.body.data.price, 12, 'X-Merx-Dry-Run: no is not a dry run');
});

test('active: false deactivates: hidden from the default list, listed with status=all, readable by id, out of the stock list; past orders keep it', async () => {
  const { key, accountId } = await tenant();
  const product = await createProduct(key, { name: 'Teapot', price: 20, sku: 'TEA-1', weight_g: 500 });
  const other = await createProduct(key, { name: 'Cup', price: 5 });
  const created = await operatorHttp(svc.url, 'POST', `/accounts/${accountId}/orders`, lineItemOrder([{ product_id: product.id, qty: 2 }]));
  assert.equal(created.status, 201, created.text);
  const order = (await http(svc.url, 'GET', `/api/v1/orders/${created.body.data.id}`, { token: key })).body.data;
  assert.equal(order.line_items[0].product_id, product.id);

  const res = await patchProduct(key, product.id, { active: false });
  assert.equal(res.status, 200);
  assert.equal(res.body.data.active, false);

  const active = await listAll(svc.url, key, '/api/v1/products');
  assert.deepEqual(
    active.map((p) => p.id),
    [other.id],
    'status=active (default) hides it',
  );
  assert.deepEqual(
    (await listAll(svc.url, key, '/api/v1/products', { status: 'active' })).map((p) => p.id),
    [other.id],
  );
  const all = await listAll(svc.url, key, '/api/v1/products', { status: 'all' });
  assertSameSet(
    all.map((p) => p.id),
    [product.id, other.id],
    'status=all shows it',
  );
  assert.equal(all.find((p) => p.id === product.id).active, false);
  const readable = await getProduct(svc.url, key, product.id);
  assert.equal(readable.active, false, 'a deactivated product is readable');
  assert.equal(readable.name, 'Teapot');
  assert.equal(
    (await getStock(svc.url, key, {})).data.find((i) => i.product_id === product.id),
    undefined,
    'the stock list shows active products only',
  );

  const after = await http(svc.url, 'GET', `/api/v1/orders/${order.id}`, { token: key });
  assert.equal(after.status, 200);
  assert.deepEqual(after.body.data, order, 'the past order is untouched');

  const again = await patchProduct(key, product.id, { active: true });
  assert.equal(again.body.data.active, true);
  assertSameSet(
    (await listAll(svc.url, key, '/api/v1/products')).map((p) => p.id),
    [product.id, other.id],
    'reactivated',
  );
});

test('GET /products: newest first, keyset paging; next_cursor null at the end; rows created while paging do not shift pages', async () => {
  const { key } = await tenant();
  const made: string[] = [];
  for (let i = 0; i < 7; i++) {
    made.push((await createProduct(key, { name: `P${i}`, price: i })).id);
    await sleep(3);
  }
  const newestFirst = [...made].reverse();
  assert.deepEqual(
    (await listAll(svc.url, key, '/api/v1/products')).map((p) => p.id),
    newestFirst,
  );

  const first = await listProducts(key, { limit: 3 });
  assert.equal(first.status, 200);
  assert.deepEqual(Object.keys(first.body).sort(), ['data', 'has_more', 'next_cursor']);
  assert.deepEqual(
    first.body.data.map((p: any) => p.id),
    newestFirst.slice(0, 3),
  );
  assert.equal(first.body.has_more, true);
  for (const p of first.body.data) assertProductView(p);
  const late = await createProduct(key, { name: 'Late', price: 1 });
  const paged = [
    ...first.body.data.map((p: any) => p.id),
    ...(await listAll(svc.url, key, '/api/v1/products', { limit: 3, cursor: first.body.next_cursor })).map((p) => p.id),
  ];
  assert.deepEqual(paged, newestFirst, 'the page after the cursor continues where the first ended; the new product is not pulled in');
  const exact = await listProducts(key, { limit: 8 });
  assert.equal(exact.body.has_more, false);
  assert.equal(exact.body.next_cursor, null);
  assert.deepEqual(
    exact.body.data.map((p: any) => p.id),
    [late.id, ...newestFirst],
  );
});

test('GET /products filters: status active|all, delivery_type physical|digital (else 400), exact sku', async () => {
  const { key } = await tenant();
  const physical = await createProduct(key, { name: 'Phys', price: 1, sku: 'SKU-1' });
  const digital = await createProduct(key, { name: 'Dig', price: 1, sku: 'SKU-10', delivery_type: 'digital' });
  const free = await createProduct(key, { name: 'Free', price: 0, sku: 'sku-1', delivery_type: 'free' });
  const hidden = await createProduct(key, { name: 'Old', price: 1, sku: 'SKU-1', active: false });

  const ids = async (params: Record<string, string>) => (await listAll(svc.url, key, '/api/v1/products', params)).map((p) => p.id);
  assertSameSet(await ids({}), [physical.id, digital.id, free.id]);
  assertSameSet(await ids({ status: 'all' }), [physical.id, digital.id, free.id, hidden.id]);
  assertSameSet(await ids({ delivery_type: 'physical' }), [physical.id]);
  assertSameSet(await ids({ delivery_type: 'physical', status: 'all' }), [physical.id, hidden.id]);
  assertSameSet(await ids({ delivery_type: 'digital' }), [digital.id]);
  assertSameSet(await ids({ sku: 'SKU-1' }), [physical.id], 'exact sku: not SKU-10, not sku-1, not the deactivated one');
  assertSameSet(await ids({ sku: 'SKU-1', status: 'all' }), [physical.id, hidden.id]);
  assertSameSet(await ids({ sku: 'SKU' }), [], 'no prefix match');
  assertSameSet(await ids({ sku: 'sku-1' }), [free.id]);

  for (const deliveryType of ['free', 'PHYSICAL', 'service', '']) {
    const err = assertError(await listProducts(key, { delivery_type: deliveryType }), 400, 'validation_failed', `delivery_type=${deliveryType}`);
    if (err.details?.allowed) assertSameSet(err.details.allowed, ['physical', 'digital']);
  }
  assertError(await listProducts(key, { status: 'inactive' }), 400, 'validation_failed', 'status=inactive');
  assertError(await listProducts(key, { limit: 0 }), 400, 'validation_failed', 'limit 0');
  assertError(await listProducts(key, { limit: 201 }), 400, 'validation_failed', 'limit 201');
  assertError(await listProducts(key, { limit: 'ten' }), 400, 'validation_failed', 'limit not an integer');
  assertError(await listProducts(key, { cursor: 'not-a-cursor' }), 400, 'validation_failed', 'bad cursor');
  assertError(await listProducts(key, { colour: 'red' }), 400, 'validation_failed', 'unknown query parameter');
  assert.equal((await listProducts(key, { limit: 200 })).status, 200, 'limit 200 is allowed');
});

test('variants are part of the product view (list and get)', async () => {
  const { key, op, accountId } = await tenant();
  const created = await op.createProduct(accountId, {
    name: 'Shirt',
    price: 20,
    sku: 'SHIRT',
    variants: [
      { type: 'size', name: 'Size', value: 'M', price_delta: 0, stock_quantity: 3 },
      { type: 'size', name: 'Size', value: 'XL', price_delta: 2.5, stock_quantity: 1 },
      { type: 'colour', name: 'Colour', value: 'Red', price_delta: null },
    ],
  });
  const product = await getProduct(svc.url, key, created.id);
  assert.equal(product.variants.length, 3);
  const [m, xl, red] = product.variants;
  assert.deepEqual(
    { ...m, id: null },
    { id: null, type: 'size', name: 'Size', value: 'M', price_delta: 0, stock_quantity: 3, image_url: null, position: 0 },
  );
  assert.deepEqual(
    { ...xl, id: null },
    { id: null, type: 'size', name: 'Size', value: 'XL', price_delta: 2.5, stock_quantity: 1, image_url: null, position: 1 },
  );
  assert.equal(red.value, 'Red');
  assert.equal(red.stock_quantity, null, 'a variant without stock is not tracked');
  assert.equal(product.stock_quantity, 4, "the product's stock includes its variants' stock");
  const listed = (await listAll(svc.url, key, '/api/v1/products', { sku: 'SHIRT' }))[0];
  assert.deepEqual(listed, product, 'the list shows the same view, variants included');
});

test("other accounts' products are 404 (never 403) and never listed; non-UUID ids are 400", async () => {
  const mine = await tenant();
  const theirs = await tenant();
  const foreign = await createProduct(theirs.key, { name: 'Theirs', price: 1, sku: 'THEIRS' });
  assertError(await http(svc.url, 'GET', `/api/v1/products/${foreign.id}`, { token: mine.key }), 404, 'not_found', 'foreign GET');
  assertError(await patchProduct(mine.key, foreign.id, { price: 2 }), 404, 'not_found', 'foreign PATCH');
  assertError(await patchProduct(mine.key, foreign.id, { price: 2 }, DRY), 404, 'not_found', 'foreign PATCH dry run');
  assert.deepEqual(await listAll(svc.url, mine.key, '/api/v1/products', { status: 'all', sku: 'THEIRS' }), []);
  assertError(await http(svc.url, 'GET', `/api/v1/products/${crypto.randomUUID()}`, { token: mine.key }), 404, 'not_found', 'unknown id');
  assertError(await http(svc.url, 'GET', '/api/v1/products/12345', { token: mine.key }), 400, 'validation_failed', 'non-UUID id');
  assert.deepEqual(await getProduct(svc.url, theirs.key, foreign.id), foreign, 'unchanged');
});

test('scopes: products:read to read, products:write to write (write never implies read); the fulfilment preset cannot write products', async () => {
  const reader = await freshTenant(svc.url, { scopes: ['products:read'] });
  const writer = await freshTenant(svc.url, { scopes: ['products:write'] });
  const fulfilment = await freshTenant(svc.url, { preset: 'fulfilment' });
  const product = await createProduct(writer.key, { name: 'W', price: 1 });
  assert.equal(product.name, 'W');
  assertScopeMissing(await http(svc.url, 'GET', '/api/v1/products', { token: writer.key }), 'products:read', 'writer lists');
  assertScopeMissing(await http(svc.url, 'GET', `/api/v1/products/${product.id}`, { token: writer.key }), 'products:read', 'writer gets');
  assertScopeMissing(await postProduct(reader.key, { name: 'R', price: 1 }), 'products:write', 'reader creates');
  assertScopeMissing(await postProduct(fulfilment.key, { name: 'F', price: 1 }), 'products:write', 'fulfilment creates');
  assertScopeMissing(await patchProduct(fulfilment.key, product.id, { price: 2 }), 'products:write', 'fulfilment patches');
  assert.equal((await http(svc.url, 'GET', '/api/v1/products', { token: fulfilment.key })).status, 200, 'fulfilment reads products');
});

test('MCP list_products, get_product, create_product, update_product mirror REST (dry_run argument included)', async () => {
  const { key } = await tenant();
  const tools = await rpc(svc.url, key, request('tools/list', {}));
  const names = tools.body.result.tools.map((t: any) => t.name);
  for (const name of ['list_products', 'get_product', 'create_product', 'update_product']) assert.ok(names.includes(name), `tools/list has ${name}`);

  const created = await callTool(svc.url, key, 'create_product', { name: 'Via MCP', price: 4, sku: 'MCP-1', low_stock_threshold: 2 });
  assert.equal(created.isError, false, JSON.stringify(created.structuredContent));
  assert.deepEqual(Object.keys(created.structuredContent), ['data']);
  const product = created.structuredContent.data;
  assertProductView(product);
  assert.equal(product.low_stock_threshold, 2);
  assert.deepEqual(await getProduct(svc.url, key, product.id), product, 'the REST view is the MCP view');

  const got = await callTool(svc.url, key, 'get_product', { id: product.id });
  assert.deepEqual(got.structuredContent, { data: product });
  const listed = await callTool(svc.url, key, 'list_products', { sku: 'MCP-1' });
  assert.deepEqual(listed.structuredContent, (await listProducts(key, { sku: 'MCP-1' })).body);

  const dryCreate = await callTool(svc.url, key, 'create_product', { name: 'Dry', price: 1, dry_run: true });
  assert.equal(dryCreate.structuredContent.dry_run, true);
  assert.equal(dryCreate.structuredContent.changes.name, 'Dry');
  const dryUpdate = await callTool(svc.url, key, 'update_product', { id: product.id, price: 5, dry_run: true });
  assert.deepEqual(dryUpdate.structuredContent, { dry_run: true, data: product, changes: { price: 5 } });
  assert.equal((await listAll(svc.url, key, '/api/v1/products', { status: 'all' })).length, 1, 'MCP dry runs write nothing');

  const updated = await callTool(svc.url, key, 'update_product', { id: product.id, active: false });
  assert.equal(updated.structuredContent.data.active, false);
  assert.equal((await getProduct(svc.url, key, product.id)).active, false);

  const badArg = await callToolError(svc.url, key, 'create_product', { name: 'x', price: 1, stock_quantity: 3 });
  assert.equal(badArg.code, -32602, 'an unknown argument fails the inputSchema');
  const badType = await callToolError(svc.url, key, 'list_products', { delivery_type: 'free' });
  assert.equal(badType.code, -32602);
  assertRefusal(await callTool(svc.url, key, 'get_product', { id: crypto.randomUUID() }), 'NOT_FOUND');
  assertRefusal(await callTool(svc.url, key, 'update_product', { id: crypto.randomUUID(), price: 1 }), 'NOT_FOUND');

  const reader = await freshTenant(svc.url, { scopes: ['products:read'] });
  const readerTools = (await rpc(svc.url, reader.key, request('tools/list', {}))).body.result.tools.map((t: any) => t.name);
  assert.ok(readerTools.includes('list_products') && readerTools.includes('get_product'));
  assert.ok(!readerTools.includes('create_product') && !readerTools.includes('update_product'), 'write tools hidden without products:write');
  assertRefusal(await callTool(svc.url, reader.key, 'create_product', { name: 'x', price: 1 }), 'SCOPE');
});
