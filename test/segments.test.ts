// SPEC Endpoints > "Customers and segments" (segments, computed filter keys,
// membership vs computed), "Customer, segment, note"; GAPS "Customers,
// segments, notes" (segment view, filter value types, dry runs, delete
// result). Every filter key is checked against a hand-built set of customers:
// helpers/customers.ts `prober` tells exactly which customers a filter
// matches, and the previewed and saved customer_count must agree with it.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService, http, type TestService } from './helpers/harness.ts';
import { assertError, assertScopeMissing } from './helpers/contract.ts';
import { callTool, assertRefusal } from './helpers/mcp.ts';
import { assertResponseMatches, type OpenApiDoc } from './helpers/openapi-validator.ts';
import { shop, prober, daysAgo, assertSegmentView, DRY, FILTER_KEYS, UNKNOWN_UUID, type Shop } from './helpers/customers.ts';

let svc: TestService;
let doc: OpenApiDoc;
before(async () => {
  svc = await startTestService();
  doc = (await http(svc.url, 'GET', '/api/v1/openapi.json')).body;
});
after(async () => {
  await svc.close();
});

const price = (unit_price: number) => ({ legacy: { product_name: 'Item', quantity: 1, unit_price } });

/** Saves a computed segment with these filters and checks customer_count on create and in the list. */
async function saved(s: Shop, filters: Record<string, unknown>, expected: number) {
  const seg = await s.createSegment({ name: `saved ${JSON.stringify(filters)}`, filters });
  assert.equal(seg.kind, 'computed');
  assert.deepEqual(seg.filters, filters, 'filters are stored as given');
  assert.equal(seg.customer_count, expected, `${JSON.stringify(filters)}: customer_count on create`);
  assert.equal((await s.segment(seg.id)).customer_count, expected, `${JSON.stringify(filters)}: customer_count in GET /segments`);
  return seg;
}

/** Totals: A 49.99, B 50 (20 + 30), C 120.50, D 100 (+ a cancelled 500), E 75 (phone only, + a refunded 10). */
async function spenders(s: Shop) {
  await s.order({ email: 'a@example.com' }, price(49.99));
  await s.order({ email: 'b@example.com' }, price(20));
  await s.order({ email: 'B@Example.com' }, price(30));
  await s.order({ email: 'c@example.com' }, price(120.5));
  await s.order({ email: 'd@example.com' }, price(100));
  await s.orderIn('cancelled', { email: 'd@example.com' }, price(500));
  await s.order({ phone: '+359880000005' }, price(75));
  await s.orderIn('refunded', { phone: '+359880000005' }, price(10));
  // Only excluded orders: never a customer, whatever the filter.
  await s.orderIn('archived', { email: 'ghost@example.com' }, price(1000));
  return prober(s, { A: 'a@example.com', B: 'b@example.com', C: 'c@example.com', D: 'd@example.com', E: '+359880000005' });
}

test('minTotal: total_spent >= minTotal (inclusive), over counted orders only', async () => {
  const s = await shop(svc.url);
  const p = await spenders(s);
  await p.expect({ minTotal: 50 }, ['B', 'C', 'D', 'E']);
  await p.expect({ minTotal: 100 }, ['C', 'D']);
  await p.expect({ minTotal: 100.01 }, ['C']);
  await p.expect({ minTotal: 49.99 }, ['A', 'B', 'C', 'D', 'E']);
  await p.expect({ minTotal: 0 }, ['A', 'B', 'C', 'D', 'E']);
  await p.expect({ minTotal: 500 }, []);
  await saved(s, { minTotal: 100 }, 2);
});

test('maxTotal: total_spent <= maxTotal (inclusive); with minTotal a closed range', async () => {
  const s = await shop(svc.url);
  const p = await spenders(s);
  await p.expect({ maxTotal: 50 }, ['A', 'B']);
  await p.expect({ maxTotal: 49.98 }, []);
  await p.expect({ maxTotal: 100 }, ['A', 'B', 'D', 'E']);
  await p.expect({ maxTotal: 1000 }, ['A', 'B', 'C', 'D', 'E']);
  await p.expect({ minTotal: 50, maxTotal: 100 }, ['B', 'D', 'E']);
  await p.expect({ minTotal: 101, maxTotal: 100 }, []);
  await saved(s, { maxTotal: 50 }, 2);
});

/** Counted orders: A 1, B 2, C 3, D 2 (+ archived + refunded), E 2 (one returned, which counts). */
async function frequentBuyers(s: Shop) {
  await s.order({ email: 'a@example.com' });
  for (let i = 0; i < 2; i++) await s.order({ email: 'b@example.com' });
  for (let i = 0; i < 3; i++) await s.order({ email: 'c@example.com' });
  for (let i = 0; i < 2; i++) await s.order({ email: 'd@example.com' });
  await s.orderIn('archived', { email: 'd@example.com' });
  await s.orderIn('refunded', { email: 'd@example.com' });
  await s.order({ phone: '+359880000005' });
  await s.orderIn('returned', { phone: '+359880000005' });
  await s.orderIn('cancelled', { email: 'ghost@example.com' });
  return prober(s, { A: 'a@example.com', B: 'b@example.com', C: 'c@example.com', D: 'd@example.com', E: '+359880000005' });
}

