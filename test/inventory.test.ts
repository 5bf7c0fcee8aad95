// SPEC Stock item, Stock movement, Endpoints > Inventory, the order status
// table's stock side effects, MCP get_inventory_stock / list_stock_movements /
// record_stock_movement, Errors (migration_pending); GAPS "Inventory and
// products" (sale/release/return once per order, negative stock, weighted
// average cost, effective_threshold, stock item variants, 201).
// After every test the check query finds no product or variant whose stock
// differs from the sum of its movements.
import { test, before, after, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { startTestService, http, freshTenant, operator, ADMIN_TOKEN, type TestService } from './helpers/harness.ts';
import { assertError, assertScopeMissing, assertSameSet, qs, sleep } from './helpers/contract.ts';
import { assertRefusal, callTool, callToolError, request, rpc } from './helpers/mcp.ts';
import {
  CATALOG_SCOPES,
  DRY,
  MOVEMENT_BODY_FIELDS,
  assertLedgerExplainsStock,
  assertMovement,
  getProduct,
  getStock,
  ledgerSum,
  listAll,
  postMovement,
  recordMovement,
  stockItem,
  tryCheckout,
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
const movements = (key: string, params: Record<string, string | number | undefined> = {}) =>
  listAll(svc.url, key, '/api/v1/inventory/movements', params);
const listMovements = (key: string, params: Record<string, string | number | undefined> = {}) =>
  http(svc.url, 'GET', `/api/v1/inventory/movements${qs(params)}`, { token: key });

async function checkout(accountId: string, lineItems: Array<{ product_id: string; variant_id?: string; qty: number }>) {
  const res = await tryCheckout(svc.url, accountId, lineItems);
  assert.equal(res.status, 201, `checkout -> ${res.status} ${res.text}`);
  return res.body.data;
}

async function setDefaultThreshold(accountId: string, value: number) {
  await operator(svc.url).call('PATCH', `/accounts/${accountId}`, { default_threshold: value });
}

test('GET /inventory/stock: active physical products only, with tracked, effective_threshold, low, variants and default_threshold', async () => {
  const { key, op, accountId } = await tenant();
  const plenty = await op.createProduct(accountId, { name: 'Plenty', sku: 'PL', stock_quantity: 10 });
  const atDefault = await op.createProduct(accountId, { name: 'At default', sku: 'AD', stock_quantity: 5 });
  const aboveOwn = await op.createProduct(accountId, { name: 'Above own', sku: 'AO', stock_quantity: 3, low_stock_threshold: 2 });
  const atOwn = await op.createProduct(accountId, {
    name: 'At own',
    sku: 'AT',
    stock_quantity: 2,
    low_stock_threshold: 2,
    block_on_zero_stock: true,
  });
  const zeroAtZero = await op.createProduct(accountId, { name: 'Zero', sku: 'ZE', stock_quantity: 0, low_stock_threshold: 0 });
  const untracked = await op.createProduct(accountId, { name: 'Untracked', sku: 'UN' });
  const withVariants = await op.createProduct(accountId, {
    name: 'Shirt',
    sku: 'SH',
    variants: [
      { name: 'Size', value: 'M', stock_quantity: 4 },
      { name: 'Size', value: 'L' },
    ],
  });
  const digital = await op.createProduct(accountId, { name: 'E-book', sku: 'EB', delivery_type: 'digital', stock_quantity: 1 });
  const free = await op.createProduct(accountId, { name: 'Sticker', sku: 'ST', delivery_type: 'free', stock_quantity: 1 });
  const retired = await op.createProduct(accountId, { name: 'Retired', sku: 'RE', stock_quantity: 1 });
  assert.equal((await http(svc.url, 'PATCH', `/api/v1/products/${retired.id}`, { token: key, body: { active: false } })).status, 200);
  const other = await tenant();
  await other.op.createProduct(other.accountId, { name: 'Foreign', stock_quantity: 1 });

  const stock = await getStock(svc.url, key);
  assert.equal(stock.default_threshold, 5, 'GAPS: the default threshold is 5 unless set');
  assertSameSet(
    stock.data.map((i) => i.product_id),
    [plenty.id, atDefault.id, aboveOwn.id, atOwn.id, zeroAtZero.id, untracked.id, withVariants.id],
    'active physical products of this account only: no digital, free, deactivated or foreign ones',
  );
  const item = (id: string) => stock.data.find((i) => i.product_id === id);
  assert.deepEqual(item(plenty.id), {
    product_id: plenty.id,
    name: 'Plenty',
    sku: 'PL',
    tracked: true,
    stock_quantity: 10,
    low_stock_threshold: null,
    effective_threshold: 5,
    low: false,
    block_on_zero_stock: false,
    variants: [],
  });
  assert.equal(item(atDefault.id).low, true, 'at the default threshold is low');
  assert.deepEqual([item(aboveOwn.id).effective_threshold, item(aboveOwn.id).low], [2, false], "the product's own threshold wins");
  assert.deepEqual([item(atOwn.id).effective_threshold, item(atOwn.id).low, item(atOwn.id).block_on_zero_stock], [2, true, true]);
  assert.deepEqual([item(zeroAtZero.id).effective_threshold, item(zeroAtZero.id).low], [0, true], 'threshold 0 is a threshold, not "unset"');
  assert.deepEqual(
    item(untracked.id),
    {
      product_id: untracked.id,
      name: 'Untracked',
      sku: 'UN',
      tracked: false,
      stock_quantity: 0,
      low_stock_threshold: null,
      effective_threshold: 5,
      low: false,
      block_on_zero_stock: false,
      variants: [],
    },
    'GAPS: an untracked product shows tracked: false and stock_quantity 0, and is never low',
  );
  const shirt = item(withVariants.id);
  assert.equal(shirt.tracked, true);
  assert.equal(shirt.stock_quantity, 4);
  assert.deepEqual(shirt.variants, [
    { id: withVariants.variants[0].id, name: 'Size', value: 'M', stock_quantity: 4, tracked: true },
    { id: withVariants.variants[1].id, name: 'Size', value: 'L', stock_quantity: 0, tracked: false },
  ]);

  const one = await getStock(svc.url, key, { product_id: atOwn.id });
  assert.deepEqual(one, { data: [item(atOwn.id)], default_threshold: 5 }, 'product_id narrows to that product');
  assert.deepEqual((await getStock(svc.url, key, { product_id: digital.id })).data, [], 'a digital product has no stock item');
  assert.deepEqual((await getStock(svc.url, key, { product_id: free.id })).data, []);
  const foreign = await http(
    svc.url,
    'GET',
    `/api/v1/inventory/stock${qs({ product_id: (await other.op.createProduct(other.accountId, { name: 'F2' })).id })}`,
    { token: key },
  );
  if (foreign.status === 200) assert.deepEqual(foreign.body.data, [], "another account's product is never shown");
  else assertError(foreign, 404, 'not_found', 'foreign product_id');
  assertError(await http(svc.url, 'GET', '/api/v1/inventory/stock?product_id=42', { token: key }), 400, 'validation_failed', 'non-UUID product_id');
  assertError(await http(svc.url, 'GET', '/api/v1/inventory/stock?sku=PL', { token: key }), 400, 'validation_failed', 'unknown query parameter');

  await setDefaultThreshold(accountId, 12);
  const raised = await getStock(svc.url, key);
  assert.equal(raised.default_threshold, 12);
  const again = (id: string) => raised.data.find((i) => i.product_id === id);
  assert.deepEqual([again(plenty.id).effective_threshold, again(plenty.id).low], [12, true], 'the account default applies at once');
  assert.deepEqual([again(aboveOwn.id).effective_threshold, again(aboveOwn.id).low], [2, false], 'own thresholds are unaffected');
  assert.equal(again(untracked.id).low, false, 'untracked is never low');
});

test('delivery: 201 {ok, applied, new_cost}; the first delivery enables tracking; weighted average cost; cost is never shown', async () => {
  const { key } = await tenant();
  const created = await http(svc.url, 'POST', '/api/v1/products', { token: key, body: { name: 'Beans', price: 8, sku: 'BEAN' } });
  const id = created.body.data.id;
  assert.equal(created.body.data.stock_quantity, null);
  assert.equal((await stockItem(svc.url, key, id)).tracked, false);

  const res = await postMovement(svc.url, key, { product_id: id, type: 'delivery', qty: 10, unit_cost: 2, note: 'first pallet' });
  assert.equal(res.status, 201, res.text);
  assert.deepEqual(res.body, { ok: true, applied: 10, new_cost: 2 }, 'with no prior stock or cost, the new cost is the unit cost');
  const tracked = await getProduct(svc.url, key, id);
  assert.equal(tracked.stock_quantity, 10, 'the first delivery enables tracking');
  assert.deepEqual((await stockItem(svc.url, key, id)).tracked, true);

  assert.deepEqual(
    await recordMovement(svc.url, key, { product_id: id, type: 'delivery', qty: 10, unit_cost: 4 }),
    { ok: true, applied: 10, new_cost: 3 },
    '(10 x 2 + 10 x 4) / 20',
  );
  assert.deepEqual(
    await recordMovement(svc.url, key, { product_id: id, type: 'delivery', qty: 5 }),
    { ok: true, applied: 5, new_cost: 3 },
    'a delivery without unit_cost keeps the cost',
  );
  assert.deepEqual(
    await recordMovement(svc.url, key, { product_id: id, type: 'delivery', qty: 5, unit_cost: 9 }),
    { ok: true, applied: 5, new_cost: 4 },
    '(25 x 3 + 5 x 9) / 30',
  );
  assert.deepEqual(
    await recordMovement(svc.url, key, { product_id: id, type: 'correction', qty: -30, note: 'stocktake' }),
    { ok: true, applied: -30, new_cost: 4 },
    'a correction keeps the cost',
  );
  assert.deepEqual(
    await recordMovement(svc.url, key, { product_id: id, type: 'delivery', qty: 2, unit_cost: 7 }),
    { ok: true, applied: 2, new_cost: 7 },
    'with no prior stock, the new cost is the unit cost',
  );
  const weighted = await recordMovement(svc.url, key, { product_id: id, type: 'delivery', qty: 1, unit_cost: 1 });
  assert.ok(Math.abs(weighted.new_cost! - 5) < 1e-9, `(2 x 7 + 1 x 1) / 3 = 5, got ${weighted.new_cost}`);

  const product = await getProduct(svc.url, key, id);
  assert.equal(product.stock_quantity, 3);
  assert.equal(await ledgerSum(svc, id), 3);
  const ledger = await movements(key, { product_id: id });
  assert.deepEqual(
    ledger.map((m) => [m.type, m.qty]),
    [
      ['delivery', 1],
      ['delivery', 2],
      ['correction', -30],
      ['delivery', 5],
      ['delivery', 5],
      ['delivery', 10],
      ['delivery', 10],
    ],
  );
  for (const m of ledger) assertMovement(m);
  assert.equal(ledger.at(-1).note, 'first pallet');
  assert.equal(ledger[2].note, 'stocktake');
  assert.equal(ledger[0].note, null);

  const noCost = await http(svc.url, 'POST', '/api/v1/products', { token: key, body: { name: 'Tea', price: 4 } });
  assert.deepEqual(
    await recordMovement(svc.url, key, { product_id: noCost.body.data.id, type: 'delivery', qty: 3 }),
    { ok: true, applied: 3, new_cost: null },
    'no cost ever given: new_cost is null',
  );
});

test('new_cost reports the cost the product keeps: the next delivery without unit_cost answers the same cost', async () => {
  const { key, op, accountId } = await tenant();
  for (const unitCost of [0.123456, 0.00001, 19.99999]) {
    const product = await op.createProduct(accountId, { name: `Cost ${unitCost}` });
    const first = await recordMovement(svc.url, key, { product_id: product.id, type: 'delivery', qty: 1, unit_cost: unitCost });
    const second = await recordMovement(svc.url, key, { product_id: product.id, type: 'delivery', qty: 1 });
    assert.equal(second.new_cost, first.new_cost, `unit_cost ${unitCost}: reported ${first.new_cost}, kept ${second.new_cost}`);
    const third = await recordMovement(svc.url, key, { product_id: product.id, type: 'correction', qty: -1 });
    assert.equal(third.new_cost, first.new_cost, 'a correction answers the kept cost too');
  }
});

test('correction: signed qty; below zero is 409 negative_stock and writes nothing; variants move with their product', async () => {
  const { key, op, accountId } = await tenant();
  const product = await op.createProduct(accountId, {
    name: 'Shirt',
    stock_quantity: 6,
    variants: [
      { name: 'Size', value: 'M', stock_quantity: 2 },
      { name: 'Size', value: 'L', stock_quantity: 3 },
    ],
  });
  const [m, l] = product.variants.map((v: any) => v.id);
  assert.equal((await getProduct(svc.url, key, product.id)).stock_quantity, 6);
  assert.deepEqual(await recordMovement(svc.url, key, { product_id: product.id, type: 'correction', qty: -1 }), {
    ok: true,
    applied: -1,
    new_cost: null,
  });
  assert.deepEqual((await recordMovement(svc.url, key, { product_id: product.id, variant_id: m, type: 'correction', qty: 4 })).applied, 4);
  assert.deepEqual((await recordMovement(svc.url, key, { product_id: product.id, variant_id: l, type: 'delivery', qty: 1 })).applied, 1);
  let view = await getProduct(svc.url, key, product.id);
  assert.equal(view.stock_quantity, 6 - 1 + 4 + 1, 'GAPS: a variant movement changes the product by the same qty');
  assert.deepEqual(
    view.variants.map((v: any) => v.stock_quantity),
    [6, 4],
  );

  const before = await movements(key, { product_id: product.id });
  const tooMuch = assertError(
    await postMovement(svc.url, key, { product_id: product.id, type: 'correction', qty: -11 }),
    409,
    'conflict',
    'product below zero',
  );
  assert.equal(tooMuch.details?.kind, 'negative_stock');
  const variantTooMuch = assertError(
    await postMovement(svc.url, key, { product_id: product.id, variant_id: l, type: 'correction', qty: -5 }),
    409,
    'conflict',
    'variant below zero',
  );
  assert.equal(variantTooMuch.details?.kind, 'negative_stock');
  assert.deepEqual(await movements(key, { product_id: product.id }), before, 'a refused correction writes no movement');
  view = await getProduct(svc.url, key, product.id);
  assert.equal(view.stock_quantity, 10);
  assert.deepEqual(
    view.variants.map((v: any) => v.stock_quantity),
    [6, 4],
  );

  assert.equal(
    (await recordMovement(svc.url, key, { product_id: product.id, type: 'correction', qty: -10 })).applied,
    -10,
    'exactly to zero is allowed',
  );
  assert.equal((await getProduct(svc.url, key, product.id)).stock_quantity, 0);
  assert.equal((await stockItem(svc.url, key, product.id)).stock_quantity, 0);
});

test('POST /inventory/movements refuses sale, release, return and malformed bodies with 400 (details.allowed for unknown fields); unknown or foreign products are 404', async () => {
  const { key, op, accountId } = await tenant();
  const other = await tenant();
  const product = await op.createProduct(accountId, {
    name: 'Cup',
    stock_quantity: 5,
    variants: [{ name: 'Colour', value: 'Red', stock_quantity: 1 }],
  });
  const sibling = await op.createProduct(accountId, { name: 'Saucer', variants: [{ name: 'Colour', value: 'Blue' }] });
  const foreign = await other.op.createProduct(other.accountId, { name: 'Theirs', stock_quantity: 5 });
  const pid = product.id;
  const bad: Array<[string, unknown]> = [
    ['type sale', { product_id: pid, type: 'sale', qty: -1 }],
    ['type release', { product_id: pid, type: 'release', qty: 1 }],
    ['type return', { product_id: pid, type: 'return', qty: 1 }],
    ['unknown type', { product_id: pid, type: 'theft', qty: -1 }],
    ['no type', { product_id: pid, qty: 1 }],
    ['no qty', { product_id: pid, type: 'delivery' }],
    ['no product_id', { type: 'delivery', qty: 1 }],
    ['non-UUID product_id', { product_id: 'abc', type: 'delivery', qty: 1 }],
    ['non-UUID variant_id', { product_id: pid, variant_id: 'v1', type: 'delivery', qty: 1 }],
    ['delivery qty 0', { product_id: pid, type: 'delivery', qty: 0 }],
    ['delivery qty negative', { product_id: pid, type: 'delivery', qty: -3 }],
    ['fractional qty', { product_id: pid, type: 'correction', qty: 1.5 }],
    ['qty as string', { product_id: pid, type: 'delivery', qty: '2' }],
    ['unit_cost on a correction', { product_id: pid, type: 'correction', qty: 1, unit_cost: 2 }],
    ['negative unit_cost', { product_id: pid, type: 'delivery', qty: 1, unit_cost: -1 }],
    ['unit_cost as string', { product_id: pid, type: 'delivery', qty: 1, unit_cost: '2' }],
    ['note not a string', { product_id: pid, type: 'delivery', qty: 1, note: 5 }],
    ['body is an array', [{ product_id: pid, type: 'delivery', qty: 1 }]],
  ];
  for (const [label, body] of bad) {
    assertError(await postMovement(svc.url, key, body), 400, 'validation_failed', label);
    assertError(await postMovement(svc.url, key, body, DRY), 400, 'validation_failed', `${label} (dry run)`);
  }
  for (const field of ['order_id', 'stock_quantity', 'created_at', 'cost']) {
    const err = assertError(
      await postMovement(svc.url, key, { product_id: pid, type: 'delivery', qty: 1, [field]: 'x' }),
      400,
      'validation_failed',
      field,
    );
    assertSameSet(err.details?.allowed ?? [], MOVEMENT_BODY_FIELDS, `${field}: details.allowed`);
  }
  assertError(await postMovement(svc.url, key, { product_id: crypto.randomUUID(), type: 'delivery', qty: 1 }), 404, 'not_found', 'unknown product');
  assertError(await postMovement(svc.url, key, { product_id: foreign.id, type: 'delivery', qty: 1 }), 404, 'not_found', 'foreign product');
  assertError(
    await postMovement(svc.url, key, { product_id: foreign.id, type: 'delivery', qty: 1 }, DRY),
    404,
    'not_found',
    'foreign product (dry run)',
  );
  const wrongVariant = await postMovement(svc.url, key, { product_id: pid, variant_id: sibling.variants[0].id, type: 'delivery', qty: 1 });
  assert.ok([400, 404].includes(wrongVariant.status), `a variant of another product is refused, got ${wrongVariant.status}`);
  assertError(wrongVariant, wrongVariant.status, wrongVariant.status === 400 ? 'validation_failed' : 'not_found', 'variant of another product');

  assertSameSet(
    (await movements(key, { product_id: pid })).map((m) => `${m.type}/${m.qty}/${m.note}`),
    ['correction/4/initial stock', 'correction/1/initial stock'],
    'only the initial stock is in the ledger',
  );
  assert.equal((await getProduct(svc.url, key, pid)).stock_quantity, 5);
  assert.equal((await getProduct(svc.url, other.key, foreign.id)).stock_quantity, 5, 'the foreign product is untouched');
});

test('dry run: 200 {dry_run, product_id, variant_id, type, qty, unit_cost, enables_tracking}; nothing is written; a below-zero correction still gives 409', async () => {
  const { key, op, accountId } = await tenant();
  const untracked = await op.createProduct(accountId, { name: 'New', sku: 'N' });
  const tracked = await op.createProduct(accountId, {
    name: 'Old',
    sku: 'O',
    stock_quantity: 2,
    variants: [{ name: 'Size', value: 'S', stock_quantity: 1 }],
  });

  const first = await postMovement(svc.url, key, { product_id: untracked.id, type: 'delivery', qty: 4, unit_cost: 1.5 }, DRY);
  assert.equal(first.status, 200, first.text);
  assert.deepEqual(first.body, {
    dry_run: true,
    product_id: untracked.id,
    variant_id: null,
    type: 'delivery',
    qty: 4,
    unit_cost: 1.5,
    enables_tracking: true,
  });
  const later = await postMovement(
    svc.url,
    key,
    { product_id: tracked.id, variant_id: tracked.variants[0].id, type: 'correction', qty: -1 },
    { 'x-merx-dry-run': 'true' },
  );
  assert.equal(later.status, 200);
  assert.deepEqual(later.body, {
    dry_run: true,
    product_id: tracked.id,
    variant_id: tracked.variants[0].id,
    type: 'correction',
    qty: -1,
    unit_cost: null,
    enables_tracking: false,
  });
  const negative = assertError(
    await postMovement(svc.url, key, { product_id: tracked.id, type: 'correction', qty: -3 }, DRY),
    409,
    'conflict',
    'dry-run preview of a below-zero correction',
  );
  assert.equal(negative.details?.kind, 'negative_stock');

  assert.equal((await getProduct(svc.url, key, untracked.id)).stock_quantity, null, 'the dry run did not enable tracking');
  assert.equal((await getProduct(svc.url, key, tracked.id)).stock_quantity, 2);
  assert.deepEqual(
    (await movements(key)).map((m) => m.product_id),
    [tracked.id, tracked.id],
    'only the initial stock movements exist',
  );

  assert.deepEqual(await recordMovement(svc.url, key, { product_id: untracked.id, type: 'delivery', qty: 4, unit_cost: 1.5 }), {
    ok: true,
    applied: 4,
    new_cost: 1.5,
  });
  const second = await postMovement(svc.url, key, { product_id: untracked.id, type: 'delivery', qty: 1 }, { 'x-merx-dry-run': 'yes' });
  assert.equal(second.body.enables_tracking, false, 'tracking is already on');
});

test('scopes: inventory:read for stock and movements, inventory:write to record (write never implies read)', async () => {
  const reader = await freshTenant(svc.url, { scopes: ['inventory:read'] });
  const writer = await freshTenant(svc.url, { scopes: ['inventory:write'] });
  const product = await writer.op.createProduct(writer.accountId, { name: 'Box', stock_quantity: 1 });
  assertScopeMissing(
    await postMovement(svc.url, reader.key, { product_id: product.id, type: 'delivery', qty: 1 }),
    'inventory:write',
    'reader records',
  );
  assertScopeMissing(
    await postMovement(svc.url, reader.key, { product_id: product.id, type: 'delivery', qty: 1 }, DRY),
    'inventory:write',
    'reader dry run',
  );
  assertScopeMissing(await http(svc.url, 'GET', '/api/v1/inventory/stock', { token: writer.key }), 'inventory:read', 'writer reads stock');
  assertScopeMissing(await listMovements(writer.key), 'inventory:read', 'writer reads movements');
  assert.equal((await postMovement(svc.url, writer.key, { product_id: product.id, type: 'delivery', qty: 1 })).status, 201);
  assert.equal((await http(svc.url, 'GET', '/api/v1/inventory/stock', { token: reader.key })).status, 200);
});

test('GET /inventory/movements: newest first, keyset paging, filters product_id, order_id, type, from/to; bad parameters 400', async () => {
  const { key, op, accountId } = await tenant();
  const a = await op.createProduct(accountId, { name: 'A' });
  const b = await op.createProduct(accountId, { name: 'B' });
  const other = await tenant();
  const foreign = await other.op.createProduct(other.accountId, { name: 'Foreign' });
  await recordMovement(svc.url, other.key, { product_id: foreign.id, type: 'delivery', qty: 9 });

  const steps: Array<[string, string, number]> = [
    [a.id, 'delivery', 10],
    [b.id, 'delivery', 5],
    [a.id, 'correction', -2],
    [b.id, 'correction', 3],
    [a.id, 'delivery', 1],
  ];
  for (const [productId, type, qty] of steps) {
    await recordMovement(svc.url, key, { product_id: productId, type, qty });
    await sleep(5);
  }
  const order = await checkout(accountId, [
    { product_id: a.id, qty: 2 },
    { product_id: b.id, qty: 1 },
  ]);

  const all = await movements(key);
  for (const m of all) assertMovement(m);
  assert.equal(all.length, 7, "only this account's movements");
  assert.deepEqual(
    all.slice(2).map((m) => [m.product_id, m.type, m.qty]),
    [...steps].reverse(),
    'newest first',
  );
  assertSameSet(
    all.slice(0, 2).map((m) => `${m.product_id}/${m.type}/${m.qty}`),
    [`${a.id}/sale/-2`, `${b.id}/sale/-1`],
  );
  for (let i = 1; i < all.length; i++) assert.ok(all[i - 1].created_at >= all[i].created_at, 'created_at never increases down the list');

  const first = await listMovements(key, { limit: 3 });
  assert.equal(first.status, 200);
  assert.deepEqual(Object.keys(first.body).sort(), ['data', 'has_more', 'next_cursor']);
  assert.equal(first.body.has_more, true);
  await recordMovement(svc.url, key, { product_id: b.id, type: 'delivery', qty: 1 });
  const rest = await movements(key, { limit: 3, cursor: first.body.next_cursor });
  assert.deepEqual(
    [...first.body.data, ...rest].map((m) => m.id),
    all.map((m) => m.id),
    'keyset pages are stable while rows arrive',
  );
  const last = await listMovements(key, { limit: 200 });
  assert.equal(last.body.has_more, false);
  assert.equal(last.body.next_cursor, null);
  assert.equal(last.body.data.length, 8);

  assert.deepEqual(
    (await movements(key, { product_id: a.id })).map((m) => [m.type, m.qty]),
    [
      ['sale', -2],
      ['delivery', 1],
      ['correction', -2],
      ['delivery', 10],
    ],
  );
  const sales = await movements(key, { type: 'sale' });
  assertSameSet(
    sales.map((m) => m.product_id),
    [a.id, b.id],
  );
  for (const m of sales) assert.equal(m.order_id, order.id);
  assert.deepEqual((await movements(key, { order_id: order.id })).map((m) => m.id).sort(), sales.map((m) => m.id).sort());
  assert.deepEqual(
    (await movements(key, { type: 'correction', product_id: b.id })).map((m) => m.qty),
    [3],
  );
  assert.deepEqual(await movements(key, { type: 'return' }), []);
  assert.deepEqual(await movements(key, { product_id: foreign.id }), [], "another account's product has no visible movements");

  const chronological = [...all].reverse();
  const mid = chronological[2];
  const fromMid = await movements(key, { from: mid.created_at, product_id: a.id });
  assert.ok(
    fromMid.some((m) => m.id === mid.id),
    'from is inclusive',
  );
  assert.ok(fromMid.every((m) => m.created_at >= mid.created_at));
  const toMid = await movements(key, { to: mid.created_at });
  assert.ok(
    toMid.some((m) => m.id === mid.id),
    'to is inclusive',
  );
  assert.ok(toMid.every((m) => m.created_at <= mid.created_at));
  const exactly = await movements(key, { from: mid.created_at, to: mid.created_at });
  assert.ok(
    exactly.some((m) => m.id === mid.id),
    'from = to = one instant finds that movement',
  );
  assert.ok(exactly.every((m) => m.created_at === mid.created_at));
  const day = all[0].created_at.slice(0, 10);
  assert.equal((await movements(key, { from: day, to: day })).length, 8, 'date-only bounds cover the whole day');
  const nextDay = new Date(Date.parse(`${day}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10);
  const prevDay = new Date(Date.parse(`${day}T00:00:00Z`) - 86_400_000).toISOString().slice(0, 10);
  assert.deepEqual(await movements(key, { from: nextDay }), []);
  assert.deepEqual(await movements(key, { to: prevDay }), []);
  assert.equal((await movements(key, { from: `${day}T00:00:00+02:00` })).length, 8, 'an offset form is accepted');

  for (const [label, params] of [
    ['limit 0', { limit: 0 }],
    ['limit 201', { limit: 201 }],
    ['bad cursor', { cursor: 'nope' }],
    ['bad type', { type: 'theft' }],
    ['non-UUID product_id', { product_id: 'p1' }],
    ['non-UUID order_id', { order_id: '17' }],
    ['lenient from', { from: '2026/01/02' }],
    ['lenient to', { to: 'yesterday' }],
    ['unknown parameter', { sku: 'A' }],
  ] as Array<[string, Record<string, string | number>]>) {
    assertError(await listMovements(key, params), 400, 'validation_failed', label);
  }
});

test('checkout writes a sale (negative qty, with order_id) per tracked product and variant; untracked products move nothing', async () => {
  const { key, op, accountId } = await tenant();
  const tracked = await op.createProduct(accountId, { name: 'Tracked', stock_quantity: 10 });
  const untracked = await op.createProduct(accountId, { name: 'Untracked' });
  const shirt = await op.createProduct(accountId, {
    name: 'Shirt',
    variants: [
      { name: 'Size', value: 'M', stock_quantity: 3 },
      { name: 'Size', value: 'L', stock_quantity: 3 },
    ],
  });
  const [m, l] = shirt.variants.map((v: any) => v.id);

  const order = await checkout(accountId, [
    { product_id: tracked.id, qty: 2 },
    { product_id: untracked.id, qty: 5 },
    { product_id: shirt.id, variant_id: m, qty: 1 },
    { product_id: tracked.id, qty: 1 },
  ]);
  const sold = await movements(key, { order_id: order.id });
  for (const mv of sold) {
    assertMovement(mv);
    assert.equal(mv.type, 'sale');
    assert.equal(mv.order_id, order.id);
  }
  assertSameSet(
    sold.map((mv) => `${mv.product_id}/${mv.variant_id}/${mv.qty}`),
    [`${tracked.id}/null/-3`, `${shirt.id}/${m}/-1`],
    'one sale per product (and variant); none for the untracked product',
  );
  assert.equal((await getProduct(svc.url, key, tracked.id)).stock_quantity, 7);
  assert.equal((await getProduct(svc.url, key, untracked.id)).stock_quantity, null, 'an untracked product stays untracked');
  const shirtView = await getProduct(svc.url, key, shirt.id);
  assert.equal(shirtView.stock_quantity, 5);
  assert.deepEqual(
    shirtView.variants.map((v: any) => v.stock_quantity),
    [2, 3],
  );
  assert.deepEqual(
    (await stockItem(svc.url, key, shirt.id)).variants.map((v: any) => v.stock_quantity),
    [2, 3],
  );
  assert.ok(l);
});

test('block_on_zero_stock: checkout of a product at zero is 409 and writes no order and no movement; non-blocking products may go below zero', async () => {
  const { key, op, accountId } = await tenant();
  const blocked = await op.createProduct(accountId, { name: 'Limited', stock_quantity: 1, block_on_zero_stock: true });
  const open = await op.createProduct(accountId, { name: 'Open', stock_quantity: 1 });
  const ordersBefore = async () => (await http(svc.url, 'GET', '/api/v1/orders?limit=200', { token: key })).body.data.length;

  await checkout(accountId, [{ product_id: blocked.id, qty: 1 }]);
  assert.equal((await getProduct(svc.url, key, blocked.id)).stock_quantity, 0);
  const orderCount = await ordersBefore();
  const ledgerBefore = await movements(key);

  const refused = await tryCheckout(svc.url, accountId, [
    { product_id: open.id, qty: 1 },
    { product_id: blocked.id, qty: 1 },
  ]);
  assertError(refused, 409, 'conflict', 'a blocked product at zero');
  assert.equal(await ordersBefore(), orderCount, 'no order was created');
  assert.deepEqual(await movements(key), ledgerBefore, 'no sale was written, not even for the other line');
  assert.equal((await getProduct(svc.url, key, open.id)).stock_quantity, 1);

  await checkout(accountId, [{ product_id: open.id, qty: 3 }]);
  assert.equal((await getProduct(svc.url, key, open.id)).stock_quantity, -2, 'a sale may take a non-blocking product below zero');
  const item = await stockItem(svc.url, key, open.id);
  assert.deepEqual([item.stock_quantity, item.tracked, item.low], [-2, true, true]);
  const negative = assertError(
    await postMovement(svc.url, key, { product_id: open.id, type: 'correction', qty: -1 }),
    409,
    'conflict',
    'correction deeper below zero',
  );
  assert.equal(negative.details?.kind, 'negative_stock');
  assert.equal((await recordMovement(svc.url, key, { product_id: open.id, type: 'delivery', qty: 5 })).applied, 5, 'a delivery is always accepted');
  assert.equal((await getProduct(svc.url, key, open.id)).stock_quantity, 3);

  await recordMovement(svc.url, key, { product_id: blocked.id, type: 'delivery', qty: 2 });
  await checkout(accountId, [{ product_id: blocked.id, qty: 2 }]);
  assert.equal((await getProduct(svc.url, key, blocked.id)).stock_quantity, 0, 'restocked, sold out again');
  assertError(await tryCheckout(svc.url, accountId, [{ product_id: blocked.id, qty: 1 }]), 409, 'conflict', 'sold out again');
});

test('cancellation writes release exactly once however often the status flips; a later returned/refunded restocks nothing more', async () => {
  const { key, op, accountId } = await tenant();
  const mug = await op.createProduct(accountId, { name: 'Mug', stock_quantity: 10 });
  const shirt = await op.createProduct(accountId, { name: 'Shirt', variants: [{ name: 'Size', value: 'M', stock_quantity: 4 }] });
  const v = shirt.variants[0].id;
  const order = await checkout(accountId, [
    { product_id: mug.id, qty: 3 },
    { product_id: shirt.id, variant_id: v, qty: 2 },
  ]);
  assert.equal((await getProduct(svc.url, key, mug.id)).stock_quantity, 7);

  await op.setStatus(order.id, 'cancelled');
  const patch = (status: string) => http(svc.url, 'PATCH', `/api/v1/orders/${order.id}`, { token: key, body: { status } });
  for (const status of ['confirmed', 'cancelled', 'new', 'cancelled', 'returned', 'refunded', 'cancelled']) {
    const res = await patch(status);
    assert.equal(res.status, 200, `${status}: ${res.text}`);
  }
  await op.setStatus(order.id, 'processing');
  await op.setStatus(order.id, 'cancelled', 'automation');

  const ledger = await movements(key, { order_id: order.id });
  assertSameSet(
    ledger.map((mv) => `${mv.type}/${mv.product_id}/${mv.variant_id}/${mv.qty}`),
    [`sale/${mug.id}/null/-3`, `sale/${shirt.id}/${v}/-2`, `release/${mug.id}/null/3`, `release/${shirt.id}/${v}/2`],
  );
  assert.equal((await getProduct(svc.url, key, mug.id)).stock_quantity, 10, 'stock given back once');
  const shirtView = await getProduct(svc.url, key, shirt.id);
  assert.equal(shirtView.stock_quantity, 4);
  assert.equal(shirtView.variants[0].stock_quantity, 4);
});

test('returned and refunded write return exactly once per order; cancelling afterwards releases nothing more', async () => {
  const { key, op, accountId } = await tenant();
  const mug = await op.createProduct(accountId, { name: 'Mug', stock_quantity: 10 });
  const returned = await checkout(accountId, [{ product_id: mug.id, qty: 2 }]);
  const refunded = await checkout(accountId, [{ product_id: mug.id, qty: 1 }]);
  assert.equal((await getProduct(svc.url, key, mug.id)).stock_quantity, 7);

  await op.setStatus(returned.id, 'shipped');
  await op.setStatus(returned.id, 'returned');
  for (const status of ['refunded', 'returned', 'cancelled', 'delivered', 'returned']) await op.setStatus(returned.id, status);
  const patched = await http(svc.url, 'PATCH', `/api/v1/orders/${refunded.id}`, { token: key, body: { status: 'refunded' } });
  assert.equal(patched.status, 200, patched.text);
  for (const status of ['returned', 'cancelled', 'refunded']) await op.setStatus(refunded.id, status);

  assert.deepEqual(
    (await movements(key, { order_id: returned.id })).map((mv) => [mv.type, mv.qty]),
    [
      ['return', 2],
      ['sale', -2],
    ],
  );
  assert.deepEqual(
    (await movements(key, { order_id: refunded.id })).map((mv) => [mv.type, mv.qty]),
    [
      ['return', 1],
      ['sale', -1],
    ],
  );
  assert.equal((await getProduct(svc.url, key, mug.id)).stock_quantity, 10);
  const returns = await movements(key, { type: 'return' });
  assertSameSet(
    returns.map((mv) => mv.order_id),
    [returned.id, refunded.id],
  );
  assert.deepEqual(await movements(key, { type: 'release' }), []);
});

test('status changes of orders without tracked products, legacy orders and same-status PATCHes move no stock', async () => {
  const { key, op, accountId } = await tenant();
  const untracked = await op.createProduct(accountId, { name: 'Loose' });
  const lineOrder = await checkout(accountId, [{ product_id: untracked.id, qty: 1 }]);
  const legacy = await op.checkout(accountId);
  for (const id of [lineOrder.id, legacy.id]) {
    await op.setStatus(id, 'cancelled');
    await op.setStatus(id, 'returned');
  }
  assert.deepEqual(await movements(key), []);
  const mug = await op.createProduct(accountId, { name: 'Mug', stock_quantity: 5 });
  const order = await checkout(accountId, [{ product_id: mug.id, qty: 1 }]);
  const same = await http(svc.url, 'PATCH', `/api/v1/orders/${order.id}`, { token: key, body: { status: 'new' } });
  assert.equal(same.body.status_changed, false);
  const dry = await http(svc.url, 'PATCH', `/api/v1/orders/${order.id}`, { token: key, body: { status: 'cancelled' }, headers: DRY });
  assert.equal(dry.status, 200);
  assert.deepEqual(
    (await movements(key, { order_id: order.id })).map((mv) => mv.type),
    ['sale'],
    'a dry-run cancel releases nothing',
  );
  assert.equal((await getProduct(svc.url, key, mug.id)).stock_quantity, 4);
});

test('MCP get_inventory_stock, list_stock_movements, record_stock_movement mirror REST', async () => {
  const { key, op, accountId } = await tenant();
  const product = await op.createProduct(accountId, { name: 'Lamp', sku: 'L1', stock_quantity: 3 });
  const tools = (await rpc(svc.url, key, request('tools/list', {}))).body.result.tools.map((t: any) => t.name);
  for (const name of ['get_inventory_stock', 'list_stock_movements', 'record_stock_movement']) assert.ok(tools.includes(name), name);

  const recorded = await callTool(svc.url, key, 'record_stock_movement', {
    product_id: product.id,
    type: 'delivery',
    qty: 2,
    unit_cost: 5,
    note: 'mcp',
  });
  assert.equal(recorded.isError, false, JSON.stringify(recorded.structuredContent));
  assert.deepEqual(recorded.structuredContent, { ok: true, applied: 2, new_cost: 5 });
  const dry = await callTool(svc.url, key, 'record_stock_movement', { product_id: product.id, type: 'correction', qty: -1, dry_run: true });
  assert.deepEqual(dry.structuredContent, {
    dry_run: true,
    product_id: product.id,
    variant_id: null,
    type: 'correction',
    qty: -1,
    unit_cost: null,
    enables_tracking: false,
  });
  assertRefusal(await callTool(svc.url, key, 'record_stock_movement', { product_id: product.id, type: 'correction', qty: -50 }), 'CONFLICT');
  assertRefusal(await callTool(svc.url, key, 'record_stock_movement', { product_id: crypto.randomUUID(), type: 'delivery', qty: 1 }), 'NOT_FOUND');
  assert.equal((await callToolError(svc.url, key, 'record_stock_movement', { product_id: product.id, type: 'sale', qty: -1 })).code, -32602);
  assert.equal(
    (await callToolError(svc.url, key, 'record_stock_movement', { product_id: product.id, type: 'delivery', qty: 1, extra: 1 })).code,
    -32602,
  );

  const stock = await callTool(svc.url, key, 'get_inventory_stock', { product_id: product.id });
  assert.deepEqual(stock.structuredContent, await getStock(svc.url, key, { product_id: product.id }));
  assert.equal(stock.structuredContent.data[0].stock_quantity, 5);
  const listed = await callTool(svc.url, key, 'list_stock_movements', { product_id: product.id, limit: 10 });
  assert.deepEqual(listed.structuredContent, (await listMovements(key, { product_id: product.id, limit: 10 })).body);
  assert.deepEqual(
    listed.structuredContent.data.map((mv: any) => [mv.type, mv.qty, mv.note]),
    [
      ['delivery', 2, 'mcp'],
      ['correction', 3, 'initial stock'],
    ],
  );

  const reader = await freshTenant(svc.url, { scopes: ['inventory:read'] });
  const readerTools = (await rpc(svc.url, reader.key, request('tools/list', {}))).body.result.tools.map((t: any) => t.name);
  assert.ok(readerTools.includes('get_inventory_stock') && readerTools.includes('list_stock_movements'));
  assert.ok(!readerTools.includes('record_stock_movement'));
  assertRefusal(await callTool(svc.url, reader.key, 'record_stock_movement', { product_id: product.id, type: 'delivery', qty: 1 }), 'SCOPE');
});

test('FEATURE_INVENTORY=0: every inventory route and tool answers 503 migration_pending (auth and scope checks still come first)', async () => {
  const off = await startTestService({ FEATURE_INVENTORY: '0' });
  try {
    const { key, op, accountId } = await freshTenant(off.url, { scopes: CATALOG_SCOPES });
    const product = await op.createProduct(accountId, { name: 'Off', stock_quantity: 2 });
    const calls: Array<[string, string, unknown?, Record<string, string>?]> = [
      ['GET', '/api/v1/inventory/stock'],
      ['GET', `/api/v1/inventory/stock?product_id=${product.id}`],
      ['GET', '/api/v1/inventory/movements'],
      ['POST', '/api/v1/inventory/movements', { product_id: product.id, type: 'delivery', qty: 1 }],
      ['POST', '/api/v1/inventory/movements', { product_id: product.id, type: 'delivery', qty: 1 }, DRY],
    ];
    for (const [method, path, body, headers] of calls) {
      assertError(await http(off.url, method, path, { token: key, body, headers }), 503, 'migration_pending', `${method} ${path}`);
    }
    for (const [name, args] of [
      ['get_inventory_stock', {}],
      ['list_stock_movements', {}],
      ['record_stock_movement', { product_id: product.id, type: 'delivery', qty: 1 }],
    ] as Array<[string, Record<string, unknown>]>) {
      assertRefusal(await callTool(off.url, key, name, args), 'MIGRATION_PENDING');
    }
    const noKey = await http(off.url, 'GET', '/api/v1/inventory/stock');
    assertError(noKey, 401, 'unauthorized', 'no key');
    const productsOnly = await freshTenant(off.url, { scopes: ['products:read'] });
    assertScopeMissing(await http(off.url, 'GET', '/api/v1/inventory/stock', { token: productsOnly.key }), 'inventory:read', 'scope before 503');
    assert.equal((await getProduct(off.url, key, product.id)).stock_quantity, 2, 'nothing was recorded');
  } finally {
    await off.close();
  }
});

test('the operator token is not an API key for inventory routes', async () => {
  assertError(await http(svc.url, 'GET', '/api/v1/inventory/stock', { token: ADMIN_TOKEN }), 401, 'unauthorized');
});
