// SPEC Endpoints > Orders (GET /api/v1/orders and its filters), Limits
// (q max 100, keyset paging), Errors (strict dates); GAPS General (date-only
// bounds, filter meanings, q literal % and _, next_cursor null).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { startTestService, http, freshTenant, type TestService } from './helpers/harness.ts';
import { assertError, assertOrderView, assertSameSet, listIds, listOrders, ORDER_STATUSES, qs, sleep } from './helpers/contract.ts';

let svc: TestService;
before(async () => {
  svc = await startTestService();
});
after(async () => {
  await svc.close();
});

async function patch(key: string, id: string, body: Record<string, unknown>) {
  const res = await http(svc.url, 'PATCH', `/api/v1/orders/${id}`, { token: key, body });
  assert.equal(res.status, 200, res.text);
  return res.body.data;
}

test('status filter; archived orders are hidden without it and shown with status=archived', async () => {
  const { op, accountId, key } = await freshTenant(svc.url);
  const a = await op.checkout(accountId);
  const b = await op.checkout(accountId);
  const c = await op.checkout(accountId);
  const d = await op.checkout(accountId);
  await op.setStatus(b.id, 'confirmed');
  await op.setStatus(c.id, 'shipped');
  await op.setStatus(d.id, 'archived');

  const all = await listOrders(svc.url, key);
  assertSameSet(
    all.data.map((o) => o.id),
    [a.id, b.id, c.id],
    'archived is hidden without a status filter',
  );
  for (const o of all.data) assertOrderView(o, 'list item');
  assertSameSet(await listIds(svc.url, key, { status: 'archived' }), [d.id]);
  assertSameSet(await listIds(svc.url, key, { status: 'new' }), [a.id]);
  assertSameSet(await listIds(svc.url, key, { status: 'confirmed' }), [b.id]);
  assertSameSet(await listIds(svc.url, key, { status: 'shipped' }), [c.id]);
  for (const status of ORDER_STATUSES) {
    const page = await listOrders(svc.url, key, { status });
    for (const o of page.data) assert.equal(o.status, status);
  }
  for (const bad of ['bogus', 'ARCHIVED', 'New', '', 'pending']) {
    assertError(await http(svc.url, 'GET', `/api/v1/orders${qs({ status: bad })}`, { token: key }), 400, 'validation_failed', `status=${bad}`);
  }
  // A status change moves the order between filters.
  await op.setStatus(d.id, 'new');
  assertSameSet(await listIds(svc.url, key, { status: 'new' }), [a.id, d.id]);
  assertSameSet(await listIds(svc.url, key, { status: 'archived' }), []);
  assertSameSet(await listIds(svc.url, key), [a.id, b.id, c.id, d.id]);
});

test('payment filter matches payment_status', async () => {
  const { op, accountId, key } = await freshTenant(svc.url);
  const pending = await op.checkout(accountId);
  const paidAtCheckout = await op.checkout(accountId, { payment_method: 'card', payment_status: 'paid' });
  const paidLater = await op.checkout(accountId);
  const refunded = await op.checkout(accountId, { payment_method: 'card', payment_status: 'paid' });
  assert.equal(pending.payment_status, 'pending');
  await op.pay(paidLater.id, 'paid');
  await op.pay(refunded.id, 'refunded');

  assertSameSet(await listIds(svc.url, key, { payment: 'paid' }), [paidAtCheckout.id, paidLater.id]);
  assertSameSet(await listIds(svc.url, key, { payment: 'pending' }), [pending.id]);
  assertSameSet(await listIds(svc.url, key, { payment: 'refunded' }), [refunded.id]);
  assertSameSet(await listIds(svc.url, key, { payment: 'never-used' }), []);
  assertSameSet(await listIds(svc.url, key, { payment: 'paid', status: 'new' }), [paidAtCheckout.id, paidLater.id]);
  assertSameSet(await listIds(svc.url, key, { payment: 'paid', status: 'shipped' }), []);
});