test('minOrders: orders_count >= minOrders (inclusive), cancelled/archived/refunded not counted, returned counted', async () => {
  const s = await shop(svc.url);
  const p = await frequentBuyers(s);
  await p.expect({ minOrders: 2 }, ['B', 'C', 'D', 'E']);
  await p.expect({ minOrders: 3 }, ['C']);
  await p.expect({ minOrders: 4 }, []);
  await p.expect({ minOrders: 0 }, ['A', 'B', 'C', 'D', 'E']);
  await saved(s, { minOrders: 2 }, 4);
});

test('maxOrders: orders_count <= maxOrders (inclusive); 0 matches nobody (customers have counted orders)', async () => {
  const s = await shop(svc.url);
  const p = await frequentBuyers(s);
  await p.expect({ maxOrders: 1 }, ['A']);
  await p.expect({ maxOrders: 2 }, ['A', 'B', 'D', 'E']);
  await p.expect({ maxOrders: 0 }, []);
  await p.expect({ minOrders: 2, maxOrders: 2 }, ['B', 'D', 'E']);
  await saved(s, { maxOrders: 2 }, 4);
});

test('lastOrderBeforeDaysAgo: the last counted order is more than N days ago', async () => {
  const s = await shop(svc.url);
  await s.order({ email: 'a@example.com' }, { created_at: daysAgo(5) });
  await s.order({ email: 'b@example.com' }, { created_at: daysAgo(20) });
  await s.order({ email: 'c@example.com' }, { created_at: daysAgo(40) });
  await s.orderIn('cancelled', { email: 'c@example.com' }, { created_at: daysAgo(1) });
  await s.order({ email: 'd@example.com' }, { created_at: daysAgo(100) });
  await s.order({ email: 'd@example.com' }, { created_at: daysAgo(2) });
  await s.order({ phone: '+359880000005' }, { created_at: daysAgo(400) });
  const p = await prober(s, { A: 'a@example.com', B: 'b@example.com', C: 'c@example.com', D: 'd@example.com', E: '+359880000005' });
  await p.expect({ lastOrderBeforeDaysAgo: 30 }, ['C', 'E']);
  await p.expect({ lastOrderBeforeDaysAgo: 10 }, ['B', 'C', 'E']);
  await p.expect({ lastOrderBeforeDaysAgo: 3 }, ['A', 'B', 'C', 'E']);
  await p.expect({ lastOrderBeforeDaysAgo: 365 }, ['E']);
  await p.expect({ lastOrderBeforeDaysAgo: 1000 }, []);
  await saved(s, { lastOrderBeforeDaysAgo: 30 }, 2);
});

/** Last counted orders: A 2026-01-04T23:59:59.999Z, B 2026-01-05T00:00Z, C 2026-01-05T12:00Z, D 2026-01-10, E 2026-01-01 (+ a cancelled 2026-02-01). */
async function dated(s: Shop) {
  await s.order({ email: 'a@example.com' }, { created_at: '2025-06-01T00:00:00Z' });
  await s.order({ email: 'a@example.com' }, { created_at: '2026-01-04T23:59:59.999Z' });
  await s.order({ email: 'b@example.com' }, { created_at: '2026-01-05T00:00:00.000Z' });
  await s.order({ email: 'c@example.com' }, { created_at: '2026-01-05T14:00:00+02:00' });
  await s.order({ email: 'd@example.com' }, { created_at: '2026-01-10' });
  await s.order({ phone: '+359880000005' }, { created_at: '2026-01-01T00:00:00Z' });
  await s.orderIn('cancelled', { phone: '+359880000005' }, { created_at: '2026-02-01T00:00:00Z' });
  return prober(s, { A: 'a@example.com', B: 'b@example.com', C: 'c@example.com', D: 'd@example.com', E: '+359880000005' });
}

test('lastOrderAfterDate: last counted order >= the date; a date-only value is 00:00Z; offsets and fractions honoured', async () => {
  const s = await shop(svc.url);
  const p = await dated(s);
  await p.expect({ lastOrderAfterDate: '2026-01-05' }, ['B', 'C', 'D']);
  await p.expect({ lastOrderAfterDate: '2026-01-05T00:00:00Z' }, ['B', 'C', 'D']);
  await p.expect({ lastOrderAfterDate: '2026-01-05T00:00:00.001Z' }, ['C', 'D']);
  await p.expect({ lastOrderAfterDate: '2026-01-05T12:00:00.000Z' }, ['C', 'D']);
  await p.expect({ lastOrderAfterDate: '2026-01-05T14:00:00+02:00' }, ['C', 'D']);
  await p.expect({ lastOrderAfterDate: '2026-01-04T23:59:59.999Z' }, ['A', 'B', 'C', 'D']);
  await p.expect({ lastOrderAfterDate: '2026-01-11' }, []);
  await p.expect({ lastOrderAfterDate: '2020-01-01' }, ['A', 'B', 'C', 'D', 'E']);
  await saved(s, { lastOrderAfterDate: '2026-01-05' }, 3);
});

