// EXTENSIONS 8, exports: GET /api/v1/exports/{resource} for the five
// resources, JSONL byte for byte the REST reads, CSV (RFC 4180), the list's
// filters and order, starting_after, gzip, one snapshot handed over to the
// events feed, a cut stream never looking complete, and two streams per key.
import crypto from 'node:crypto';
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import zlib from 'node:zlib';
import { startTestService, http, freshTenant, ADMIN_TOKEN, type HttpResult, type TestService } from './helpers/harness.ts';
import { assertError } from './helpers/contract.ts';
import { checkoutWith, ship, shipTenant } from './helpers/shipments.ts';
import { dataText, exportOf, exportPath, linesOf, parseCsv } from './helpers/exports.ts';
import { assertResponseMatches } from './helpers/openapi-validator.ts';

let svc: TestService;
before(async () => {
  svc = await startTestService();
});
after(async () => {
  await svc?.close();
});

const SCOPES = [
  'orders:read',
  'orders:write',
  'shipments:read',
  'shipments:write',
  'products:read',
  'products:write',
  'customers:read',
  'inventory:read',
  'inventory:write',
];

/** Every item of a list route, following its pages (cursor or offset). */
async function listAll(key: string, path: string): Promise<string[]> {
  const items: string[] = [];
  let cursor: string | null = null;
  let offset = 0;
  for (;;) {
    const sep = path.includes('?') ? '&' : '?';
    const page: HttpResult = await http(
      svc.url,
      'GET',
      `${path}${sep}limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}${path.startsWith('/api/v1/customers') ? `&offset=${offset}` : ''}`,
      { token: key },
    );
    assert.equal(page.status, 200, page.text);
    items.push(...page.body.data.map((d: unknown) => JSON.stringify(d)));
    offset += page.body.data.length;
    if (!page.body.has_more) return items;
    cursor = page.body.next_cursor ?? null;
  }
}

async function tenantWithOrders(n: number) {
  const t = await shipTenant(svc, { scopes: SCOPES });
  const orders = [];
  for (let i = 0; i < n; i++)
    orders.push(
      await checkoutWith(svc, t.accountId, 'courier_a', {
        customer: { name: `Buyer ${i}`, email: `buyer${i}@example.com`, phone: `+35988800${String(i).padStart(4, '0')}` },
      }),
    );
  return { ...t, orders };
}

test('JSONL: each line is byte for byte the data of the single read, in the list order, with the events cursor header', async () => {
  const t = await tenantWithOrders(3);
  await t.op.setStatus(t.orders[1].id, 'confirmed');
  const res = await exportOf(svc.url, t.key, 'orders');
  assert.equal(res.status, 200, res.text);
  assert.equal(res.headers.get('content-type'), 'application/x-ndjson');
  assert.ok(res.headers.get('merx-events-cursor'), 'Merx-Events-Cursor');
  const lines = linesOf(res.text);
  const ids = lines.map((l) => JSON.parse(l).id);
  const listed = (await listAll(t.key, '/api/v1/orders')).map((l) => JSON.parse(l).id);
  assert.deepEqual(ids, listed, 'the list order, every record');
  for (const line of lines) {
    const single = await http(svc.url, 'GET', `/api/v1/orders/${JSON.parse(line).id}`, { token: t.key });
    assert.equal(line, dataText(single.text), 'byte-identical to GET /orders/{id} data');
  }
  // The list's own filters.
  const confirmed = linesOf((await exportOf(svc.url, t.key, 'orders', { status: 'confirmed' })).text);
  assert.deepEqual(
    confirmed.map((l) => JSON.parse(l).id),
    [t.orders[1].id],
  );
  const searched = linesOf((await exportOf(svc.url, t.key, 'orders', { q: 'buyer 2' })).text);
  assert.deepEqual(
    searched.map((l) => JSON.parse(l).id),
    [t.orders[2].id],
  );
  // Every kind of filter value (text, dates, a uuid list, a quote that must stay text) selects what the list selects:
  // on PostgreSQL the JSONL export writes the values into its COPY statement (sql-literals.ts).
  const today = new Date().toISOString().slice(0, 10);
  const filters: Array<Record<string, string>> = [
    { status: 'confirmed', from: today },
    { to: '2000-01-01' },
    { since: new Date(Date.now() - 3_600_000).toISOString() },
    { product_id: crypto.randomUUID() },
    { courier: 'none' },
    { q: "x' OR '1'='1" },
    { q: "buyer 1'; --" },
    { payment: '$1' },
  ];
  for (const filter of filters) {
    const exported = linesOf((await exportOf(svc.url, t.key, 'orders', filter)).text).map((l) => JSON.parse(l).id);
    const listed = (await listAll(t.key, `/api/v1/orders?${new URLSearchParams(filter)}`)).map((l) => JSON.parse(l).id);
    assert.deepEqual(exported, listed, `export and list agree on ${JSON.stringify(filter)}`);
  }
});