test('from/to filter created_at with inclusive bounds; date-only from = 00:00Z, date-only to = end of that day', async () => {
  const { op, accountId, key } = await freshTenant(svc.url);
  const at = async (created_at: string) => (await op.checkout(accountId, { created_at })).id;
  const before = await at('2026-01-04T23:59:59.999Z');
  const start = await at('2026-01-05T00:00:00.000Z');
  const noon = await at('2026-01-05T12:00:00.000Z');
  const end = await at('2026-01-05T23:59:59.999Z');
  const next = await at('2026-01-06T00:00:00.000Z');
  const later = await at('2026-02-10T08:30:00Z');

  const order = await http(svc.url, 'GET', `/api/v1/orders/${noon}`, { token: key });
  assert.equal(order.body.data.created_at, '2026-01-05T12:00:00.000Z', 'checkout backdating is reflected');

  assertSameSet(await listIds(svc.url, key, { from: '2026-01-05' }), [start, noon, end, next, later], 'from=day');
  assertSameSet(await listIds(svc.url, key, { to: '2026-01-05' }), [before, start, noon, end], 'to=day');
  assertSameSet(await listIds(svc.url, key, { from: '2026-01-05', to: '2026-01-05' }), [start, noon, end], 'from=to=day');
  assertSameSet(await listIds(svc.url, key, { from: '2026-01-06', to: '2026-01-06' }), [next], 'next day');
  assertSameSet(
    await listIds(svc.url, key, { from: '2026-01-05T12:00:00Z', to: '2026-01-05T12:00:00Z' }),
    [noon],
    'exact instant, both bounds inclusive',
  );
  assertSameSet(await listIds(svc.url, key, { from: '2026-01-05T12:00:00.001Z' }), [end, next, later], 'from just after noon');
  assertSameSet(await listIds(svc.url, key, { to: '2026-01-05T11:59:59.999Z' }), [before, start], 'to just before noon');
  assertSameSet(
    await listIds(svc.url, key, { from: '2026-01-05T14:00:00+02:00', to: '2026-01-05T14:00:00.000+02:00' }),
    [noon],
    'offsets are honoured',
  );
  assertSameSet(await listIds(svc.url, key, { from: '2026-01-05T00:00:00.001Z', to: '2026-01-06T00:00:00Z' }), [noon, end, next], 'fractions');
  assertSameSet(await listIds(svc.url, key, { from: '2026-01-06', to: '2026-01-05' }), [], 'empty window');
  assertSameSet(await listIds(svc.url, key, { from: '2024-02-29' }), [before, start, noon, end, next, later], 'leap day is a date');
});

test('a from bound with a sub-millisecond fraction is not widened to the millisecond before it', async () => {
  // Strict dates accept fractional seconds (up to 9 digits). 00:00:00.000000001Z is after 00:00:00.000Z, so an order
  // created exactly at midnight is outside from=00:00:00.000000001Z (and inside to=00:00:00.000000001Z).
  const { op, accountId, key } = await freshTenant(svc.url);
  const midnight = (await op.checkout(accountId, { created_at: '2026-01-05T00:00:00.000Z' })).id;
  const later = (await op.checkout(accountId, { created_at: '2026-01-05T00:00:00.001Z' })).id;
  assertSameSet(await listIds(svc.url, key, { from: '2026-01-05T00:00:00.000000001Z' }), [later], 'from just after midnight');
  assertSameSet(await listIds(svc.url, key, { to: '2026-01-05T00:00:00.000999999Z' }), [midnight], 'to just before the next millisecond');
  assertSameSet(await listIds(svc.url, key, { since: '2999-01-01T00:00:00.000000001Z' }), []);
});