test('lastOrderBeforeDate: last counted order < the date; a date-only value is 00:00Z; with lastOrderAfterDate a window', async () => {
  const s = await shop(svc.url);
  const p = await dated(s);
  await p.expect({ lastOrderBeforeDate: '2026-01-05' }, ['A', 'E']);
  await p.expect({ lastOrderBeforeDate: '2026-01-05T00:00:00.001Z' }, ['A', 'B', 'E']);
  await p.expect({ lastOrderBeforeDate: '2026-01-05T14:00:00+02:00' }, ['A', 'B', 'E']);
  await p.expect({ lastOrderBeforeDate: '2026-01-05T12:00:00.001Z' }, ['A', 'B', 'C', 'E']);
  await p.expect({ lastOrderBeforeDate: '2026-01-01' }, []);
  await p.expect({ lastOrderBeforeDate: '2030-01-01' }, ['A', 'B', 'C', 'D', 'E']);
  await p.expect({ lastOrderAfterDate: '2026-01-02', lastOrderBeforeDate: '2026-01-06' }, ['A', 'B', 'C']);
  await saved(s, { lastOrderBeforeDate: '2026-01-05' }, 2);
});

test('productId: bought the product in a counted order, through line items or from a page selling it', async () => {
  const s = await shop(svc.url);
  const P = await s.op.createProduct(s.accountId, { name: 'Pen', price: 3, sku: 'PEN-1' });
  const Q = await s.op.createProduct(s.accountId, { name: 'Quill', price: 8, sku: 'QUILL-1' });
  const R = await s.op.createProduct(s.accountId, { name: 'Ruler', price: 2, sku: 'RULER-1' });
  const pageP = await s.op.createPage(s.accountId, [P.id]);
  const pageQ = await s.op.createPage(s.accountId, [Q.id]);
  const items = (...ids: string[]) => ({ line_items: ids.map((product_id) => ({ product_id, qty: 1 })) });
  // A: line item P, no page.
  await s.order({ email: 'a@example.com' }, items(P.id));
  // B: a legacy order (no line items) from the page selling P.
  await s.order({ email: 'b@example.com' }, { page_id: pageP.id });
  // C: P only in a cancelled order; Q in a counted one.
  await s.orderIn('cancelled', { email: 'c@example.com' }, items(P.id));
  await s.order({ email: 'c@example.com' }, items(Q.id));
  // D: Q from the page selling Q.
  await s.order({ phone: '+359880000004' }, { ...items(Q.id), page_id: pageQ.id });
  // E: both, as two line items of one order.
  await s.order({ email: 'e@example.com' }, items(R.id, P.id, Q.id));
  // F: P only in a refunded order and from P's page in an archived one; R in a counted one.
  await s.orderIn('refunded', { email: 'f@example.com' }, items(P.id));
  await s.orderIn('archived', { email: 'f@example.com' }, { page_id: pageP.id });
  await s.order({ email: 'f@example.com' }, items(R.id));
  const p = await prober(s, {
    A: 'a@example.com',
    B: 'b@example.com',
    C: 'c@example.com',
    D: '+359880000004',
    E: 'e@example.com',
    F: 'f@example.com',
  });
  await p.expect({ productId: P.id }, ['A', 'B', 'E']);
  await p.expect({ productId: Q.id }, ['C', 'D', 'E']);
  await p.expect({ productId: R.id }, ['E', 'F']);
  assertError(await s.api('POST', '/api/v1/segments', { body: { name: 'x', filters: { productId: UNKNOWN_UUID } }, headers: DRY }), 404, 'not_found');
  await saved(s, { productId: P.id }, 3);
  // A later counted order brings F in.
  await s.order({ email: 'f@example.com' }, { page_id: pageP.id });
  await p.expect({ productId: P.id }, ['A', 'B', 'E', 'F']);
});

test('pageId: ordered from that page in a counted order', async () => {
  const s = await shop(svc.url);
  const P = await s.op.createProduct(s.accountId, { name: 'Pen', price: 3, sku: 'PEN-1' });
  const page1 = await s.op.createPage(s.accountId, [P.id]);
  const page2 = await s.op.createPage(s.accountId, [P.id]);
  await s.order({ email: 'a@example.com' }, { page_id: page1.id });
  await s.order({ email: 'b@example.com' }, { page_id: page2.id });
  await s.order({ email: 'b@example.com' });
  await s.orderIn('cancelled', { email: 'c@example.com' }, { page_id: page1.id });
  await s.order({ email: 'c@example.com' }, { page_id: page2.id });
  // D bought P through line items but not from any page.
  await s.order({ phone: '+359880000004' }, { line_items: [{ product_id: P.id, qty: 1 }] });
  const p = await prober(s, { A: 'a@example.com', B: 'b@example.com', C: 'c@example.com', D: '+359880000004' });
  await p.expect({ pageId: page1.id }, ['A']);
  await p.expect({ pageId: page2.id }, ['B', 'C']);
  assertError(await s.api('POST', '/api/v1/segments', { body: { name: 'x', filters: { pageId: UNKNOWN_UUID } }, headers: DRY }), 404, 'not_found');
  await p.expect({ productId: P.id }, ['A', 'B', 'C', 'D']);
  await saved(s, { pageId: page2.id }, 2);
});

