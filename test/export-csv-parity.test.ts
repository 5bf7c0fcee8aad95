// The CSV export on PostgreSQL is written by COPY, each cell read from the stored document (src/modules/exports/
// csv-copy.ts); on PGlite by csv.ts from each document. Both must give the same bytes: every resource's CSV export is
// compared with csv.ts laid over the same records' JSONL, over tricky data (commas, quotes, CR and LF, non-ASCII, empty
// strings, nulls, a null flattened object, numbers, booleans, nested JSON holding all of these).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { startTestService, type TestService } from './helpers/harness.ts';
import { checkoutWith, ship, shipTenant } from './helpers/shipments.ts';
import { exportOf, linesOf } from './helpers/exports.ts';
import { EXPORT_SOURCES } from '../src/modules/exports/sources.ts';
import { csvColumns, csvHeader, csvRow } from '../src/modules/exports/csv.ts';

let svc: TestService;
before(async () => {
  svc = await startTestService();
});
after(async () => {
  await svc?.close();
});

const SCOPES = ['orders:read', 'orders:write', 'shipments:read', 'shipments:write', 'products:read', 'customers:read', 'inventory:read'];

const TRICKY = [
  'Ана "Ani", Petrova\nline two\r\nthree',
  'a,b',
  '"',
  '""',
  '\r',
  '\n',
  ' lead and trail ',
  '\\.',
  'tab\there',
  '日本語 ✓ 🚚',
  'x\u0001y',
  '',
];