test('lenient or impossible dates in from, to and since are 400 validation_failed', async () => {
  const { op, accountId, key } = await freshTenant(svc.url);
  await op.checkout(accountId);
  const lenient = [
    '2026-1-5',
    '2026-01-5',
    '2026-01-05 10:00',
    '2026-01-05 10:00:00Z',
    '2026-02-30',
    '2026-02-29',
    '2026-13-01',
    '2026-00-10',
    '2026-01-32',
    '2026-01-05T10:00:00',
    '2026-01-05T10:00',
    '2026-01-05T25:00:00Z',
    '2026-01-05T10:61:00Z',
    '05/01/2026',
    '2026/01/05',
    'yesterday',
    'now',
    '1767607200',
    '2026-01-05T10:00:00 Z',
    ' 2026-01-05',
    '2026-01-05T10:00:00ZZ',
    '',
  ];
  for (const value of lenient) {
    for (const param of ['from', 'to', 'since']) {
      const res = await http(svc.url, 'GET', `/api/v1/orders${qs({ [param]: value })}`, { token: key });
      assertError(res, 400, 'validation_failed', `${param}=${JSON.stringify(value)}`);
    }
  }
  const strict = ['2026-01-05', '2026-01-05T10:00:00Z', '2026-01-05T10:00:00.123Z', '2026-01-05T10:00:00+02:00', '2026-01-05T10:00:00.5-05:30'];
  for (const value of strict) {
    for (const param of ['from', 'to', 'since']) {
      const res = await http(svc.url, 'GET', `/api/v1/orders${qs({ [param]: value })}`, { token: key });
      assert.equal(res.status, 200, `${param}=${value}: ${res.text}`);
    }
  }
});

test('since filters on updated_at >= since (inclusive), not on created_at', async () => {
  const { op, accountId, key } = await freshTenant(svc.url);
  const old = await op.checkout(accountId, { created_at: '2020-01-01T00:00:00Z' });
  const a = await op.checkout(accountId);
  const b = await op.checkout(accountId);
  for (const o of [old, a, b]) assert.ok(o.updated_at, 'updated_at is set at creation');
  await sleep(20);
  const patchedA = await patch(key, a.id, { admin_notes: 'touched' });
  assert.ok(Date.parse(patchedA.updated_at) > Date.parse(b.updated_at), 'a PATCH moves updated_at forward');

  const all = (await listOrders(svc.url, key, { limit: 200 })).data;
  const expected = (since: string) => all.filter((o) => Date.parse(o.updated_at) >= Date.parse(since)).map((o) => o.id);

  const sinceA = await listIds(svc.url, key, { since: patchedA.updated_at });
  assertSameSet(sinceA, [a.id], 'only the order updated at or after the PATCH');
  const sinceB = await listIds(svc.url, key, { since: b.updated_at });
  assertSameSet(sinceB, expected(b.updated_at));
  assert.ok(sinceB.includes(b.id) && sinceB.includes(a.id), 'inclusive bound');
  const justAfter = new Date(Date.parse(patchedA.updated_at) + 1).toISOString();
  assertSameSet(await listIds(svc.url, key, { since: justAfter }), [], 'nothing updated after the last change');
  assertSameSet(await listIds(svc.url, key, { since: '2999-01-01' }), []);
  // The backdated order was created in 2020 but updated (created) now: since sees it, from does not.
  const day = old.updated_at.slice(0, 10);
  assert.ok((await listIds(svc.url, key, { since: day })).includes(old.id), 'since=today includes a backdated new order');
  assert.ok(!(await listIds(svc.url, key, { from: day })).includes(old.id), 'from=today excludes it');
  assertSameSet(await listIds(svc.url, key, { since: '2020-01-01' }), [old.id, a.id, b.id]);
});

test('page_id filter', async () => {
  const { op, accountId, key } = await freshTenant(svc.url);
  const product = await op.createProduct(accountId);
  const page1 = await op.createPage(accountId, [product.id]);
  const page2 = await op.createPage(accountId, [product.id]);
  const o1 = await op.checkout(accountId, { page_id: page1.id });
  const o2 = await op.checkout(accountId, { page_id: page1.id });
  const o3 = await op.checkout(accountId, { page_id: page2.id });
  await op.checkout(accountId);
  assert.equal(o1.page_id, page1.id);
  assertSameSet(await listIds(svc.url, key, { page_id: page1.id }), [o1.id, o2.id]);
  assertSameSet(await listIds(svc.url, key, { page_id: page2.id }), [o3.id]);
  assertSameSet(await listIds(svc.url, key, { page_id: crypto.randomUUID() }), []);
  assertSameSet(await listIds(svc.url, key, { page_id: page1.id.toUpperCase() }), [o1.id, o2.id], 'UUIDs are case-insensitive');
});