test('inSegment: members of a membership segment with counted orders, or the customers a computed segment matches', async () => {
  const s = await shop(svc.url);
  await s.order({ email: 'a@example.com' }, price(200));
  await s.order({ phone: '+359880000002', email: null }, price(20));
  await s.orderIn('cancelled', { email: 'c@example.com' }, price(300));
  await s.order({ email: 'd@example.com', phone: '+359880000004' }, price(150));
  await s.order({ email: 'e@example.com' }, price(5));

  const list = await s.createSegment({ name: 'VIP list' });
  assert.equal(list.kind, 'membership');
  await s.addMembers(list.id, [
    { email: 'A@example.com' },
    { phone: '+359880000002' },
    { email: 'c@example.com' },
    { email: 'never-ordered@example.com' },
  ]);
  assert.equal((await s.segment(list.id)).customer_count, 4, 'a membership segment counts its members');
  // Computed over the list: only members that are customers (counted orders).
  const inList = await saved(s, { inSegment: list.id }, 2);
  assert.equal(await s.previewCount({ inSegment: list.id, minTotal: 100 }), 1);
  assert.equal(await s.previewCount({ inSegment: list.id, hasPhone: true }), 1);
  assert.equal(await s.previewCount({ inSegment: list.id, hasEmail: true }), 1);

  // Over a computed segment: the customers its filters match (A, D), combined with more filters.
  const big = await saved(s, { minTotal: 100 }, 2);
  await saved(s, { inSegment: big.id }, 2);
  assert.equal(await s.previewCount({ inSegment: big.id, hasPhone: true }), 1);
  assert.equal(await s.previewCount({ inSegment: big.id, maxTotal: 199.99 }), 1);
  assert.equal(await s.previewCount({ inSegment: inList.id, minTotal: 100 }), 1, 'a computed segment over a membership segment');
  // Two levels of nesting.
  const nested = await saved(s, { inSegment: big.id, hasPhone: true }, 1);
  assert.equal(await s.previewCount({ inSegment: nested.id }), 1);

  // Counts are computed on read: a new member with an order, a new big spender.
  await s.addMembers(list.id, [{ email: 'e@example.com' }]);
  await s.order({ email: 'e@example.com' }, price(100));
  assert.equal((await s.segment(inList.id)).customer_count, 3);
  assert.equal((await s.segment(big.id)).customer_count, 3);
  assert.equal((await s.segment(list.id)).customer_count, 5);
});

test('ids inside filters (productId, pageId, inSegment) must name rows of this account: 404 not_found otherwise, on create, update, dry run and MCP', async () => {
  const s = await shop(svc.url);
  const other = await shop(svc.url);
  const theirs = {
    productId: (await other.op.createProduct(other.accountId, { name: 'Theirs', price: 1 })).id,
    pageId: (await other.op.createPage(other.accountId, [])).id,
    inSegment: (await other.createSegment({ name: 'theirs' })).id,
  };
  const mine = {
    productId: (await s.op.createProduct(s.accountId, { name: 'Mine', price: 1 })).id,
    pageId: (await s.op.createPage(s.accountId, [])).id,
    inSegment: (await s.createSegment({ name: 'mine' })).id,
  };
  const target = await s.createSegment({ name: 'target', filters: { minOrders: 1 } });
  for (const [key, foreign] of Object.entries(theirs)) {
    for (const id of [foreign, UNKNOWN_UUID]) {
      const filters = { [key]: id };
      assertError(await s.api('POST', '/api/v1/segments', { body: { name: 'x', filters } }), 404, 'not_found', `create ${key}`);
      assertError(await s.api('POST', '/api/v1/segments', { body: { name: 'x', filters }, headers: DRY }), 404, 'not_found', `dry create ${key}`);
      assertError(await s.api('PATCH', `/api/v1/segments/${target.id}`, { body: { filters } }), 404, 'not_found', `update ${key}`);
      assertError(await s.api('PATCH', `/api/v1/segments/${target.id}`, { body: { filters }, headers: DRY }), 404, 'not_found', `dry update ${key}`);
      const mcp = await callTool(svc.url, s.key, 'create_segment', { name: 'x', filters });
      assertRefusal(mcp, 'NOT_FOUND');
    }
    assertError(await s.api('POST', '/api/v1/segments', { body: { name: 'x', filters: { [key]: 'not-a-uuid' } } }), 400, 'validation_failed');
    // The account's own id is accepted.
    await s.api('POST', '/api/v1/segments', { body: { name: `own ${key}`, filters: { [key]: mine[key as keyof typeof mine] } }, expect: 201 });
  }
  assert.deepEqual((await s.segment(target.id)).filters, { minOrders: 1 }, 'the refused updates changed nothing');
  assert.equal((await s.segments()).length, 5, 'mine, target and the three own-id segments; nothing else was created');
});

/**
 * A: email + phone; B: phone only; C: email only; D: email, newest order
 * without a phone (an older one had one); E: email and a blank phone.
 */
async function contactable(s: Shop) {
  await s.order({ email: 'a@example.com', phone: '+359880000001' });
  await s.order({ email: null, phone: '+359880000002' });
  await s.order({ email: 'c@example.com', phone: null });
  await s.order({ email: 'd@example.com', phone: '+359880000004' }, { created_at: '2026-01-01T00:00:00Z' });
  await s.order({ email: 'd@example.com', phone: null }, { created_at: '2026-02-01T00:00:00Z' });
  await s.order({ email: 'e@example.com', phone: '' });
  return prober(s, { A: 'a@example.com', B: '+359880000002', C: 'c@example.com', D: 'd@example.com', E: 'e@example.com' });
}