test('every resource streams what its list would return, each line its single read (or list item)', async () => {
  const t = await tenantWithOrders(2);
  const product = await t.op.createProduct(t.accountId, { sku: `SKU-${Date.now()}`, stock_quantity: 5 });
  await t.op.createProduct(t.accountId, { sku: `SKU2-${Date.now()}` });
  const shipment = await ship(svc, t.key, { order_id: t.orders[0].id });
  const move = await http(svc.url, 'POST', '/api/v1/inventory/movements', {
    token: t.key,
    body: { product_id: product.id, type: 'delivery', qty: 3 },
  });
  assert.equal(move.status, 201, move.text);

  const shipments = linesOf((await exportOf(svc.url, t.key, 'shipments')).text);
  assert.deepEqual(shipments, [dataText((await http(svc.url, 'GET', `/api/v1/shipments/${shipment.id}`, { token: t.key })).text)]);
  const products = linesOf((await exportOf(svc.url, t.key, 'products')).text);
  assert.deepEqual(
    products.map((l) => JSON.parse(l).id),
    (await listAll(t.key, '/api/v1/products')).map((l) => JSON.parse(l).id),
  );
  for (const line of products)
    assert.equal(line, dataText((await http(svc.url, 'GET', `/api/v1/products/${JSON.parse(line).id}`, { token: t.key })).text));
  // No single read: the list item, in the list's order.
  assert.deepEqual(linesOf((await exportOf(svc.url, t.key, 'customers')).text), await listAll(t.key, '/api/v1/customers'));
  assert.deepEqual(linesOf((await exportOf(svc.url, t.key, 'stock-movements')).text), await listAll(t.key, '/api/v1/inventory/movements'));
  // Shipments' own filters: status, courier, since.
  assert.equal(linesOf((await exportOf(svc.url, t.key, 'shipments', { status: 'cancelled' })).text).length, 0);
  assert.equal(linesOf((await exportOf(svc.url, t.key, 'shipments', { courier: 'courier_a', since: shipment.created_at })).text).length, 1);
  assert.equal(linesOf((await exportOf(svc.url, t.key, 'shipments', { courier: 'courier_b' })).text).length, 0);
  const later = new Date(Date.parse(shipment.created_at) + 1).toISOString();
  assert.equal(linesOf((await exportOf(svc.url, t.key, 'shipments', { since: later })).text).length, 0);
});

test('refusals: paging and unknown parameters, a bad format, scopes, and starting_after that names no record', async () => {
  const t = await tenantWithOrders(1);
  for (const query of [
    { limit: 10 },
    { cursor: 'abc' },
    { offset: 0 },
    { colour: 'red' },
    { format: 'xml' },
    { status: 'nope' },
    { starting_after: 'not-a-uuid' },
  ]) {
    assertError(await exportOf(svc.url, t.key, 'orders', query), 400, 'validation_failed');
  }
  assertError(await exportOf(svc.url, t.key, 'customers', { offset: 5 }), 400, 'validation_failed');
  assertError(await exportOf(svc.url, t.key, 'shipments', { since: 'yesterday' }), 400, 'validation_failed');
  const other = await tenantWithOrders(1);
  const foreign = await exportOf(svc.url, t.key, 'orders', { starting_after: other.orders[0].id });
  assertError(foreign, 400, 'validation_failed');
  assertError(await exportOf(svc.url, t.key, 'customers', { starting_after: 'nobody@example.com' }), 400, 'validation_failed');
  const narrow = await freshTenant(svc.url, { scopes: ['orders:read'] });
  const refused = await exportOf(svc.url, narrow.key, 'stock-movements');
  assertError(refused, 403, 'scope_missing');
  assert.equal(refused.body.error.details?.scope ?? refused.body.error.scope ?? 'inventory:read', 'inventory:read');
  assertError(await exportOf(svc.url, narrow.key, 'customers'), 403, 'scope_missing');
  assert.equal((await http(svc.url, 'GET', '/api/v1/exports/invoices', { token: t.key })).status, 404);
});

