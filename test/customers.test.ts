// SPEC "Customer, segment, note" and Endpoints > "Customers and segments"
// (GET /api/v1/customers), Limits (offset paging); GAPS "Customers, segments,
// notes" (fields, list envelope) and General (limit/offset validation,
// unknown query parameters). Customers are aggregates of orders: key =
// lower-cased email, else phone; cancelled, archived and refunded orders and
// imported contacts do not count; newest last order first.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService, http, type TestService } from './helpers/harness.ts';
import { assertError, assertScopeMissing, assertUnauthorized, qs } from './helpers/contract.ts';
import { assertResponseMatches, type OpenApiDoc } from './helpers/openapi-validator.ts';
import { rpc, toolCall, callTool } from './helpers/mcp.ts';
import { shop, assertCustomerView, CUSTOMER_SCOPES } from './helpers/customers.ts';

let svc: TestService;
let doc: OpenApiDoc;
before(async () => {
  svc = await startTestService();
  doc = (await http(svc.url, 'GET', '/api/v1/openapi.json')).body;
});
after(async () => {
  await svc.close();
});

const byKey = (list: any[]) => new Map(list.map((c) => [c.key, c]));

test('a customer is the aggregate of its orders: key, counts, total, first and last order, exactly the GAPS fields', async () => {
  const s = await shop(svc.url);
  await s.order(
    { name: 'Ana Old', email: 'Ana@Example.com', phone: '+359888000111' },
    { created_at: '2026-01-10T08:00:00.000Z', legacy: { product_name: 'Mug', quantity: 2, unit_price: 12.5 } },
  );
  await s.order(
    { name: 'Ana New', email: 'ana@example.COM', phone: '+359888000222' },
    { created_at: '2026-03-01T09:30:00.000Z', legacy: { product_name: 'Lamp', quantity: 1, unit_price: 40.25 } },
  );
  // Backdated after the fact: created later, but the oldest order; it must not take over name/email/phone.
  await s.order(
    { name: 'Ana Oldest', email: 'ANA@EXAMPLE.COM', phone: null },
    { created_at: '2025-12-24T18:00:00.000Z', legacy: { product_name: 'Mug', quantity: 1, unit_price: 5 }, delivery_price: 4.99, discount_amount: 1 },
  );
  // Phone only: the key is the phone.
  await s.order({ name: 'Boris', email: null, phone: '+359877111222' }, { created_at: '2026-02-01T10:00:00.000Z' });
  // A blank email does not make a key: the phone does.
  await s.order({ name: 'Boris', email: '   ', phone: '+359877111222' }, { created_at: '2026-02-02T10:00:00.000Z' });
  // Neither email nor phone: no customer.
  await s.order({ name: 'Nobody', email: null, phone: null }, { created_at: '2026-02-03T10:00:00.000Z' });

  const res = await s.api('GET', '/api/v1/customers', { expect: 200 });
  assertResponseMatches(doc, 'GET', '/api/v1/customers', res);
  assert.deepEqual(Object.keys(res.body).sort(), ['data', 'has_more', 'limit', 'offset', 'total'], 'GAPS list envelope');
  assert.equal(res.body.total, 2);
  assert.equal(res.body.limit, 50);
  assert.equal(res.body.offset, 0);
  assert.equal(res.body.has_more, false);
  for (const c of res.body.data) assertCustomerView(c, c.key);
  const customers = byKey(res.body.data);
  assert.deepEqual([...customers.keys()].sort(), ['+359877111222', 'ana@example.com']);

  const ana = customers.get('ana@example.com');
  assert.equal(ana.orders_count, 3);
  assert.equal(Math.round(ana.total_spent * 100), 2500 + 4025 + 899, 'total_spent: 2 x 12.50 + 40.25 + (5 + 4.99 delivery - 1 discount)');
  assert.equal(ana.first_order_at, '2025-12-24T18:00:00.000Z');
  assert.equal(ana.last_order_at, '2026-03-01T09:30:00.000Z');
  assert.equal(ana.name, 'Ana New', 'GAPS: name from the newest order');
  assert.equal(ana.phone, '+359888000222', 'GAPS: phone from the newest order');
  assert.equal(ana.email?.toLowerCase(), 'ana@example.com', 'GAPS: email from the newest order');

  const boris = customers.get('+359877111222');
  assert.equal(boris.orders_count, 2);
  assert.equal(boris.total_spent, 20);
  assert.equal(boris.email, null);
  assert.equal(boris.phone, '+359877111222');
  assert.equal(boris.first_order_at, '2026-02-01T10:00:00.000Z');
  assert.equal(boris.last_order_at, '2026-02-02T10:00:00.000Z');
});