test('hasEmail: the customer has an email (true) or only a phone (false)', async () => {
  const s = await shop(svc.url);
  const p = await contactable(s);
  const emails = Object.fromEntries((await s.allCustomers()).map((c) => [c.key, c.email]));
  assert.equal(emails['+359880000002'], null);
  await p.expect({ hasEmail: true }, ['A', 'C', 'D', 'E']);
  await p.expect({ hasEmail: false }, ['B']);
  await saved(s, { hasEmail: false }, 1);
});

test('hasPhone: the customer has a phone (from the newest order, as the customer view shows it); a blank phone is no phone', async () => {
  const s = await shop(svc.url);
  const p = await contactable(s);
  const phones = Object.fromEntries((await s.allCustomers()).map((c) => [c.key, c.phone]));
  assert.equal(phones['d@example.com'], null, 'GAPS: phone from the newest order');
  await p.expect({ hasPhone: true }, ['A', 'B']);
  await p.expect({ hasPhone: false }, ['C', 'D', 'E']);
  await p.expect({ hasPhone: true, hasEmail: true }, ['A']);
  await saved(s, { hasPhone: true }, 2);
});

test("hasAbandonedCart: a cart under the customer's email (any case) or phone", async () => {
  const s = await shop(svc.url);
  await s.order({ email: 'a@example.com', phone: '+359880000001' });
  await s.order({ email: null, phone: '+359880000002' });
  await s.order({ email: 'c@example.com', phone: '+359880000003' });
  await s.order({ email: 'd@example.com' });
  await s.order({ email: 'e@example.com', phone: '+359880000005' });
  await s.orderIn('cancelled', { email: 'f@example.com' });
  const cart = (body: Record<string, string>) => s.op.call('POST', `/accounts/${s.accountId}/abandoned-carts`, body);
  await cart({ email: 'A@Example.COM' });
  await cart({ phone: '+359880000002' });
  await cart({ phone: '+359880000005' });
  await cart({ email: 'f@example.com' });
  await cart({ email: 'stranger@example.com', phone: '+359899999999' });
  // An imported contact is not a cart.
  await s.op.call('POST', `/accounts/${s.accountId}/contacts`, { email: 'c@example.com' });
  const p = await prober(s, { A: 'a@example.com', B: '+359880000002', C: 'c@example.com', D: 'd@example.com', E: 'e@example.com' });
  await p.expect({ hasAbandonedCart: true }, ['A', 'B', 'E']);
  await p.expect({ hasAbandonedCart: false }, ['C', 'D']);
  await saved(s, { hasAbandonedCart: true }, 3);
  await cart({ email: 'd@example.com' });
  await p.expect({ hasAbandonedCart: true }, ['A', 'B', 'D', 'E']);
});

test('combinations: every filter must hold (AND)', async () => {
  const s = await shop(svc.url);
  const P = await s.op.createProduct(s.accountId, { name: 'Pen', price: 30, sku: 'PEN-1' });
  const page = await s.op.createPage(s.accountId, [P.id]);
  const buy = (qty: number, created_at: string) => ({ line_items: [{ product_id: P.id, qty }], created_at });
  // A: 2 orders of P (60 + 90 = 150), last 2026-03-01, email + phone, a cart.
  await s.order({ email: 'a@example.com', phone: '+359880000001' }, buy(2, '2026-01-01T00:00:00Z'));
  await s.order({ email: 'a@example.com', phone: '+359880000001' }, buy(3, '2026-03-01T00:00:00Z'));
  // B: 1 order of P from the page (30), last 2026-03-15, phone only.
  await s.order({ phone: '+359880000002' }, { ...buy(1, '2026-03-15T00:00:00Z'), page_id: page.id });
  // C: 3 legacy orders (3 x 40 = 120), last 2026-02-01, email only, a cart.
  for (const d of ['2025-12-01', '2026-01-15', '2026-02-01']) await s.order({ email: 'c@example.com' }, { ...price(40), created_at: d });
  // D: 1 order of P (150), last 2025-06-01, email + phone.
  await s.order({ email: 'd@example.com', phone: '+359880000004' }, buy(5, '2025-06-01T00:00:00Z'));
  const cart = (body: Record<string, string>) => s.op.call('POST', `/accounts/${s.accountId}/abandoned-carts`, body);
  await cart({ email: 'a@example.com' });
  await cart({ email: 'c@example.com' });
  const p = await prober(s, { A: 'a@example.com', B: '+359880000002', C: 'c@example.com', D: 'd@example.com' });

  await p.expect({ productId: P.id, minTotal: 100 }, ['A', 'D']);
  await p.expect({ productId: P.id, minTotal: 100, lastOrderAfterDate: '2026-01-01' }, ['A']);
  await p.expect({ minOrders: 2, hasAbandonedCart: true }, ['A', 'C']);
  await p.expect({ minOrders: 2, hasAbandonedCart: true, hasPhone: false }, ['C']);
  await p.expect({ maxOrders: 1, hasEmail: true }, ['D']);
  await p.expect({ pageId: page.id, hasEmail: false, maxTotal: 30 }, ['B']);
  await p.expect({ minTotal: 100, maxTotal: 130, lastOrderBeforeDate: '2026-03-01' }, ['C']);
  await p.expect({ lastOrderBeforeDaysAgo: 30, hasPhone: true, hasAbandonedCart: false }, ['B', 'D']);
  await p.expect({ minTotal: 100, maxOrders: 1, hasAbandonedCart: true }, []);
  await p.expect(
    {
      minTotal: 1,
      maxTotal: 1000,
      minOrders: 1,
      maxOrders: 10,
      lastOrderBeforeDaysAgo: 0,
      lastOrderAfterDate: '2020-01-01',
      lastOrderBeforeDate: '2030-01-01',
      productId: P.id,
      hasEmail: true,
      hasPhone: true,
      hasAbandonedCart: true,
    },
    ['A'],
  );
  const seg = await saved(s, { minOrders: 2, hasAbandonedCart: true, hasPhone: false }, 1);
  assert.equal(seg.customer_count, 1);
});