test('product_id filter: orders of pages selling the product, or whose line items contain it', async () => {
  const { op, accountId, key } = await freshTenant(svc.url);
  const p1 = await op.createProduct(accountId, { name: 'Kettle', sku: 'KET-1', price: 30 });
  const p2 = await op.createProduct(accountId, { name: 'Teapot', sku: 'TEA-1', price: 20 });
  const p3 = await op.createProduct(accountId, { name: 'Cup', sku: 'CUP-1', price: 5 });
  const pageP1 = await op.createPage(accountId, [p1.id]);
  const pageP2P3 = await op.createPage(accountId, [p2.id, p3.id]);
  const viaPage = await op.checkout(accountId, { page_id: pageP1.id });
  const viaLineItem = await op.checkout(accountId, { line_items: [{ product_id: p1.id, qty: 2 }], legacy: undefined });
  const viaBoth = await op.checkout(accountId, { page_id: pageP1.id, line_items: [{ product_id: p1.id, qty: 1 }], legacy: undefined });
  const p2Items = await op.checkout(accountId, {
    line_items: [
      { product_id: p2.id, qty: 1 },
      { product_id: p3.id, qty: 3, kind: 'bump' },
    ],
    legacy: undefined,
  });
  const p1OnOtherPage = await op.checkout(accountId, { page_id: pageP2P3.id, line_items: [{ product_id: p1.id, qty: 1 }], legacy: undefined });
  const pageP2Legacy = await op.checkout(accountId, { page_id: pageP2P3.id });
  await op.checkout(accountId);

  assertSameSet(await listIds(svc.url, key, { product_id: p1.id }), [viaPage.id, viaLineItem.id, viaBoth.id, p1OnOtherPage.id]);
  assertSameSet(await listIds(svc.url, key, { product_id: p2.id }), [p2Items.id, p1OnOtherPage.id, pageP2Legacy.id]);
  assertSameSet(await listIds(svc.url, key, { product_id: p3.id }), [p2Items.id, p1OnOtherPage.id, pageP2Legacy.id]);
  assertSameSet(await listIds(svc.url, key, { product_id: crypto.randomUUID() }), []);
  assertSameSet(await listIds(svc.url, key, { product_id: p1.id, page_id: pageP1.id }), [viaPage.id, viaBoth.id], 'filters combine with AND');
});

test('courier filter matches the order courier; courier=none means no tracking number', async () => {
  const { op, accountId, key } = await freshTenant(svc.url);
  // Every checkout chose courier_a at checkout (shipping.courier_slug); `courier` is the courier actually used.
  const bTracked = await op.checkout(accountId);
  const aTracked = await op.checkout(accountId);
  const bUntracked = await op.checkout(accountId);
  const trackedNoCourier = await op.checkout(accountId);
  const plain = await op.checkout(accountId);
  await patch(key, bTracked.id, { courier: 'courier_b', tracking_number: 'TB-1' });
  await patch(key, aTracked.id, { courier: 'courier_a', tracking_number: 'TA-1' });
  await patch(key, bUntracked.id, { courier: 'courier_b' });
  await patch(key, trackedNoCourier.id, { tracking_number: 'FREE-1' });

  assertSameSet(await listIds(svc.url, key, { courier: 'courier_b' }), [bTracked.id, bUntracked.id]);
  assertSameSet(await listIds(svc.url, key, { courier: 'courier_a' }), [aTracked.id], 'not the checkout choice');
  assertSameSet(await listIds(svc.url, key, { courier: 'courier_c' }), []);
  assertSameSet(await listIds(svc.url, key, { courier: 'none' }), [bUntracked.id, plain.id]);
  // Clearing the tracking number puts the order back under none.
  await patch(key, aTracked.id, { tracking_number: null });
  assertSameSet(await listIds(svc.url, key, { courier: 'none' }), [bUntracked.id, plain.id, aTracked.id]);
  await patch(key, plain.id, { courier: 'Local Van Co', tracking_number: 'LV-9' });
  assertSameSet(await listIds(svc.url, key, { courier: 'Local Van Co' }), [plain.id], 'free-text courier');
});