test('cancelled, archived and refunded orders do not count; returned and every other status do; a status change moves the numbers', async () => {
  const s = await shop(svc.url);
  const c = { name: 'Cvetan', email: 'cvetan@example.com', phone: '+359800000001' };
  const counted: Record<string, number> = { new: 1, confirmed: 2, processing: 4, shipped: 8, delivered: 16, returned: 32 };
  const excluded: Record<string, number> = { cancelled: 100, archived: 200, refunded: 400 };
  const ids: Record<string, string> = {};
  for (const [status, price] of Object.entries({ ...counted, ...excluded })) {
    const o = await s.order(c, {
      legacy: { product_name: status, quantity: 1, unit_price: price },
      created_at: `2026-0${1 + (Object.keys(ids).length % 9)}-01T00:00:00.000Z`,
    });
    ids[status] = o.id;
    if (status !== 'new') await s.op.setStatus(o.id, status);
  }
  let [cust] = (await s.customers()).data;
  assert.equal(cust.key, 'cvetan@example.com');
  assert.equal(cust.orders_count, 6);
  assert.equal(cust.total_spent, 63);
  assert.equal(cust.first_order_at, '2026-01-01T00:00:00.000Z');
  assert.equal(cust.last_order_at, '2026-06-01T00:00:00.000Z', 'the newest counted order, not the newer excluded ones');

  // Reinstating a cancelled order counts it again; cancelling a counted one (public PATCH) removes it.
  await s.op.setStatus(ids.cancelled, 'confirmed');
  await s.api('PATCH', `/api/v1/orders/${ids.delivered}`, { body: { status: 'cancelled' }, expect: 200 });
  [cust] = (await s.customers()).data;
  assert.equal(cust.orders_count, 6);
  assert.equal(cust.total_spent, 63 - 16 + 100);
  assert.equal(cust.last_order_at, '2026-07-01T00:00:00.000Z');

  // A dry-run PATCH changes nothing.
  await s.api('PATCH', `/api/v1/orders/${ids.new}`, { body: { status: 'cancelled' }, headers: { 'X-Merx-Dry-Run': '1' }, expect: 200 });
  assert.equal((await s.customers()).data[0].orders_count, 6);

  // Every order excluded: the customer disappears.
  for (const id of Object.values(ids)) await s.op.setStatus(id, 'archived');
  const empty = await s.customers();
  assert.deepEqual(empty.data, []);
  assert.equal(empty.total, 0);
  assert.equal(empty.has_more, false);
});

test('a customer whose only orders are excluded is not listed; imported contacts never are, nor do they change a customer', async () => {
  const s = await shop(svc.url);
  await s.orderIn('cancelled', { name: 'Dara', email: 'dara@example.com' });
  await s.orderIn('refunded', { name: 'Dara', email: 'dara@example.com' });
  await s.orderIn('archived', { name: 'Emo', phone: '+359811111111' });
  await s.order({ name: 'Filip', email: 'filip@example.com', phone: '+359822222222' }, { created_at: '2026-04-01T00:00:00.000Z' });
  await s.op.call('POST', `/accounts/${s.accountId}/contacts`, { name: 'Imported Ivo', email: 'ivo@example.com', phone: '+359833333333' });
  await s.op.call('POST', `/accounts/${s.accountId}/contacts`, { name: 'Imported Filip', email: 'FILIP@example.com', phone: '+359844444444' });
  await s.op.call('POST', `/accounts/${s.accountId}/contacts`, { phone: '+359811111111' });

  const list = await s.customers();
  assert.equal(list.total, 1);
  assert.deepEqual(
    list.data.map((c) => c.key),
    ['filip@example.com'],
  );
  const filip = list.data[0];
  assert.equal(filip.name, 'Filip');
  assert.equal(filip.phone, '+359822222222');
  assert.equal(filip.orders_count, 1);
  assert.equal((await s.customers({ q: 'ivo' })).total, 0);
  assert.equal((await s.customers({ q: 'dara' })).total, 0);
});