test('create: without filters a membership segment ({inSegment: own id}); with filters a computed one; 201 and the GAPS view', async () => {
  const s = await shop(svc.url);
  await s.order({ email: 'a@example.com' }, price(10));
  const res = await s.api('POST', '/api/v1/segments', { body: { name: 'Newsletter' }, expect: 201 });
  assertResponseMatches(doc, 'POST', '/api/v1/segments', res);
  assert.deepEqual(Object.keys(res.body), ['data']);
  const membership = res.body.data;
  assertSegmentView(membership);
  assert.equal(membership.name, 'Newsletter');
  assert.deepEqual(membership.filters, { inSegment: membership.id });
  assert.equal(membership.kind, 'membership');
  assert.equal(membership.customer_count, 0);
  assert.equal(membership.created_at, membership.updated_at);

  const computed = await s.createSegment({ name: 'Everyone', filters: { minOrders: 1 } });
  assert.equal(computed.kind, 'computed');
  assert.deepEqual(computed.filters, { minOrders: 1 });
  assert.equal(computed.customer_count, 1);

  const list = await s.api('GET', '/api/v1/segments', { expect: 200 });
  assertResponseMatches(doc, 'GET', '/api/v1/segments', list);
  assert.deepEqual(list.body.data.map((x: any) => x.id).sort(), [membership.id, computed.id].sort());
});

test('PATCH: rename keeps filters; filters {} turns a segment into a membership one; other filters make it computed', async () => {
  const s = await shop(svc.url);
  await s.order({ email: 'a@example.com' }, price(10));
  await s.order({ email: 'b@example.com' }, price(500));
  const seg = await s.createSegment({ name: 'Big', filters: { minTotal: 100 } });
  assert.equal(seg.customer_count, 1);

  const renamed = await s.api('PATCH', `/api/v1/segments/${seg.id}`, { body: { name: 'Biggest' }, expect: 200 });
  assertResponseMatches(doc, 'PATCH', '/api/v1/segments/{id}', renamed);
  assertSegmentView(renamed.body.data);
  assert.equal(renamed.body.data.name, 'Biggest');
  assert.deepEqual(renamed.body.data.filters, { minTotal: 100 });
  assert.equal(renamed.body.data.customer_count, 1);
  assert.ok(renamed.body.data.updated_at >= seg.updated_at);
  assert.equal(renamed.body.data.created_at, seg.created_at);

  const refiltered = (await s.api('PATCH', `/api/v1/segments/${seg.id}`, { body: { filters: { maxTotal: 100 } }, expect: 200 })).body.data;
  assert.deepEqual(refiltered.filters, { maxTotal: 100 }, 'filters are replaced, not merged');
  assert.equal(refiltered.name, 'Biggest');
  assert.equal(refiltered.customer_count, 1);

  const emptied = (await s.api('PATCH', `/api/v1/segments/${seg.id}`, { body: { filters: {} }, expect: 200 })).body.data;
  assert.deepEqual(emptied.filters, { inSegment: seg.id });
  assert.equal(emptied.kind, 'membership');
  assert.equal(emptied.customer_count, 0);
  const added = await s.addMembers(seg.id, [{ email: 'a@example.com' }]);
  assert.equal(added.total, 1);

  const back = (await s.api('PATCH', `/api/v1/segments/${seg.id}`, { body: { name: 'Both', filters: { minOrders: 1 } }, expect: 200 })).body.data;
  assert.equal(back.kind, 'computed');
  assert.equal(back.name, 'Both');
  assert.equal(back.customer_count, 2);

  // {inSegment: own id} given explicitly is the membership form too.
  const explicit = (await s.api('PATCH', `/api/v1/segments/${seg.id}`, { body: { filters: { inSegment: seg.id } }, expect: 200 })).body.data;
  assert.equal(explicit.kind, 'membership');

  assertError(await s.api('PATCH', `/api/v1/segments/${UNKNOWN_UUID}`, { body: { name: 'x' } }), 404, 'not_found');
  assertError(await s.api('PATCH', '/api/v1/segments/not-a-uuid', { body: { name: 'x' } }), 400, 'validation_failed');
  const unknown = assertError(await s.api('PATCH', `/api/v1/segments/${seg.id}`, { body: { name: 'x', colour: 'red' } }), 400, 'validation_failed');
  assert.ok(Array.isArray(unknown.details?.allowed), 'details.allowed');
});