test('shipment_status: a valid value with no shipments gives an empty list; an invalid value is 400', async () => {
  const { op, accountId, key } = await freshTenant(svc.url);
  await op.checkout(accountId);
  await op.checkout(accountId);
  for (const status of ['pending', 'picked_up', 'in_transit', 'delivered', 'cancelled', 'refused', 'returned']) {
    const page = await listOrders(svc.url, key, { shipment_status: status });
    assert.deepEqual(page, { data: [], has_more: false, next_cursor: null }, `shipment_status=${status}`);
  }
  for (const bad of ['shipped', 'bogus', 'PENDING', '']) {
    assertError(
      await http(svc.url, 'GET', `/api/v1/orders${qs({ shipment_status: bad })}`, { token: key }),
      400,
      'validation_failed',
      `shipment_status=${bad}`,
    );
  }
});

test('q searches customer name, phone, email and tracking number, case-insensitively, with % and _ literal', async () => {
  const { op, accountId, key } = await freshTenant(svc.url);
  const shipping = { address: 'ul. Vitosha 1', city: 'Sofia', zip: '1000' };
  const co = (customer: Record<string, string | null>) => op.checkout(accountId, { customer, shipping });
  const zlatka = await co({ name: 'Zlatka Ivanova', email: 'Z.Ivanova@Example.COM', phone: '+359 888 123 456' });
  const pct = await co({ name: 'Boris 100% Cotton', email: 'boris@shop.bg', phone: '0700 111' });
  const noPct = await co({ name: 'Boris 100 Cotton', email: 'a_b@shop.bg', phone: '0700 222' });
  const mira = await co({ name: 'Mira', email: 'axb@shop.bg', phone: '0700 333' });
  const anon = await co({ name: null, email: null, phone: null });
  await patch(key, mira.id, { tracking_number: 'TRK-Zeta-777', courier: 'courier_c' });

  const cases: Array<[string, string[]]> = [
    ['zlatka', [zlatka.id]],
    ['IVANOVA', [zlatka.id]],
    ['example.com', [zlatka.id]],
    ['z.ivanova@example.com', [zlatka.id]],
    ['888 123', [zlatka.id]],
    ['+359', [zlatka.id]],
    ['cotton', [pct.id, noPct.id]],
    ['BORIS', [pct.id, noPct.id]],
    ['100%', [pct.id]],
    ['%', [pct.id]],
    ['100% c', [pct.id]],
    ['a_b', [noPct.id]],
    ['_', [noPct.id]],
    ['shop.bg', [pct.id, noPct.id, mira.id]],
    ['trk-zeta', [mira.id]],
    ['ZETA-777', [mira.id]],
    ['0700', [pct.id, noPct.id, mira.id]],
    ['Vitosha', []],
    ['Sofia', []],
    ['courier_c', []],
    ['mira0700', []],
    ['\\', []],
    ["'; DROP TABLE orders; --", []],
    ['nobody-matches-this', []],
  ];
  for (const [q, expected] of cases) {
    assertSameSet(await listIds(svc.url, key, { q }), expected, `q=${q}`);
  }
  assert.ok(!(await listIds(svc.url, key, { q: 'a' })).includes(anon.id), 'null fields never match');
  assertSameSet(await listIds(svc.url, key, { q: 'boris', status: 'new' }), [pct.id, noPct.id]);
  assertSameSet(await listIds(svc.url, key, { q: 'boris', status: 'shipped' }), []);

  const ok = await http(svc.url, 'GET', `/api/v1/orders${qs({ q: 'x'.repeat(100) })}`, { token: key });
  assert.equal(ok.status, 200, 'q of 100 characters is accepted');
  assert.deepEqual(ok.body.data, []);
  assertError(
    await http(svc.url, 'GET', `/api/v1/orders${qs({ q: 'x'.repeat(101) })}`, { token: key }),
    400,
    'validation_failed',
    'q of 101 characters',
  );
  assertError(
    await http(svc.url, 'GET', `/api/v1/orders${qs({ q: 'é'.repeat(101) })}`, { token: key }),
    400,
    'validation_failed',
    'q of 101 non-ASCII characters',
  );
  const wide = await http(svc.url, 'GET', `/api/v1/orders${qs({ q: 'é'.repeat(100) })}`, { token: key });
  assert.equal(wide.status, 200, 'the limit counts characters, not bytes');
});