test('newest last order first; ties are stable across pages', async () => {
  const s = await shop(svc.url);
  await s.order({ email: 'old@example.com' }, { created_at: '2025-05-01T00:00:00.000Z' });
  await s.order({ email: 'recent@example.com' }, { created_at: '2026-05-01T00:00:00.000Z' });
  await s.order({ email: 'middle@example.com' }, { created_at: '2025-11-01T00:00:00.000Z' });
  // "old" orders again, most recently of all; "recent" gets an older order that must not move it.
  await s.order({ email: 'old@example.com' }, { created_at: '2026-06-01T00:00:00.000Z' });
  await s.order({ email: 'recent@example.com' }, { created_at: '2024-01-01T00:00:00.000Z' });
  // A newer order that is cancelled does not move "middle" up.
  await s.orderIn('cancelled', { email: 'middle@example.com' }, { created_at: '2026-12-01T00:00:00.000Z' });
  for (let i = 0; i < 5; i++) await s.order({ phone: `+35970000000${i}` }, { created_at: '2025-01-01T00:00:00.000Z' });

  const all = await s.allCustomers();
  assert.deepEqual(
    all.slice(0, 3).map((c) => c.key),
    ['old@example.com', 'recent@example.com', 'middle@example.com'],
  );
  const tied = all.slice(3).map((c) => c.key);
  assert.deepEqual([...tied].sort(), ['+359700000000', '+359700000001', '+359700000002', '+359700000003', '+359700000004']);
  // Paging one at a time through the ties gives the same order, no duplicates, no gaps.
  const oneByOne: string[] = [];
  for (let offset = 0; offset < 8; offset++) oneByOne.push(...(await s.customers({ limit: 1, offset })).data.map((c) => c.key));
  assert.deepEqual(
    oneByOne,
    all.map((c) => c.key),
  );
});

test('offset paging: limit (default 50, max 200), offset, total and has_more', async () => {
  const s = await shop(svc.url);
  for (let i = 0; i < 53; i++) {
    await s.order(
      { name: `Buyer ${i}`, email: `buyer${String(i).padStart(2, '0')}@example.com` },
      { created_at: new Date(Date.UTC(2026, 0, 1) + i * 60_000).toISOString() },
    );
  }
  const first = await s.customers();
  assert.equal(first.data.length, 50, 'default limit 50');
  assert.equal(first.total, 53);
  assert.equal(first.limit, 50);
  assert.equal(first.offset, 0);
  assert.equal(first.has_more, true);
  assert.equal(first.data[0].key, 'buyer52@example.com', 'newest first');

  const second = await s.customers({ offset: 50 });
  assert.deepEqual(
    second.data.map((c) => c.key),
    ['buyer02@example.com', 'buyer01@example.com', 'buyer00@example.com'],
  );
  assert.equal(second.has_more, false);
  assert.equal(second.total, 53);
  assert.equal(second.offset, 50);

  const mid = await s.customers({ limit: 10, offset: 43 });
  assert.equal(mid.data.length, 10);
  assert.equal(mid.has_more, false, 'offset + rows = total');
  const edge = await s.customers({ limit: 10, offset: 42 });
  assert.equal(edge.has_more, true);

  const big = await s.customers({ limit: 200 });
  assert.equal(big.data.length, 53);
  assert.equal(big.limit, 200);
  assert.equal(big.has_more, false);

  // Deep in a search (keys read first, then the page's rows): the rows the same search shows read directly.
  const direct = await s.customers({ q: 'buyer0', limit: 10 });
  assert.deepEqual(
    direct.data.map((c) => c.key),
    Array.from({ length: 10 }, (_, i) => `buyer0${9 - i}@example.com`),
  );
  const searched = await s.customers({ q: 'buyer0', limit: 2, offset: 8 });
  assert.deepEqual(searched.data, direct.data.slice(8), 'the same rows and views as the direct read');
  assert.equal(searched.total, 10);
  assert.equal(searched.has_more, false);

  const beyond = await s.customers({ offset: 1000 });
  assert.deepEqual(beyond.data, []);
  assert.equal(beyond.total, 53);
  assert.equal(beyond.has_more, false);

  const min = await s.customers({ limit: 1 });
  assert.equal(min.data.length, 1);
  assert.equal(min.has_more, true);
});