test('filter keys: unknown keys give 400 with details.allowed; every key has a strict value type', async () => {
  const s = await shop(svc.url);
  const page = await s.op.createPage(s.accountId, []);
  const product = await s.op.createProduct(s.accountId, { name: 'Any', price: 1 });
  const unknown = assertError(await s.api('POST', '/api/v1/segments', { body: { name: 'x', filters: { minSpent: 5 } } }), 400, 'validation_failed');
  assert.deepEqual([...(unknown.details?.allowed ?? [])].sort(), [...FILTER_KEYS].sort(), 'details.allowed lists the SPEC filter keys');
  const bad: Record<string, unknown[]> = {
    minTotal: ['100', null, true, {}],
    maxTotal: ['5', null, false, []],
    minOrders: [1.5, -1, '2', null, true],
    maxOrders: [0.5, -3, '1', null],
    lastOrderBeforeDaysAgo: [-1, 2.5, '30', null, false],
    lastOrderAfterDate: ['2026/01/05', '2026-01-05 00:00:00', '05-01-2026', '2026-02-30', '2026-01-05T25:00:00Z', 'yesterday', 20260105, null, ''],
    lastOrderBeforeDate: ['2026-1-5', '2026-01-05T00:00', 'Mon, 05 Jan 2026', 1767571200000, null],
    productId: ['not-a-uuid', 42, null, ''],
    pageId: ['123', null, {}],
    inSegment: ['abc', 7, null],
    hasEmail: ['true', 1, 0, null, 'yes'],
    hasPhone: ['false', 0, null],
    hasAbandonedCart: ['true', 1, null, []],
  };
  assert.deepEqual(Object.keys(bad).sort(), [...FILTER_KEYS].sort());
  for (const [key, values] of Object.entries(bad)) {
    for (const value of values) {
      const res = await s.api('POST', '/api/v1/segments', { body: { name: 'x', filters: { [key]: value } } });
      assertError(res, 400, 'validation_failed', `${key}: ${JSON.stringify(value)}`);
    }
  }
  for (const filters of [null, [], 'minTotal', 5]) {
    assertError(
      await s.api('POST', '/api/v1/segments', { body: { name: 'x', filters } }),
      400,
      'validation_failed',
      `filters ${JSON.stringify(filters)}`,
    );
  }
  // PATCH validates the same way.
  const seg = await s.createSegment({ name: 'ok' });
  assertError(await s.api('PATCH', `/api/v1/segments/${seg.id}`, { body: { filters: { hasEmail: 'true' } } }), 400, 'validation_failed');
  assertError(await s.api('PATCH', `/api/v1/segments/${seg.id}`, { body: { filters: { nope: 1 } } }), 400, 'validation_failed');
  // Accepted values of every type.
  const good = {
    minTotal: 10.5,
    maxTotal: 1000,
    minOrders: 0,
    maxOrders: 3,
    lastOrderBeforeDaysAgo: 0,
    lastOrderAfterDate: '2026-01-05',
    lastOrderBeforeDate: '2026-01-05T10:00:00.123+02:00',
    productId: product.id,
    pageId: page.id,
    inSegment: seg.id,
    hasEmail: false,
    hasPhone: true,
    hasAbandonedCart: false,
  };
  const created = await s.createSegment({ name: 'all keys', filters: good });
  assert.deepEqual(created.filters, good);
  assert.equal(created.customer_count, 0);
  // Names: required, a string.
  assertError(await s.api('POST', '/api/v1/segments', { body: { filters: { minTotal: 1 } } }), 400, 'validation_failed', 'no name');
  assertError(await s.api('POST', '/api/v1/segments', { body: { name: 5 } }), 400, 'validation_failed', 'name not a string');
  const extra = assertError(
    await s.api('POST', '/api/v1/segments', { body: { name: 'x', kind: 'computed' } }),
    400,
    'validation_failed',
    'unknown body field',
  );
  assert.ok(Array.isArray(extra.details?.allowed));
  assertError(await s.api('GET', '/api/v1/segments?limit=5'), 400, 'validation_failed', 'unknown query parameter');
});

test('DELETE removes the segment and its memberships; a second delete is 404', async () => {
  const s = await shop(svc.url);
  await s.order({ email: 'a@example.com' });
  const seg = await s.createSegment({ name: 'To go' });
  await s.addMembers(seg.id, [{ email: 'a@example.com' }, { email: 'b@example.com' }, { phone: '+359880000003' }]);
  const keep = await s.createSegment({ name: 'To keep' });
  await s.addMembers(keep.id, [{ email: 'a@example.com' }]);

  const res = await s.api('DELETE', `/api/v1/segments/${seg.id}`, { expect: 200 });
  assertResponseMatches(doc, 'DELETE', '/api/v1/segments/{id}', res);
  assert.deepEqual(res.body, { data: { id: seg.id, deleted: true, members_removed: 3 } });
  assert.deepEqual(
    (await s.segments()).map((x) => x.id),
    [keep.id],
  );
  assert.equal((await s.segment(keep.id)).customer_count, 1, 'other segments keep their members');
  const { rows } = await svc.service.db.query('SELECT count(*)::int AS n FROM segment_members WHERE segment_id = $1', [seg.id]);
  assert.equal(rows[0].n, 0, 'membership rows are removed with the segment');
  assertError(await s.api('DELETE', `/api/v1/segments/${seg.id}`), 404, 'not_found');
  assertError(await s.api('POST', `/api/v1/segments/${seg.id}/members`, { body: { customers: [{ email: 'x@example.com' }] } }), 404, 'not_found');

  const computed = await s.createSegment({ name: 'computed', filters: { minOrders: 1 } });
  const gone = await s.api('DELETE', `/api/v1/segments/${computed.id}`, { expect: 200 });
  assert.deepEqual(gone.body, { data: { id: computed.id, deleted: true, members_removed: 0 } });
});

