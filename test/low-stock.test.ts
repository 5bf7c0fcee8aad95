// SPEC Events inventory.low_stock ("daily check finds a tracked product at or
// below its threshold; once per product per day", data {product: {id, name,
// sku}, stock_quantity, threshold}); GAPS "Inventory and products"
// (effective_threshold falls back to the account's default_threshold; the
// low-stock day is the UTC day); OPERATOR_API jobs/low-stock/run {now} and
// PATCH /accounts/{id} {default_threshold}. Each test uses its own days, far
// from the real clock, so the hourly in-process timer never interferes.
import { test, before, after, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService, http, freshTenant, operator, outboxEvents, ADMIN_TOKEN, type TestService } from './helpers/harness.ts';
import { assertError, UUID_RE } from './helpers/contract.ts';
import { CATALOG_SCOPES, assertLedgerExplainsStock, recordMovement, runLowStock, tryCheckout } from './helpers/stock.ts';

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

async function lowStockEvents(accountId: string) {
  return (await outboxEvents(svc.service, accountId)).filter((e) => e.event === 'inventory.low_stock');
}

/** product id -> how many inventory.low_stock events the account has for it. */
async function alertCounts(accountId: string): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const e of await lowStockEvents(accountId)) counts[e.data.product.id] = (counts[e.data.product.id] ?? 0) + 1;
  return counts;
}

test('the job emits inventory.low_stock for tracked products at or below the threshold, with SPEC payload, once per UTC day, and again the next day', async () => {
  const { op, accountId } = await tenant();
  const below = await op.createProduct(accountId, { name: 'Below', sku: 'BEL', stock_quantity: 3 });
  const atOwn = await op.createProduct(accountId, { name: 'At own', sku: null, stock_quantity: 2, low_stock_threshold: 2 });
  const aboveDefault = await op.createProduct(accountId, { name: 'Above', sku: 'ABV', stock_quantity: 6 });
  const aboveOwn = await op.createProduct(accountId, { name: 'Above own', sku: 'ABO', stock_quantity: 3, low_stock_threshold: 2 });
  const sold = await op.createProduct(accountId, { name: 'Oversold', sku: 'OVS', stock_quantity: 1 });
  const order = await tryCheckout(svc.url, accountId, [{ product_id: sold.id, qty: 3 }]);
  assert.equal(order.status, 201, order.text);

  const run = await runLowStock(svc.url, '2031-03-10T08:00:00Z');
  assert.equal(run.job, 'low-stock');
  assert.ok(Number.isInteger(run.processed) && run.processed >= 3, `processed counts the events emitted, got ${run.processed}`);

  const events = await lowStockEvents(accountId);
  assert.equal(events.length, 3);
  const byProduct = Object.fromEntries(events.map((e) => [e.data.product.id, e]));
  assert.deepEqual(Object.keys(byProduct).sort(), [below.id, atOwn.id, sold.id].sort(), 'at or below; never above the threshold');
  assert.ok(!byProduct[aboveDefault.id] && !byProduct[aboveOwn.id]);
  assert.deepEqual(byProduct[below.id].data, { product: { id: below.id, name: 'Below', sku: 'BEL' }, stock_quantity: 3, threshold: 5 });
  assert.deepEqual(byProduct[atOwn.id].data, { product: { id: atOwn.id, name: 'At own', sku: null }, stock_quantity: 2, threshold: 2 });
  assert.deepEqual(byProduct[sold.id].data, { product: { id: sold.id, name: 'Oversold', sku: 'OVS' }, stock_quantity: -2, threshold: 5 });
  for (const e of events) {
    assert.match(e.id, UUID_RE);
    assert.equal(e.account_id, accountId);
    assert.equal(e.api_version, '2026-09-01');
  }

  await runLowStock(svc.url, '2031-03-10T23:59:59.999Z');
  await runLowStock(svc.url, '2031-03-10T00:00:00Z');
  await runLowStock(svc.url, '2031-03-10T21:30:00-02:00'); // 23:30 UTC, still the 10th
  assert.equal((await lowStockEvents(accountId)).length, 3, 'once per product per UTC day');

  await runLowStock(svc.url, '2031-03-10T23:30:00-02:00'); // 01:30 UTC on the 11th
  assert.deepEqual(await alertCounts(accountId), { [below.id]: 2, [atOwn.id]: 2, [sold.id]: 2 }, 'the next UTC day alerts again');
  await runLowStock(svc.url, '2031-03-11T12:00:00Z');
  await runLowStock(svc.url, '2031-03-12');
  assert.deepEqual(await alertCounts(accountId), { [below.id]: 3, [atOwn.id]: 3, [sold.id]: 3 }, 'a date-only now is that day');
});

