// The issue: "the stock level and the ledger change in one transaction under a
// row lock, so concurrent movements never lose an update". Fires 200
// concurrent POST /api/v1/inventory/movements at one product and checks that
// the final stock equals the ledger sum equals the expected sum; likewise for
// variants, first deliveries, corrections racing to zero, checkouts of a
// block_on_zero_stock product and status flips of one order. Runs on PGlite
// (in memory) and on PostgreSQL (DATABASE_URL), where the requests really run
// in parallel transactions. Results are checked for exactness, never timed.
import { test, before, after, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService, http, freshTenant, type TestService } from './helpers/harness.ts';
import { assertError } from './helpers/contract.ts';
import { CATALOG_SCOPES, assertLedgerExplainsStock, getProduct, ledgerSum, listAll, postMovement, stockItem, tryCheckout } from './helpers/stock.ts';

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

/** A tenant with several keys, so 200 requests stay well inside the 300-per-minute limit of each key. */
async function tenantWithKeys(count: number) {
  const t = await freshTenant(svc.url, { scopes: CATALOG_SCOPES });
  const keys = [t.key];
  while (keys.length < count) keys.push(await t.op.issueKey(t.accountId, { scopes: CATALOG_SCOPES }));
  return { ...t, keys };
}

async function fireAll(keys: string[], bodies: Array<Record<string, unknown>>) {
  return Promise.all(bodies.map((body, i) => postMovement(svc.url, keys[i % keys.length], body)));
}

test('200 concurrent movements at one product: final stock == ledger sum == expected', async () => {
  const { keys, op, accountId } = await tenantWithKeys(4);
  const product = await op.createProduct(accountId, { name: 'Hot', sku: 'HOT', stock_quantity: 1000 });
  const bodies = Array.from({ length: 200 }, (_, i) =>
    i % 2 === 0
      ? { product_id: product.id, type: 'delivery', qty: (i % 7) + 1, unit_cost: (i % 5) + 1, note: `d${i}` }
      : { product_id: product.id, type: 'correction', qty: -((i % 5) + 1), note: `c${i}` },
  );
  // The corrections add up to at most -500, so no order of arrival takes stock below zero: every movement must be accepted.
  const expected = 1000 + bodies.reduce((sum, b) => sum + b.qty, 0);

  const results = await fireAll(keys, bodies);
  results.forEach((res, i) => {
    assert.equal(res.status, 201, `movement ${i}: ${res.status} ${res.text}`);
    assert.equal(res.body.applied, bodies[i].qty);
  });

  assert.equal((await getProduct(svc.url, keys[0], product.id)).stock_quantity, expected, 'product stock');
  assert.equal(await ledgerSum(svc, product.id), expected, 'ledger sum');
  assert.equal((await stockItem(svc.url, keys[0], product.id)).stock_quantity, expected, 'stock endpoint');
  const ledger = await listAll(svc.url, keys[1], '/api/v1/inventory/movements', { product_id: product.id });
  assert.equal(ledger.length, 201, 'the initial stock and one row per movement');
  assert.equal(
    ledger.reduce((sum, m) => sum + m.qty, 0),
    expected,
    'the listed ledger explains the stock',
  );
  assert.equal(new Set(ledger.map((m) => m.note)).size, 201, 'no movement was written twice');
});

test('concurrent movements on two variants and their product: every level equals its ledger', async () => {
  const { keys, op, accountId } = await tenantWithKeys(4);
  const product = await op.createProduct(accountId, {
    name: 'Shirt',
    variants: [
      { name: 'Size', value: 'M', stock_quantity: 100 },
      { name: 'Size', value: 'L', stock_quantity: 100 },
    ],
  });
  const [m, l] = product.variants.map((v: any) => v.id);
  const bodies = Array.from({ length: 180 }, (_, i) => {
    const variant = i % 3 === 0 ? m : i % 3 === 1 ? l : undefined;
    const qty = i % 4 === 0 ? -((i % 3) + 1) : (i % 5) + 1;
    return { product_id: product.id, ...(variant ? { variant_id: variant } : {}), type: qty < 0 ? 'correction' : 'delivery', qty };
  });
  const sum = (pick: (b: any) => boolean) => bodies.filter(pick).reduce((s, b) => s + b.qty, 0);
  const results = await fireAll(keys, bodies);
  results.forEach((res, i) => assert.equal(res.status, 201, `movement ${i}: ${res.text}`));

  const view = await getProduct(svc.url, keys[0], product.id);
  assert.equal(view.stock_quantity, 200 + sum(() => true));
  assert.equal(view.variants[0].stock_quantity, 100 + sum((b) => b.variant_id === m));
  assert.equal(view.variants[1].stock_quantity, 100 + sum((b) => b.variant_id === l));
  assert.equal(await ledgerSum(svc, product.id), view.stock_quantity);
  assert.equal(await ledgerSum(svc, product.id, m), view.variants[0].stock_quantity);
  assert.equal(await ledgerSum(svc, product.id, l), view.variants[1].stock_quantity);
});