test('deleting a segment that another segment filters on (inSegment) leaves the segment list working', async () => {
  const s = await shop(svc.url);
  await s.order({ email: 'a@example.com' });
  const list = await s.createSegment({ name: 'base list' });
  await s.addMembers(list.id, [{ email: 'a@example.com' }]);
  const dependant = await s.createSegment({ name: 'over the list', filters: { inSegment: list.id } });
  assert.equal(dependant.customer_count, 1);
  const del = await s.api('DELETE', `/api/v1/segments/${list.id}`);
  if (del.status === 409) {
    // Refusing the delete is a consistent answer too.
    assertError(del, 409, 'conflict');
  } else {
    assert.equal(del.status, 200, del.text);
  }
  const after = await s.api('GET', '/api/v1/segments');
  assert.equal(after.status, 200, `GET /api/v1/segments after the delete: ${after.status} ${after.text}`);
  if (del.status === 200) {
    const left = after.body.data.find((x: any) => x.id === dependant.id);
    assert.ok(left, 'the dependant segment is still listed');
    assert.equal(left.customer_count, 0, 'nobody is in a deleted segment');
  }
});

test('dry runs: create previews kind and count, PATCH and DELETE preview without writing', async () => {
  const s = await shop(svc.url);
  await s.order({ email: 'a@example.com' }, price(300));
  await s.order({ email: 'b@example.com' }, price(30));
  const preview = await s.api('POST', '/api/v1/segments', { body: { name: 'Big', filters: { minTotal: 100 } }, headers: DRY, expect: 200 });
  assertResponseMatches(doc, 'POST', '/api/v1/segments', preview);
  assert.equal(preview.body.dry_run, true);
  assert.equal(preview.body.data.name, 'Big');
  assert.deepEqual(preview.body.data.filters, { minTotal: 100 });
  assert.equal(preview.body.data.kind, 'computed');
  assert.equal(preview.body.data.customer_count, 1);
  const membershipPreview = await s.api('POST', '/api/v1/segments', { body: { name: 'List' }, headers: DRY, expect: 200 });
  assert.equal(membershipPreview.body.data.kind, 'membership');
  assert.equal(membershipPreview.body.data.customer_count, 0);
  assert.deepEqual(await s.segments(), [], 'dry-run creates write nothing');
  // Validation still applies in a dry run.
  assertError(await s.api('POST', '/api/v1/segments', { body: { name: 'x', filters: { bogus: 1 } }, headers: DRY }), 400, 'validation_failed');

  const seg = await s.createSegment({ name: 'List' });
  await s.addMembers(seg.id, [{ email: 'a@example.com' }, { email: 'z@example.com' }]);
  const patch = await s.api('PATCH', `/api/v1/segments/${seg.id}`, {
    body: { name: 'Renamed', filters: { minTotal: 100 } },
    headers: DRY,
    expect: 200,
  });
  assertResponseMatches(doc, 'PATCH', '/api/v1/segments/{id}', patch);
  assert.equal(patch.body.dry_run, true);
  assert.equal(patch.body.data.name, 'List', 'dry-run PATCH shows the current segment');
  assert.equal(patch.body.data.kind, 'membership');
  const del = await s.api('DELETE', `/api/v1/segments/${seg.id}`, { headers: DRY, expect: 200 });
  assertResponseMatches(doc, 'DELETE', '/api/v1/segments/{id}', del);
  assert.equal(del.body.dry_run, true);
  assertSegmentView(del.body.data);
  assert.equal(del.body.data.id, seg.id);
  assert.equal(del.body.members_removed, 2, 'GAPS: segment delete dry run {dry_run, data: segment, members_removed}');
  const still = await s.segment(seg.id);
  assert.equal(still.name, 'List');
  assert.equal(still.kind, 'membership');
  assert.equal(still.customer_count, 2);
  assertError(await s.api('DELETE', `/api/v1/segments/${UNKNOWN_UUID}`, { headers: DRY }), 404, 'not_found');
});

test('segments of another account: invisible, 404 on every write', async () => {
  const a = await shop(svc.url);
  const b = await shop(svc.url);
  const seg = await a.createSegment({ name: 'A only' });
  assert.deepEqual(await b.segments(), []);
  assertError(await b.api('PATCH', `/api/v1/segments/${seg.id}`, { body: { name: 'hijack' } }), 404, 'not_found');
  assertError(await b.api('DELETE', `/api/v1/segments/${seg.id}`), 404, 'not_found');
  assertError(await b.api('POST', `/api/v1/segments/${seg.id}/members`, { body: { customers: [{ email: 'x@example.com' }] } }), 404, 'not_found');
  assert.equal((await a.segment(seg.id)).name, 'A only');
});

test('scopes: reading segments needs customers:read, writing needs customers:write', async () => {
  const reader = await shop(svc.url, ['customers:read']);
  await reader.api('GET', '/api/v1/segments', { expect: 200 });
  assertScopeMissing(await reader.api('POST', '/api/v1/segments', { body: { name: 'x' } }), 'customers:write');
  const writer = await shop(svc.url, ['customers:write']);
  assertScopeMissing(await writer.api('GET', '/api/v1/segments'), 'customers:read');
  await writer.api('POST', '/api/v1/segments', { body: { name: 'x' }, expect: 201 });
});