test('starting_after resumes after that record, for ids and for customer keys', async () => {
  const t = await tenantWithOrders(4);
  const all = linesOf((await exportOf(svc.url, t.key, 'orders')).text);
  const rest = linesOf((await exportOf(svc.url, t.key, 'orders', { starting_after: JSON.parse(all[1]).id })).text);
  assert.deepEqual(rest, all.slice(2));
  const customers = linesOf((await exportOf(svc.url, t.key, 'customers')).text);
  const afterFirst = linesOf((await exportOf(svc.url, t.key, 'customers', { starting_after: JSON.parse(customers[0]).key })).text);
  assert.deepEqual(afterFirst, customers.slice(1));
  const csvRest = parseCsv((await exportOf(svc.url, t.key, 'orders', { format: 'csv', starting_after: JSON.parse(all[2]).id })).text);
  assert.equal(csvRest.length, 2, 'a header and the last record');
});

test('CSV: RFC 4180 with a header in SPEC order, nested objects flattened, arrays as JSON, null empty; commas, quotes, newlines and non-ASCII', async () => {
  const t = await shipTenant(svc, { scopes: SCOPES });
  const tricky = 'Ана "Ani", Petrova\nline two\r\nthree';
  const order = await checkoutWith(svc, t.accountId, 'courier_a', {
    customer: { name: tricky, email: 'ana@example.com', phone: '+359888000999' },
    notes: 'a,b "c"',
  });
  await ship(svc, t.key, { order_id: order.id });
  const res = await exportOf(svc.url, t.key, 'orders', { format: 'csv' });
  assert.equal(res.status, 200, res.text);
  assert.equal(res.headers.get('content-type'), 'text/csv; charset=utf-8');
  const [header, row, ...more] = parseCsv(res.text);
  assert.equal(more.length, 0);
  const view = JSON.parse(dataText((await http(svc.url, 'GET', `/api/v1/orders/${order.id}`, { token: t.key })).text));
  // SPEC order: the view's keys, nested listed objects expanded in place.
  const expected: string[] = [];
  for (const [k, v] of Object.entries(view)) {
    if (k === 'customer' || k === 'shipping' || k === 'shipment') expected.push(...Object.keys(v as object).map((n) => `${k}.${n}`));
    else expected.push(k);
  }
  assert.deepEqual(header, expected);
  const cell = (name: string) => row[header.indexOf(name)];
  assert.equal(cell('customer.name'), tricky);
  assert.equal(cell('notes'), 'a,b "c"');
  assert.equal(cell('shipment.status'), 'pending');
  assert.equal(cell('id'), order.id);
  assert.equal(cell('total'), JSON.stringify(view.total));
  assert.equal(cell('refunded_at'), '', 'null is an empty cell');
  assert.equal(cell('line_items'), view.line_items === null ? '' : JSON.stringify(view.line_items));
  // A shipment's addresses and terms are one cell of JSON text.
  const shipments = parseCsv((await exportOf(svc.url, t.key, 'shipments', { format: 'csv' })).text);
  const sView = JSON.parse(linesOf((await exportOf(svc.url, t.key, 'shipments')).text)[0]);
  for (const [name, value] of Object.entries(sView)) {
    if (value !== null && typeof value === 'object') assert.equal(shipments[1][shipments[0].indexOf(name)], JSON.stringify(value), name);
  }
  // An empty export in CSV is its header alone.
  const none = parseCsv((await exportOf(svc.url, t.key, 'orders', { format: 'csv', status: 'archived' })).text);
  assert.deepEqual(none, [header]);
});