test('q is case-insensitive for non-ASCII names too (Cyrillic, accented Latin)', async () => {
  const { op, accountId, key } = await freshTenant(svc.url);
  const cyr = await op.checkout(accountId, { customer: { name: 'Златка Иванова', email: 'zlatka@example.bg', phone: '0888 1' } });
  const lat = await op.checkout(accountId, { customer: { name: 'Émile Dupré', email: 'emile@example.fr', phone: '0888 2' } });
  const cases: Array<[string, string[]]> = [
    ['Златка', [cyr.id]],
    ['златка', [cyr.id]],
    ['ЗЛАТКА', [cyr.id]],
    ['иванова', [cyr.id]],
    ['émile', [lat.id]],
    ['ÉMILE', [lat.id]],
    ['DUPRÉ', [lat.id]],
    // One or two characters (migration 017's short-substring index, not the trigram one) give the same answers.
    ['зл', [cyr.id]],
    ['ЗЛ', [cyr.id]],
    ['ÉM', [lat.id]],
    ['é', [lat.id]],
    ['88', [cyr.id, lat.id]],
    ['ж', []],
    ['😀', []],
    ['a😀', []],
  ];
  for (const [q, expected] of cases) {
    assertSameSet(await listIds(svc.url, key, { q }), expected, `q=${q}`);
  }
});

test('orders are listed newest first by created_at', async () => {
  const { op, accountId, key } = await freshTenant(svc.url);
  const stamps = ['2026-03-03T10:00:00Z', '2026-03-01T10:00:00Z', '2026-03-05T10:00:00Z', '2026-03-02T10:00:00Z', '2026-03-04T10:00:00Z'];
  const byStamp = new Map<string, string>();
  for (const s of stamps) byStamp.set(s, (await op.checkout(accountId, { created_at: s })).id);
  const fresh = await op.checkout(accountId);
  const list = (await listOrders(svc.url, key)).data;
  const expected = [
    fresh.id,
    ...[...stamps]
      .sort()
      .reverse()
      .map((s) => byStamp.get(s)),
  ];
  assert.deepEqual(
    list.map((o) => o.id),
    expected,
  );
  for (let i = 1; i < list.length; i++) {
    assert.ok(Date.parse(list[i - 1].created_at) >= Date.parse(list[i].created_at), 'created_at descends');
  }
});