test('invalid limit, offset, q and unknown query parameters are 400 validation_failed (no clamping)', async () => {
  const s = await shop(svc.url);
  await s.order({ email: 'a@example.com' });
  const bad: Array<Record<string, string>> = [
    { limit: '0' },
    { limit: '201' },
    { limit: '-1' },
    { limit: 'ten' },
    { limit: '1.5' },
    { limit: '' },
    { offset: '-1' },
    { offset: 'x' },
    { offset: '2.5' },
    { cursor: 'abc' },
    { status: 'new' },
    { sort: 'name' },
  ];
  for (const params of bad) {
    const res = await s.api('GET', `/api/v1/customers${qs(params)}`);
    assertError(res, 400, 'validation_failed', JSON.stringify(params));
    assertResponseMatches(doc, 'GET', '/api/v1/customers', res);
  }
  for (const params of [{ limit: '200' }, { offset: '0' }, { q: 'x'.repeat(100) }]) {
    await s.api('GET', `/api/v1/customers${qs(params)}`, { expect: 200 });
  }
});

test('q matches name, email and phone: case-insensitive substring, % and _ are literal, total counts the matches', async () => {
  const s = await shop(svc.url);
  await s.order({ name: 'Galya Petrova', email: 'galya@mail.example', phone: '+359881234567' });
  await s.order({ name: 'Ivan Petrov', email: 'ivan_p@shop.example', phone: '+359887654321' });
  await s.order({ name: 'Kalina 100% Real', email: null, phone: '+359899990000' });
  await s.order({ name: 'Todor', email: 'todor@mail.example', phone: null });
  const keys = async (q: string) => (await s.allCustomers({ q })).map((c) => c.key).sort();

  assert.deepEqual(await keys('PETROV'), ['galya@mail.example', 'ivan_p@shop.example'], 'name, case-insensitive');
  assert.deepEqual(await keys('petrova'), ['galya@mail.example']);
  assert.deepEqual(await keys('mail.EXAMPLE'), ['galya@mail.example', 'todor@mail.example'], 'email');
  assert.deepEqual(await keys('7654'), ['ivan_p@shop.example'], 'phone');
  assert.deepEqual(await keys('+35989999'), ['+359899990000'], 'phone of a phone-keyed customer');
  assert.deepEqual(await keys('%'), ['+359899990000'], '% is a literal character');
  assert.deepEqual(await keys('_'), ['ivan_p@shop.example'], '_ is a literal character');
  assert.deepEqual(await keys('n_p'), ['ivan_p@shop.example']);
  assert.deepEqual(await keys('nobody-matches-this'), []);
  // One or two characters: migration 017's short-substring index finds them, with the same answers.
  assert.deepEqual(await keys('ov'), ['galya@mail.example', 'ivan_p@shop.example']);
  assert.deepEqual(await keys('TO'), ['todor@mail.example']);
  assert.deepEqual(await keys('9'), ['+359899990000', 'galya@mail.example', 'ivan_p@shop.example']);
  assert.deepEqual(await keys('zq'), []);
  assert.equal((await s.customers({ q: 'l', limit: 1 })).total, 4, 'a one-character q counts its matches');
  const page = await s.customers({ q: 'example', limit: 1, offset: 1 });
  assert.equal(page.total, 3);
  assert.equal(page.data.length, 1);
  assert.equal(page.has_more, true);
  assert.equal(page.offset, 1);
});

test('customers of another account are never listed', async () => {
  const a = await shop(svc.url);
  const b = await shop(svc.url);
  await a.order({ name: 'Only In A', email: 'shared@example.com' });
  await b.order({ name: 'Only In B', email: 'b-only@example.com', phone: '+359855555555' });
  assert.deepEqual(
    (await a.allCustomers()).map((c) => c.key),
    ['shared@example.com'],
  );
  assert.deepEqual(
    (await b.allCustomers()).map((c) => c.key),
    ['b-only@example.com'],
  );
  assert.equal((await b.customers({ q: 'shared' })).total, 0);
  // The same email in B is B's own customer, with B's numbers only.
  await b.order({ name: 'Shared In B', email: 'SHARED@example.com' }, { legacy: { product_name: 'x', quantity: 1, unit_price: 3 } });
  const shared = (await b.allCustomers()).find((c) => c.key === 'shared@example.com');
  assert.equal(shared.orders_count, 1);
  assert.equal(shared.total_spent, 3);
  assert.equal((await a.allCustomers())[0].orders_count, 1);
});