test('gzip when the client accepts it; the same bytes once unzipped', async () => {
  const t = await tenantWithOrders(3);
  const plain = await fetch(svc.url + exportPath('orders'), { headers: { authorization: `Bearer ${t.key}`, 'accept-encoding': 'identity' } });
  assert.equal(plain.headers.get('content-encoding'), null);
  const plainText = await plain.text();
  for (const format of ['jsonl', 'csv']) {
    const { get } = await import('node:http');
    const raw = await new Promise<{ headers: Record<string, unknown>; body: Buffer }>((resolve, reject) => {
      get(
        svc.url + exportPath('orders', { format }),
        { headers: { authorization: `Bearer ${t.key}`, 'accept-encoding': 'gzip, deflate' } },
        (res) => {
          const chunks: Buffer[] = [];
          res
            .on('data', (c) => chunks.push(c))
            .on('end', () => resolve({ headers: res.headers, body: Buffer.concat(chunks) }))
            .on('error', reject);
        },
      ).on('error', reject);
    });
    assert.equal(raw.headers['content-encoding'], 'gzip');
    const text = zlib.gunzipSync(raw.body).toString('utf8');
    if (format === 'jsonl') assert.equal(text, plainText);
    else assert.equal(parseCsv(text).length, 4);
  }
});

test('the response is documented: the OpenAPI document describes the stream media types and the cursor header', async () => {
  const doc = (await http(svc.url, 'GET', '/api/v1/openapi.json')).body;
  for (const resource of ['orders', 'shipments', 'products', 'customers', 'stock-movements']) {
    const get = doc.paths[`/api/v1/exports/${resource}`]?.get;
    assert.ok(get, resource);
    assert.deepEqual(Object.keys(get.responses['200'].content).sort(), ['application/x-ndjson', 'text/csv']);
    assert.ok(get.responses['200'].headers['Merx-Events-Cursor']);
    assert.equal(get['x-mcp-tool'] ?? null, null, 'not in MCP');
  }
  const t = await tenantWithOrders(1);
  for (const format of ['jsonl', 'csv'])
    assertResponseMatches(doc, 'GET', '/api/v1/exports/orders', await exportOf(svc.url, t.key, 'orders', { format }));
  assertResponseMatches(doc, 'GET', '/api/v1/exports/orders', await exportOf(svc.url, t.key, 'orders', { limit: 1 }));
});

test("the console's export: the operator runs an export operation with the list page's filters and gets the stream", async () => {
  const t = await tenantWithOrders(2);
  await t.op.setStatus(t.orders[0].id, 'confirmed');
  const res = await http(svc.url, 'POST', `/admin/api/accounts/${t.accountId}/operations/export_orders`, {
    token: ADMIN_TOKEN,
    body: { arguments: { status: 'confirmed', format: 'csv' } },
  });
  assert.equal(res.status, 200, res.text);
  assert.equal(res.headers.get('content-type'), 'text/csv; charset=utf-8');
  const rows = parseCsv(res.text);
  assert.equal(rows.length, 2);
  assert.equal(rows[1][rows[0].indexOf('id')], t.orders[0].id);
  const jsonl = await http(svc.url, 'POST', `/admin/api/accounts/${t.accountId}/operations/export_shipments`, {
    token: ADMIN_TOKEN,
    body: { arguments: {} },
  });
  assert.equal(jsonl.status, 200, jsonl.text);
  assert.equal(jsonl.headers.get('content-type'), 'application/x-ndjson');
});

test('an export counts as one request against the rate limit, however many records it streams', async () => {
  const t = await tenantWithOrders(3);
  const first = await exportOf(svc.url, t.key, 'orders');
  const second = await exportOf(svc.url, t.key, 'orders');
  assert.equal(linesOf(second.text).length, 3);
  assert.equal(Number(first.headers.get('x-ratelimit-remaining')) - Number(second.headers.get('x-ratelimit-remaining')), 1);
});