test('CSV export: the same bytes as csv.ts over the JSONL records, for every resource, on tricky data', async () => {
  const t = await shipTenant(svc, { scopes: SCOPES });
  const orders = [];
  for (const [i, name] of TRICKY.entries()) {
    orders.push(
      await checkoutWith(svc, t.accountId, 'courier_a', {
        customer: { name, email: `b${i}@example.com`, phone: `+35988800${String(i).padStart(4, '0')}` },
        notes: TRICKY[(i + 3) % TRICKY.length],
      }),
    );
  }
  await ship(svc, t.key, { order_id: orders[0].id });
  const db = svc.service.db;
  const lineItems = JSON.stringify([
    {
      kind: 'main',
      product_id: null,
      variant_id: null,
      name: 'Mug, "big"\r\n',
      sku: '',
      qty: 2,
      unit_price_cents: 1250,
      total_cents: 2500,
      delivery_type: 'ship',
      digital: false,
      note: 'é\u0007',
      extra: { deep: [1.5, true, null, 'x'] },
    },
  ]);
  await db.query(
    `UPDATE orders SET total = 9999999999.99, delivery_price = 0.01, discount_amount = -0.1, unit_price = 0, line_items = $2::jsonb,
        courier_office_id = '"office, \\"7\\""'::jsonb, invoice_number = '42'::jsonb, admin_notes = '', coupon_code = 'A"B'
      WHERE id = $1`,
    [orders[1].id, lineItems],
  );
  await db.query(
    `UPDATE orders SET customer_name = NULL, customer_email = NULL, customer_phone = NULL, shipping_address = NULL, line_items = NULL, total = NULL WHERE id = $1`,
    [orders[2].id],
  );
  await db.query(`UPDATE orders SET line_items = '[]'::jsonb, courier_office_id = '101'::jsonb, invoice_number = '"INV-1,2"'::jsonb WHERE id = $1`, [
    orders[3].id,
  ]);

  // Values whose text differs between PostgreSQL and JavaScript (1e21, past 2^53, a trailing zero, 0.1), also in jsonb
  // fields that may hold a string or a number, JSON null and "", an order without a shipment (all but orders[0]), a
  // product, a variant and a movement written here.
  await db.query(
    `UPDATE orders SET invoice_number = '1e21'::jsonb, courier_office_id = '12345678901234567'::jsonb, total = 0.1, customer_vat = '',
        line_items = $2::jsonb WHERE id = $1`,
    // Keys of the order's own fields inside line_items: nothing may find a field by its key in the document's text.
    [
      orders[4].id,
      JSON.stringify([
        { kind: 'main', qty: 1e21, x: 0.000001, y: 1.5, z: 'é,"\n', n: null, e: '', deep: { a: [{}, []] } },
        { line_items: [], product_name: ',"product_name":', shipment: { id: 'x' }, created_at: null, updated_at: '}' },
      ]),
    ],
  );
  await db.query(`UPDATE orders SET invoice_number = '1.50'::jsonb, courier_office_id = 'null'::jsonb, line_items = '[]' WHERE id = $1`, [
    orders[5].id,
  ]);
  await db.query(`UPDATE orders SET invoice_number = '""'::jsonb, courier_office_id = '-0.000000120'::jsonb, status = 'confirmed' WHERE id = $1`, [
    orders[6].id,
  ]);
  await db.query(
    `UPDATE shipments SET recipient_address = $2::jsonb, parcel_dim_cm = '{"l":1e21,"w":0.1,"h":1.50}', sender_origin = 'null'::jsonb,
        shipment_terms = '""'::jsonb, cod_amount = 0.1, shipping_cost = 1234567890.12, tracking_number = '', last_status_label = $3,
        status_events = $4::jsonb
      WHERE account_id = $1`,
    [
      t.accountId,
      JSON.stringify(TRICKY[0]),
      TRICKY[1],
      JSON.stringify([
        { at: 'x', code: 1e-7, label: TRICKY[9] },
        { at: '', code: null, label: null },
      ]),
    ],
  );
  const product = crypto.randomUUID();
  await db.query(
    `INSERT INTO products (id, account_id, name, marketing_name, sku, price, images, dim_cm, description, weight_g)
     VALUES ($1, $2, $3, '', NULL, 0.1, $4::text[], '{"l":1e-7,"w":0.1,"h":1e21}', $5, 0)`,
    [product, t.accountId, TRICKY[0], ['a,"b"', 'é\n', '', 'x\u0001y'], TRICKY[4]],
  );
  await db.query(`INSERT INTO products (id, account_id, name, price, images, dim_cm) VALUES ($1, $2, '', 1234567890.1, '{}', 'null'::jsonb)`, [
    crypto.randomUUID(),
    t.accountId,
  ]);
  const variant = crypto.randomUUID();
  await db.query(
    `INSERT INTO product_variants (id, account_id, product_id, type, name, value, price_delta, position) VALUES ($1, $2, $3, 'size', $4, '', -0.1, NULL)`,
    [variant, t.accountId, product, TRICKY[2]],
  );
  await db.query(
    `INSERT INTO stock_movements (id, account_id, product_id, variant_id, order_id, type, qty, note) VALUES ($1, $2, $3, $4, NULL, 'correction', -3, $5),
       ($6, $2, $3, NULL, NULL, 'delivery', 2, '')`,
    [crypto.randomUUID(), t.accountId, product, variant, TRICKY[0], crypto.randomUUID()],
  );
  await db.query(
    `UPDATE customer_aggregates SET name = '', email = NULL, total_spent = 0.1 WHERE account_id = $1 AND key = (SELECT min(key) FROM customer_aggregates WHERE account_id = $1)`,
    [t.accountId],
  );

  for (const source of EXPORT_SOURCES) {
    const jsonl = await exportOf(svc.url, t.key, source.resource);
    assert.equal(jsonl.status, 200, `${source.resource}: ${jsonl.text}`);
    const csv = await exportOf(svc.url, t.key, source.resource, { format: 'csv' });
    assert.equal(csv.status, 200, `${source.resource}: ${csv.text}`);
    const columns = csvColumns(source.record);
    const expected =
      csvHeader(columns) +
      linesOf(jsonl.text)
        .map((line) => csvRow(columns, line))
        .join('');
    assert.equal(csv.text, expected, source.resource);
    if (source.resource === 'orders') assert.equal(linesOf(jsonl.text).length, TRICKY.length);
    assert.ok(linesOf(jsonl.text).length > 0, source.resource);
  }
  // Filters and starting_after reach the COPY as literals: the same rows as the JSONL's.
  for (const query of [{ status: 'new' }, { starting_after: orders[5].id }, { q: 'Petrova' }]) {
    const jsonl = linesOf((await exportOf(svc.url, t.key, 'orders', query)).text);
    const csv = await exportOf(svc.url, t.key, 'orders', { ...query, format: 'csv' });
    assert.equal(csv.status, 200, csv.text);
    const columns = csvColumns(EXPORT_SOURCES[0].record);
    assert.equal(csv.text, csvHeader(columns) + jsonl.map((line) => csvRow(columns, line)).join(''), JSON.stringify(query));
  }
});