test('untracked, deactivated, digital and free products never alert', async () => {
  const { key, op, accountId } = await tenant();
  const untracked = await op.createProduct(accountId, { name: 'Untracked', low_stock_threshold: 3 });
  const inactive = await op.createProduct(accountId, { name: 'Inactive', stock_quantity: 1 });
  const digital = await op.createProduct(accountId, { name: 'Digital', delivery_type: 'digital', stock_quantity: 1 });
  const free = await op.createProduct(accountId, { name: 'Free', delivery_type: 'free', stock_quantity: 0 });
  const control = await op.createProduct(accountId, { name: 'Control', stock_quantity: 0 });
  const res = await http(svc.url, 'PATCH', `/api/v1/products/${inactive.id}`, { token: key, body: { active: false } });
  assert.equal(res.status, 200);

  await runLowStock(svc.url, '2031-04-01T06:00:00Z');
  assert.deepEqual(await alertCounts(accountId), { [control.id]: 1 }, 'only the active, tracked, physical product');
  assert.ok(untracked && digital && free);

  const reactivated = await http(svc.url, 'PATCH', `/api/v1/products/${inactive.id}`, { token: key, body: { active: true } });
  assert.equal(reactivated.status, 200);
  await recordMovement(svc.url, key, { product_id: untracked.id, type: 'delivery', qty: 2 });
  await runLowStock(svc.url, '2031-04-01T07:00:00Z');
  assert.deepEqual(
    await alertCounts(accountId),
    { [control.id]: 1, [inactive.id]: 1, [untracked.id]: 1 },
    'reactivated and newly tracked products join on the same day; the control was already alerted',
  );
});

test("the threshold falls back to the account's default_threshold (PATCH /admin/api/accounts/{id})", async () => {
  const { op, accountId } = await tenant();
  const plain = await op.createProduct(accountId, { name: 'Plain', sku: 'P', stock_quantity: 4 });
  const own = await op.createProduct(accountId, { name: 'Own', sku: 'O', stock_quantity: 8, low_stock_threshold: 10 });
  const zero = await op.createProduct(accountId, { name: 'Zero', sku: 'Z', stock_quantity: 1, low_stock_threshold: 0 });

  await runLowStock(svc.url, '2031-05-01T10:00:00Z');
  let events = await lowStockEvents(accountId);
  assert.deepEqual(
    events.map((e) => [e.data.product.id, e.data.threshold]).sort(),
    [
      [plain.id, 5],
      [own.id, 10],
    ].sort(),
    'default 5 for the plain product; its own 10 for the other; threshold 0 is not low at 1',
  );

  const patched = await operator(svc.url).call('PATCH', `/accounts/${accountId}`, { default_threshold: 3 });
  assert.equal(patched.data.default_threshold, 3);
  await runLowStock(svc.url, '2031-05-02T10:00:00Z');
  events = await lowStockEvents(accountId);
  assert.deepEqual(
    events.slice(2).map((e) => [e.data.product.id, e.data.threshold]),
    [[own.id, 10]],
    'stock 4 is above the new default 3',
  );

  await operator(svc.url).call('PATCH', `/accounts/${accountId}`, { default_threshold: 4 });
  await runLowStock(svc.url, '2031-05-03T10:00:00Z');
  events = await lowStockEvents(accountId);
  assert.deepEqual(
    events
      .slice(3)
      .map((e) => [e.data.product.id, e.data.threshold])
      .sort(),
    [
      [plain.id, 4],
      [own.id, 10],
    ].sort(),
    'at the default is low',
  );
  assert.ok(zero);

  const created = await operator(svc.url).createAccount({ default_threshold: 0 });
  const zeroDefault = await operator(svc.url).createProduct(created.id, { name: 'Edge', stock_quantity: 0 });
  await runLowStock(svc.url, '2031-05-04T10:00:00Z');
  const edge = (await outboxEvents(svc.service, created.id)).filter((e) => e.event === 'inventory.low_stock');
  assert.deepEqual(
    edge.map((e) => [e.data.product.id, e.data.stock_quantity, e.data.threshold]),
    [[zeroDefault.id, 0, 0]],
    'default 0: at zero is low',
  );
});