test('concurrent first deliveries on an untracked product: tracking starts once and no unit is lost', async () => {
  const { keys, op, accountId } = await tenantWithKeys(2);
  const product = await op.createProduct(accountId, { name: 'Fresh' });
  assert.equal((await getProduct(svc.url, keys[0], product.id)).stock_quantity, null);
  const bodies = Array.from({ length: 60 }, (_, i) => ({ product_id: product.id, type: 'delivery', qty: (i % 3) + 1, unit_cost: 2 }));
  const results = await fireAll(keys, bodies);
  results.forEach((res) => assert.equal(res.status, 201, res.text));
  const expected = bodies.reduce((s, b) => s + b.qty, 0);
  assert.equal((await getProduct(svc.url, keys[0], product.id)).stock_quantity, expected);
  assert.equal(await ledgerSum(svc, product.id), expected);
  assert.ok(
    results.every((res) => res.body.new_cost === 2),
    'the same unit cost everywhere keeps the average at 2',
  );
});

test('concurrent corrections racing to zero: exactly the ones that fit are applied, the rest are 409 negative_stock', async () => {
  const { keys, op, accountId } = await tenantWithKeys(2);
  const product = await op.createProduct(accountId, { name: 'Scarce', stock_quantity: 50 });
  const results = await fireAll(
    keys,
    Array.from({ length: 100 }, () => ({ product_id: product.id, type: 'correction', qty: -1 })),
  );
  const applied = results.filter((res) => res.status === 201);
  const refused = results.filter((res) => res.status !== 201);
  assert.equal(applied.length, 50, 'exactly the stock on hand is taken');
  for (const res of refused) assert.equal(assertError(res, 409, 'conflict').details?.kind, 'negative_stock');
  assert.equal((await getProduct(svc.url, keys[0], product.id)).stock_quantity, 0);
  assert.equal(await ledgerSum(svc, product.id), 0);
});

test('concurrent checkouts of a block_on_zero_stock product sell exactly the stock on hand; the rest are 409', async () => {
  const { key, op, accountId } = await tenantWithKeys(1);
  const product = await op.createProduct(accountId, { name: 'Drop', stock_quantity: 20, block_on_zero_stock: true });
  const results = await Promise.all(Array.from({ length: 40 }, () => tryCheckout(svc.url, accountId, [{ product_id: product.id, qty: 1 }])));
  const sold = results.filter((res) => res.status === 201);
  assert.equal(sold.length, 20, `20 orders, got ${results.map((r) => r.status).join(',')}`);
  for (const res of results.filter((r) => r.status !== 201)) assertError(res, 409, 'conflict', 'sold out');
  assert.equal((await getProduct(svc.url, key, product.id)).stock_quantity, 0, 'never below zero');
  const sales = await listAll(svc.url, key, '/api/v1/inventory/movements', { product_id: product.id, type: 'sale' });
  assert.equal(sales.length, 20);
  assert.deepEqual(new Set(sales.map((m) => m.order_id)), new Set(sold.map((r) => r.body.data.id)), 'one sale per created order');
});

test('concurrent status flips of one order restock it exactly once', async () => {
  const { key, op, accountId } = await tenantWithKeys(1);
  const product = await op.createProduct(accountId, { name: 'Flip', stock_quantity: 10 });
  const orders = [];
  for (let i = 0; i < 3; i++) {
    const res = await tryCheckout(svc.url, accountId, [{ product_id: product.id, qty: 2 }]);
    assert.equal(res.status, 201, res.text);
    orders.push(res.body.data.id);
  }
  const statuses = ['cancelled', 'returned', 'refunded', 'confirmed'];
  await Promise.all(
    orders.flatMap((id) =>
      Array.from({ length: 12 }, (_, i) =>
        i % 2 === 0
          ? op.setStatus(id, statuses[i % statuses.length])
          : http(svc.url, 'PATCH', `/api/v1/orders/${id}`, { token: key, body: { status: statuses[(i + 1) % statuses.length] } }).then((res) => {
              assert.equal(res.status, 200, res.text);
            }),
      ),
    ),
  );
  for (const id of orders) {
    const ledger = await listAll(svc.url, key, '/api/v1/inventory/movements', { order_id: id });
    const restocks = ledger.filter((m) => m.type === 'release' || m.type === 'return');
    assert.equal(ledger.filter((m) => m.type === 'sale').length, 1, 'one sale');
    assert.equal(restocks.length, 1, `exactly one restock for order ${id}: ${JSON.stringify(ledger.map((m) => m.type))}`);
    assert.equal(restocks[0].qty, 2);
  }
  assert.equal((await getProduct(svc.url, key, product.id)).stock_quantity, 10);
});