test('keyset paging: walking every page (limit 2 and 3) gives every order once, in order; next_cursor null at the end', async () => {
  const { op, accountId, key } = await freshTenant(svc.url);
  const ids: string[] = [];
  for (let i = 0; i < 7; i++) ids.push((await op.checkout(accountId, { created_at: `2026-04-0${i + 1}T09:00:00Z` })).id);
  // Three orders share one created_at: the keyset (created_at, id) must still page through them exactly once.
  for (let i = 0; i < 3; i++) ids.push((await op.checkout(accountId, { created_at: '2026-04-03T09:00:00Z' })).id);
  const full = (await listOrders(svc.url, key, { limit: 200 })).data.map((o) => o.id);
  assert.equal(full.length, 10);
  assertSameSet(full, ids);

  for (const limit of [1, 2, 3, 10]) {
    const walked: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    for (;;) {
      const page = await listOrders(svc.url, key, { limit, cursor });
      pages++;
      walked.push(...page.data.map((o) => o.id));
      if (!page.has_more) {
        assert.equal(page.next_cursor, null, 'next_cursor is null on the last page');
        break;
      }
      assert.equal(page.data.length, limit, 'full pages before the last');
      assert.equal(typeof page.next_cursor, 'string');
      cursor = page.next_cursor!;
      assert.ok(pages < 20);
    }
    assert.equal(new Set(walked).size, walked.length, `limit ${limit}: no duplicates`);
    assert.deepEqual(walked, full, `limit ${limit}: no gaps, same order`);
    assert.equal(pages, Math.ceil(10 / limit), `limit ${limit}: page count`);
  }
  // Filters carry across pages.
  await op.setStatus(ids[0], 'confirmed');
  await op.setStatus(ids[2], 'confirmed');
  await op.setStatus(ids[8], 'confirmed');
  const first = await listOrders(svc.url, key, { status: 'confirmed', limit: 2 });
  assert.equal(first.has_more, true);
  const second = await listOrders(svc.url, key, { status: 'confirmed', limit: 2, cursor: first.next_cursor! });
  assert.equal(second.has_more, false);
  assertSameSet(
    [...first.data, ...second.data].map((o) => o.id),
    [ids[0], ids[2], ids[8]],
  );
});

test('orders inserted while paging do not shift later pages', async () => {
  const { op, accountId, key } = await freshTenant(svc.url);
  for (let i = 1; i <= 6; i++) await op.checkout(accountId, { created_at: `2026-05-0${i}T08:00:00Z` });
  const full = (await listOrders(svc.url, key)).data.map((o) => o.id);
  const page1 = await listOrders(svc.url, key, { limit: 2 });
  assert.deepEqual(
    page1.data.map((o) => o.id),
    full.slice(0, 2),
  );

  // New orders arrive: newer than everything, and one between page 1 and the cursor position.
  await op.checkout(accountId);
  await op.checkout(accountId);
  await op.checkout(accountId, { created_at: '2026-05-05T20:00:00Z' });

  const page2 = await listOrders(svc.url, key, { limit: 2, cursor: page1.next_cursor! });
  assert.deepEqual(
    page2.data.map((o) => o.id),
    full.slice(2, 4),
  );
  await op.checkout(accountId);
  const page3 = await listOrders(svc.url, key, { limit: 2, cursor: page2.next_cursor! });
  assert.deepEqual(
    page3.data.map((o) => o.id),
    full.slice(4, 6),
  );
  assert.equal(page3.has_more, false);
  assert.equal(page3.next_cursor, null);
  // A fresh walk sees everything.
  assert.equal((await listIds(svc.url, key)).length, 10);
});

test("another account's orders never appear in the list", async () => {
  const mine = await freshTenant(svc.url);
  const theirs = await freshTenant(svc.url);
  const theirProduct = await theirs.op.createProduct(theirs.accountId);
  const theirPage = await theirs.op.createPage(theirs.accountId, [theirProduct.id]);
  const their = await theirs.op.checkout(theirs.accountId, {
    page_id: theirPage.id,
    customer: { name: 'Outsider Person', email: 'outsider@other.example', phone: '+1 555 0100' },
    line_items: [{ product_id: theirProduct.id, qty: 1 }],
    legacy: undefined,
  });
  await theirs.op.setStatus(their.id, 'archived');
  const own = await mine.op.checkout(mine.accountId);

  const filters: Array<Record<string, string>> = [
    {},
    { q: 'outsider' },
    { status: 'archived' },
    { page_id: theirPage.id },
    { product_id: theirProduct.id },
    { courier: 'none' },
    { from: '2000-01-01' },
    { since: '2000-01-01' },
  ];
  for (const f of filters) {
    const ids = await listIds(svc.url, mine.key, f);
    assert.ok(!ids.includes(their.id), `filter ${JSON.stringify(f)}`);
  }
  assertSameSet(await listIds(svc.url, mine.key), [own.id]);
  assertSameSet(await listIds(svc.url, theirs.key, { status: 'archived' }), [their.id]);
});