test('stock moves between runs: an alerted day stays quiet, a restocked product stops alerting, a newly low one alerts the same day', async () => {
  const { key, op, accountId } = await tenant();
  const a = await op.createProduct(accountId, { name: 'A', stock_quantity: 10, low_stock_threshold: 5 });
  const b = await op.createProduct(accountId, { name: 'B', stock_quantity: 2, low_stock_threshold: 5 });

  await runLowStock(svc.url, '2031-06-01T01:00:00Z');
  assert.deepEqual(await alertCounts(accountId), { [b.id]: 1 });
  const sale = await tryCheckout(svc.url, accountId, [{ product_id: a.id, qty: 6 }]);
  assert.equal(sale.status, 201);
  await runLowStock(svc.url, '2031-06-01T02:00:00Z');
  assert.deepEqual(await alertCounts(accountId), { [b.id]: 1, [a.id]: 1 }, 'A fell to 4 and alerts on the same day');
  await recordMovement(svc.url, key, { product_id: b.id, type: 'delivery', qty: 20 });
  await runLowStock(svc.url, '2031-06-02T01:00:00Z');
  assert.deepEqual(await alertCounts(accountId), { [b.id]: 1, [a.id]: 2 }, 'B was restocked above its threshold');
  const last = (await lowStockEvents(accountId)).at(-1);
  assert.deepEqual(last.data, { product: { id: a.id, name: 'A', sku: 'MUG-1' }, stock_quantity: 4, threshold: 5 });
});

test('concurrent job runs (and, on PostgreSQL, two service instances on one database) emit once per product per day', async () => {
  const { op, accountId } = await tenant();
  const products = [];
  for (let i = 0; i < 8; i++) products.push(await op.createProduct(accountId, { name: `Low ${i}`, sku: `LOW-${i}`, stock_quantity: i % 3 }));
  const second = process.env.DATABASE_URL ? await startTestService() : null;
  try {
    const urls = [svc.url, second?.url ?? svc.url];
    const runs = await Promise.all(Array.from({ length: 6 }, (_, i) => runLowStock(urls[i % 2], '2031-07-01T09:00:00Z')));
    for (const run of runs) assert.ok(Number.isInteger(run.processed));
    const counts = await alertCounts(accountId);
    assert.deepEqual(counts, Object.fromEntries(products.map((p) => [p.id, 1])), 'one event per product, whichever run got there first');
    const { rows } = await svc.service.db.query('SELECT product_id, day FROM low_stock_alerts WHERE account_id = $1', [accountId]);
    assert.equal(rows.length, 8, 'one unique alert key per product and day');
    assert.ok(rows.every((r: any) => String(r.day).startsWith('2031-07-01')));

    await Promise.all(Array.from({ length: 4 }, (_, i) => runLowStock(urls[i % 2], '2031-07-02T00:00:00Z')));
    assert.deepEqual(await alertCounts(accountId), Object.fromEntries(products.map((p) => [p.id, 2])));
  } finally {
    await second?.close();
  }
});

test('jobs/low-stock/run validates now; an unknown job is 404', async () => {
  const run = (name: string, body: unknown) => http(svc.url, 'POST', `/admin/api/jobs/${name}/run`, { token: ADMIN_TOKEN, body });
  assertError(await run('low-stock', { now: 'tomorrow' }), 400, 'validation_failed', 'lenient now');
  assertError(await run('low-stock', { now: '2031/01/01' }), 400, 'validation_failed', 'slashes');
  assertError(await run('low-stock', { when: '2031-01-01' }), 400, 'validation_failed', 'unknown field');
  assertError(await run('low-stocks', {}), 404, 'not_found', 'unknown job');
  const now = await run('low-stock', { now: '2031-12-31T12:00:00.000+01:00' });
  assert.equal(now.status, 200, now.text);
  assert.deepEqual(Object.keys(now.body.data).sort(), ['job', 'processed']);
  const unauthenticated = await http(svc.url, 'POST', '/admin/api/jobs/low-stock/run', { body: { now: '2031-01-01' } });
  assert.equal(unauthenticated.status, 401);
});