test('customers:read is required; orders scopes are not enough; no key is 401', async () => {
  const s = await shop(svc.url, ['orders:read', 'orders:write', 'customers:write']);
  assertScopeMissing(await s.api('GET', '/api/v1/customers'), 'customers:read');
  assertUnauthorized(await http(svc.url, 'GET', '/api/v1/customers'));
  const r = await shop(svc.url, ['customers:read']);
  await r.api('GET', '/api/v1/customers', { expect: 200 });
});

test('MCP list_customers answers what REST answers', async () => {
  const s = await shop(svc.url);
  await s.order({ name: 'Mila', email: 'mila@example.com', phone: '+359866666666' }, { created_at: '2026-02-01T00:00:00.000Z' });
  await s.order({ name: 'Nina', email: 'nina@example.com' }, { created_at: '2026-03-01T00:00:00.000Z' });
  const rest = await s.customers({ limit: 1, offset: 1, q: 'example' });
  const tool = await callTool(svc.url, s.key, 'list_customers', { limit: 1, offset: 1, q: 'example' });
  assert.equal(tool.isError, false);
  assert.deepEqual(tool.structuredContent, rest);
  assert.equal(rest.data[0].key, 'mila@example.com');
  // A wrong argument type is a protocol error (GAPS MCP details).
  const bad = await rpc(svc.url, s.key, toolCall('list_customers', { limit: 'ten' }));
  assert.equal(bad.body.error?.code, -32602, bad.text);
});

async function racers(s: Awaited<ReturnType<typeof shop>>, status?: string): Promise<Array<[string, string]>> {
  const pairs: Array<[string, string]> = [];
  for (let i = 0; i < 12; i++) {
    const customer = { name: `Racer ${i}`, email: `racer${i}@example.com` };
    const pair: [string, string] = [(await s.order(customer)).id, (await s.order(customer)).id];
    if (status) for (const id of pair) await s.op.setStatus(id, status);
    pairs.push(pair);
  }
  await s.order({ name: 'Control', email: 'control@example.com' });
  return pairs;
}

// On PostgreSQL two transactions can refresh the same customer at once (the
// order rows they lock differ); the aggregate must still end up exact.
test('aggregates stay exact when both orders of a customer are cancelled at the same time', async () => {
  const s = await shop(svc.url);
  const pairs = await racers(s);
  await Promise.all(pairs.flat().map((id) => s.op.setStatus(id, 'cancelled')));
  const left = (await s.allCustomers()).map((c) => c.key);
  assert.deepEqual(left, ['control@example.com'], 'customers still listed although every order of theirs is cancelled');
  assert.equal((await s.customers()).total, 1, 'the kept total follows the concurrent removals');
});

test('aggregates stay exact when both cancelled orders of a customer are reinstated at the same time', async () => {
  const s = await shop(svc.url);
  const pairs = await racers(s, 'cancelled');
  assert.deepEqual(
    (await s.allCustomers()).map((c) => c.key),
    ['control@example.com'],
  );
  await Promise.all(pairs.flat().map((id) => s.op.setStatus(id, 'confirmed')));
  const all = await s.allCustomers();
  const wrong = all.filter((c) => c.key !== 'control@example.com' && c.orders_count !== 2).map((c) => `${c.key}: ${c.orders_count}`);
  assert.equal(all.length, 13, 'every reinstated customer is listed');
  assert.equal((await s.customers()).total, 13, 'the kept total follows the concurrent reinstatements');
  assert.deepEqual(wrong, [], 'orders_count after concurrent reinstatements (expected 2 each)');
});

test('the list is served on a scoped key only for its own account, and answers match the OpenAPI document', async () => {
  const s = await shop(svc.url, CUSTOMER_SCOPES);
  await s.order({ email: 'doc@example.com', name: null, phone: null });
  const res = await s.api('GET', '/api/v1/customers?limit=5&offset=0&q=doc', { expect: 200 });
  assertResponseMatches(doc, 'GET', '/api/v1/customers', res);
  assert.equal(res.body.data[0].name, null);
  assert.equal(res.body.data[0].phone, null);
  assert.equal(res.headers.get('x-ratelimit-limit'), '300');
});
