// Contract safety net of issue 12: every view PostgreSQL writes is checked,
// over rows covering every state and every nullable field, against the
// contract's TypeBox schema and against the JavaScript view it replaced
// (the same JSON after a canonical sort, and the same bytes: numbers, times
// and the compact jsonb documents as JSON.stringify printed them). Runs on
// PGlite and, with DATABASE_URL, on PostgreSQL.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import type { TSchema } from 'typebox';
import type { Db } from '../src/platform/db/db.ts';
import { canonicalJson } from '../src/platform/contract/canonical-json.ts';
import { etagOf, etagOfText } from '../src/platform/contract/etag.ts';
import type { View } from '../src/platform/read-path/stored-view.ts';
import { readArray, readOne } from '../src/platform/read-path/read-sql.ts';
import type { JsonView } from '../src/platform/read-path/json-view.ts';
import { orderView } from '../src/modules/orders/view.ts';
import { ORDER_STATUSES } from '../src/modules/orders/schema.ts';
import { SHIPMENT_STATUSES } from '../src/modules/shipments/schema.ts';
import { startTestService, type TestService } from './helpers/harness.ts';
import { isolatedDatabase, type IsolatedDatabase } from './helpers/webhooks.ts';
import {
  legacyCustomer,
  legacyDelivery,
  legacyMovement,
  legacyNote,
  legacyOrder,
  legacyProduct,
  legacySegment,
  legacySegments,
  legacyShipment,
  legacyStockItem,
  legacySubscription,
} from './helpers/legacy-views.ts';
import { shipmentView } from '../src/modules/shipments/view.ts';
import { productView } from '../src/modules/products/view.ts';
import { STOCK_ITEM_VIEW } from '../src/modules/inventory/stock.ts';
import { MOVEMENT_VIEW } from '../src/modules/inventory/movements.ts';
import { Movement, MOVEMENT_TYPES, StockItem } from '../src/modules/inventory/schema.ts';
import { CUSTOMER_VIEW } from '../src/modules/customers/queries.ts';
import { Customer, Note, Segment } from '../src/modules/customers/schema.ts';
import { segmentText } from '../src/modules/customers/segment-view.ts';
import { listSegments } from '../src/modules/customers/segments.ts';
import { NOTE_VIEW } from '../src/modules/customers/notes.ts';
import { SUBSCRIPTION_VIEW } from '../src/modules/webhooks/subscriptions/queries.ts';
import { DELIVERY_VIEW } from '../src/modules/webhooks/delivery/deliveries.ts';
import { Delivery, DELIVERY_STATUSES, Subscription } from '../src/modules/webhooks/schema.ts';

let service: TestService;
let db: Db;
let accountId: string;
const ajv = new Ajv2020({ strict: false, allErrors: true });
(addFormats as unknown as (a: Ajv2020) => void)(ajv);

let data: IsolatedDatabase;

before(async () => {
  // Rows written straight into the tables (stock without movements, say) would break the whole-database checks of
  // other suites sharing a PostgreSQL database: this file gets a database of its own.
  data = await isolatedDatabase();
  service = await startTestService(data.env);
  db = service.service.db;
  accountId = crypto.randomUUID();
  await db.query(`INSERT INTO accounts (id, name, email) VALUES ($1, 'Views', 'views@example.com')`, [accountId]);
});
after(async () => {
  await service?.close();
  await data?.drop();
});

/** jsonb columns: their values go in as JSON text, strings and numbers too. */
const JSONB_COLUMNS = new Set([
  'courier_office_id',
  'invoice_number',
  'line_items',
  'status_events',
  'office_id',
  'recipient_address',
  'parcel_dim_cm',
  'sender_origin',
  'shipment_terms',
  'dim_cm',
  'filters',
]);

/** Columns a test row sets; the rest stay null (or their defaults). */
async function insert(table: string, values: Record<string, unknown>): Promise<string> {
  const id = (values.id as string) ?? crypto.randomUUID();
  const row = { id, account_id: accountId, ...values };
  const names = Object.keys(row);
  await db.query(
    `INSERT INTO ${table} (${names.join(', ')}) VALUES (${names.map((_, i) => `$${i + 1}`).join(', ')})`,
    // jsonb as JSON text; arrays of other columns (text[]) as arrays.
    Object.entries(row).map(([k, v]) => (v !== null && JSONB_COLUMNS.has(k) ? JSON.stringify(v) : v)),
  );
  return id;
}

/**
 * Issue 29: a stored view's document, as the rows were written straight in SQL (its triggers wrote it), is the view
 * as built from the row now, byte for byte, with the ETag of exactly that text; then it is checked as any view.
 */
async function checkStoredView(view: View, id: string, legacy: unknown) {
  const where = `${view.read.alias}.account_id = $1 AND ${view.read.alias}.id = $2`;
  const stored = await readOne(db, view.read, where, [accountId, id]);
  const built = await readOne(db, view.built, where, [accountId, id]);
  assert.ok(stored && built, `row ${id} has a view`);
  assert.equal(stored.text, built.text, `${view.name} ${id}: the stored document is the view built from the row`);
  assert.equal(stored.etag, etagOfText(stored.text));
  await checkView(view.read, view.schema, id, legacy);
}

/** The database-built view of one row: valid by the schema, equal to the old JavaScript view. */
async function checkView(view: JsonView, schema: TSchema, id: string, legacy: unknown, extra: unknown[] = []) {
  const text = await readOne(db, view, `${view.alias}.account_id = $1 AND ${view.alias}.id = $${2 + extra.length}`, [accountId, ...extra, id]);
  assert.ok(text, `row ${id} has a view`);
  const value = JSON.parse(text.text);
  const validate = ajv.compile(schema);
  assert.ok(validate(value), `schema: ${JSON.stringify(validate.errors)} in ${text.text}`);
  assert.equal(canonicalJson(value), canonicalJson(legacy));
  // Byte for byte: 12.5, not 12.50; .120Z, not .12+00; {"a":1}, not {"a": 1}.
  assert.equal(text.text, JSON.stringify(legacy));
}

/** The view text of the one row `where` finds, for rows without an id column (customers are keyed by email or phone). */
async function readOnly(view: JsonView, where: string, params: unknown[]): Promise<string> {
  const text = (await readArray(db, view, where, params, '1')).text;
  return text.slice(1, -1);
}

const LINE_ITEMS = [
  {
    kind: 'main',
    product_id: crypto.randomUUID(),
    variant_id: null,
    name: 'Mug "big"\n\tÄ ☕ 𝄞',
    sku: null,
    qty: 2,
    unit_price_cents: 1250,
    total_cents: 2500,
    delivery_type: 'physical',
    digital: false,
    note: '',
  },
  {
    kind: 'gift',
    product_id: null,
    variant_id: crypto.randomUUID(),
    name: 'Card',
    sku: 'C-1',
    qty: 1,
    unit_price_cents: 0,
    total_cents: 0,
    delivery_type: 'digital',
    digital: true,
    note: 'x',
    extra: { a: [1, 2.5] },
  },
];

test('order: every status, legacy and line-item orders, every nullable field empty and set, latest shipment or none', async () => {
  const cases: Array<{ values: Record<string, unknown> }> = [];
  cases.push({ values: { status: 'new', created_at: '2026-01-01T00:00:00.000Z', updated_at: '2026-01-01T00:00:00.000Z' } });
  for (const [i, status] of ORDER_STATUSES.entries()) {
    cases.push({
      values: {
        number: i + 1,
        order_number: 9_007_199_254 + i,
        status,
        payment_status: 'paid',
        payment_method: 'cod',
        funnel_step: 'main',
        parent_order_id: crypto.randomUUID(),
        total: ['12.50', '0.01', '9999999999.99', '100.00', '0.10', '1234.56'][i % 6],
        delivery_price: '5.00',
        discount_amount: '0.30',
        coupon_code: 'SALE',
        refund_amount_cents: 120,
        refunded_at: '2026-03-04T05:06:07.009Z',
        customer_name: 'Ана "Q" \\ Петрова \u0001',
        customer_email: 'ana@example.com',
        customer_phone: '+359 888',
        customer_vat: 'BG123',
        shipping_address: 'ul. Vitosha 1\nfloor 2',
        shipping_city: 'Sofia',
        shipping_zip: '1000',
        shipping_method: 'courier',
        courier_slug: 'courier_a',
        courier_delivery_mode: i % 2 ? 'home' : 'office',
        courier_office_id: i % 2 ? 'A-12' : 101,
        courier: 'courier_a',
        tracking_number: `T${i}`,
        tracking_url: 'https://t.example/T',
        line_items: i % 2 === 0 ? LINE_ITEMS : null,
        product_name: 'Mug',
        product_sku: 'M-1',
        quantity: 3,
        unit_price: '4.17',
        notes: 'ring twice',
        admin_notes: 'vip',
        return_note: 'broken',
        page_id: crypto.randomUUID(),
        invoice_number: i % 2 ? 'INV-7' : 7,
        created_at: `2026-02-0${(i % 9) + 1}T10:11:12.${String(i * 111).padStart(3, '0')}Z`,
        updated_at: '2026-12-31T23:59:59.999Z',
      },
    });
  }
  for (const [i, c] of cases.entries()) {
    const id = await insert('orders', c.values);
    if (i % 3 === 1) {
      for (const [n, status] of [SHIPMENT_STATUSES[i % SHIPMENT_STATUSES.length], 'cancelled'].entries()) {
        await insert('shipments', {
          order_id: id,
          courier_slug: 'courier_b',
          tracking_number: `S${i}-${n}`,
          status,
          last_status_label: n ? null : 'On the way',
          last_status_at: n ? null : '2026-05-06T07:08:09.100Z',
          created_at: `2026-04-0${n + 1}T00:00:00.000Z`,
        });
      }
    }
    await checkStoredView(orderView, id, await legacyOrder(db, accountId, id));
  }
});

test('shipment: every status, every nullable field empty and set, string and integer office ids, raw courier events', async () => {
  const orderId = await insert('orders', { status: 'shipped' });
  for (const [i, status] of SHIPMENT_STATUSES.entries()) {
    const full = i % 2 === 1;
    const id = await insert('shipments', {
      order_id: orderId,
      status,
      created_at: `2026-06-0${i + 1}T01:02:03.${String(i * 7).padStart(3, '0')}Z`,
      ...(full
        ? {
            courier_slug: 'courier_c',
            tracking_number: `W${i}`,
            last_status_label: 'Доставена "ok"',
            last_status_at: '2026-06-09T09:09:09.990Z',
            status_events: [
              { at: '2026-06-09T09:09:09Z', code: i, label: 'x' },
              { at: '2026-06-10T00:00:00Z', code: 'DLV', label: null, raw: { a: 1 } },
            ],
            delivery_mode: 'home',
            office_id: i === 1 ? 'OF-1' : 77,
            recipient_address: i === 3 ? 'Sofia, ul. 1' : { city: 'Sofia', line: 'ul. 1' },
            cod_amount: '25.50',
            shipping_cost: '4.99',
            parcel_weight_g: 1200,
            parcel_dim_cm: { l: 10, w: 20.5, h: 3 },
            sender_origin: { office: 12 },
            shipment_terms: { insured: true },
            updated_at: '2026-06-11T00:00:00.001Z',
          }
        : {}),
    });
    await checkStoredView(shipmentView, id, await legacyShipment(db, accountId, id));
  }
});

test('product: with and without variants, every nullable field empty and set, images, dimensions', async () => {
  const bare = await insert('products', { name: 'Bare', created_at: '2026-07-01T00:00:00.000Z' });
  await checkStoredView(productView, bare, await legacyProduct(db, accountId, bare));
  for (const [i, price] of ['12.50', '0.01', '100.00'].entries()) {
    const id = await insert('products', {
      name: `Mug "${i}" ☕`,
      marketing_name: 'Mug',
      sku: `M-${i}`,
      price,
      original_price: '19.90',
      active: i !== 1,
      delivery_type: 'digital',
      offer_type: 'bundle',
      description: 'line\nbreak',
      images: [`https://img.example/${i}.png`, 'b"c'],
      stock_quantity: i,
      block_on_zero_stock: true,
      low_stock_threshold: 3,
      weight_g: 250,
      dim_cm: i === 2 ? null : { l: 1, w: 2.5, h: 3 },
      shipping_short_name: 'S',
      shipping_category: 'small',
      catalog_hidden: true,
      language: 'bg',
      updated_at: '2026-07-02T00:00:00.500Z',
    });
    for (const [n, position] of [2, null, 1].entries()) {
      await insert('product_variants', {
        product_id: id,
        type: n ? 'size' : null,
        name: n ? `V${n}` : null,
        value: 'XL',
        price_delta: n === 1 ? '-1.50' : null,
        stock_quantity: n === 2 ? null : 4,
        image_url: n ? 'https://img.example/v.png' : null,
        position,
      });
    }
    await checkStoredView(productView, id, await legacyProduct(db, accountId, id));
  }
});

test('stock item: tracked and untracked, low and not, own and default threshold, variants tracked or not', async () => {
  for (const [i, stock] of [null, 0, 3, 50].entries()) {
    const id = await insert('products', {
      name: `Stock ${i}`,
      sku: i ? `S-${i}` : null,
      stock_quantity: stock,
      low_stock_threshold: i === 2 ? null : 4,
      block_on_zero_stock: i === 1,
    });
    if (i % 2) {
      for (const [n, position] of [null, 1].entries()) {
        await insert('product_variants', { product_id: id, name: n ? 'Red' : null, value: n ? 'red' : null, stock_quantity: n ? 2 : null, position });
      }
    }
    // The view takes the account's default threshold as $2.
    await checkView(STOCK_ITEM_VIEW, StockItem, id, await legacyStockItem(db, accountId, id, 5), [5]);
  }
});

test('movement: every type, with and without variant, order and note', async () => {
  const productId = await insert('products', { name: 'Moved' });
  const variantId = await insert('product_variants', { product_id: productId, name: 'V' });
  const orderId = await insert('orders', { status: 'new' });
  for (const [i, type] of MOVEMENT_TYPES.entries()) {
    const full = i % 2 === 0;
    const id = await insert('stock_movements', {
      product_id: productId,
      type,
      qty: i - 2,
      created_at: `2026-08-0${i + 1}T12:00:00.${String(i * 100 + 5).padStart(3, '0')}Z`,
      ...(full ? { variant_id: variantId, note: 'counted "twice"', unit_cost: '1.2345' } : {}),
      // One effect per order and type (a unique index): one movement carries the order.
      ...(i === 0 ? { order_id: orderId } : {}),
    });
    await checkView(MOVEMENT_VIEW, Movement, id, await legacyMovement(db, accountId, id));
  }
});

test('customer: every nullable field empty and set, money with and without cents', async () => {
  for (const [i, spent] of ['0.00', '12.50', '99999.99'].entries()) {
    const key = `c${i}-${crypto.randomUUID()}@example.com`;
    const full = i > 0;
    await db.query(
      `INSERT INTO customer_aggregates (account_id, key, name, email, phone, orders_count, total_spent, first_order_at, last_order_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
      [
        accountId,
        key,
        full ? 'Ана "Q"' : null,
        full ? key : null,
        full ? '+359 1' : null,
        i + 1,
        spent,
        '2026-01-01T00:00:00.000Z',
        `2026-09-0${i + 1}T08:09:10.${i}11Z`,
      ],
    );
    const text = await readOnly(CUSTOMER_VIEW, 'c.account_id = $1 AND c.key = $2', [accountId, key]);
    assert.ok(ajv.validate(Customer, JSON.parse(text)), JSON.stringify(ajv.errors));
    assert.equal(text, JSON.stringify(await legacyCustomer(db, accountId, key)));
  }
});

test('webhook delivery: every status, attempted or not, with and without a response', async () => {
  const webhookId = await insert('webhook_subscriptions', {
    url: 'https://hooks.example/x',
    events: ['order.created'],
    secret: 'a'.repeat(64),
    secret_prefix: 'aaaaaaaa',
  });
  for (const [i, status] of DELIVERY_STATUSES.entries()) {
    // One delivery per (subscription, event).
    const eventId = await insert('events', { event: 'order.created', api_version: '2026-01-01', data: '{}' });
    const attempted = i > 0;
    const id = await insert('webhook_deliveries', {
      webhook_id: webhookId,
      event_id: eventId,
      event: 'order.created',
      status,
      attempt: i,
      next_attempt_at: `2026-10-0${i + 1}T00:00:00.${i}00Z`,
      ...(attempted
        ? {
            last_status_code: 500 + i,
            last_error: 'timeout "x"',
            response_body: '{"a": 1}\n',
            delivered_at: status === 'delivered' ? '2026-10-09T01:01:01.010Z' : null,
          }
        : {}),
    });
    await checkView(DELIVERY_VIEW, Delivery, id, await legacyDelivery(db, accountId, id));
  }
});

test('webhook subscription: active or not, every nullable field empty and set, one event or many; never the secret', async () => {
  for (const [i, full] of [false, true, true].entries()) {
    const secret = crypto.randomBytes(32).toString('hex');
    const id = await insert('webhook_subscriptions', {
      url: `https://hooks.example/${i}?a="b"&c=☕`,
      events: i === 2 ? ['order.created', 'order.updated', 'shipment.delivered'] : ['order.created'],
      secret,
      secret_prefix: secret.slice(0, 8),
      active: i !== 1,
      created_at: `2026-11-0${i + 1}T01:02:03.${i}40Z`,
      updated_at: `2026-11-0${i + 1}T04:05:06.${i}07Z`,
      ...(full
        ? {
            description: 'ERP "main"\nline',
            last_triggered_at: '2026-11-10T10:10:10.010Z',
            last_status_code: 500 + i,
            dead_notified_at: '2026-11-11T11:11:11.100Z',
            previous_secret: 'b'.repeat(64),
            previous_secret_expires_at: '2026-12-01T00:00:00.000Z',
          }
        : {}),
    });
    const legacy = await legacySubscription(db, accountId, id);
    await checkView(SUBSCRIPTION_VIEW, Subscription, id, legacy);
    const text = (await readOne(db, SUBSCRIPTION_VIEW, 's.account_id = $1 AND s.id = $2', [accountId, id]))!.text;
    assert.ok(!text.includes(secret) && !text.includes('b'.repeat(64)), 'the view never carries a secret');
    assert.equal(JSON.parse(text).secret_prefix, `${secret.slice(0, 8)}…`);
    // EXTENSIONS 3: the ETag is a hash of the view served, so a subscription keeps the tag it had.
    assert.equal(etagOf(JSON.parse(text)), etagOf(legacy));
  }
});

test('note: keys by email and by phone, text with quotes, escapes and non-ASCII', async () => {
  for (const [i, [key, text]] of [
    ['ana@example.com', 'Prefers "after 18:00"\n\tÄ ☕ 𝄞 \u0001'],
    ['+359 888 123', 'x'],
  ].entries()) {
    const id = await insert('customer_notes', { customer_key: key, text, created_at: `2026-11-2${i}T00:00:00.${i}50Z` });
    await checkView(NOTE_VIEW, Note, id, await legacyNote(db, accountId, id));
  }
});

test('segment: membership (empty and with members) and computed by every filter, nested, dangling; each and the list', async () => {
  // Customers the filters tell apart: spent, orders, contacts, last order, a page, a product, an abandoned cart.
  const productId = await insert('products', { name: 'Segmented' });
  const pageId = await insert('pages', { title: 'Landing', product_ids: [productId] });
  const customers = [
    { key: 'seg-a@example.com', email: 'seg-a@example.com', phone: null, orders: 1, spent: '12.50', last: '2020-01-01T00:00:00.000Z' },
    { key: 'seg-b@example.com', email: 'seg-b@example.com', phone: '+359 1', orders: 3, spent: '250.00', last: '2026-11-01T00:00:00.000Z' },
    { key: '+359 222', email: null, phone: '+359 222', orders: 7, spent: '999.99', last: '2026-11-20T00:00:00.000Z' },
  ];
  for (const c of customers) {
    await db.query(
      `INSERT INTO customer_aggregates (account_id, key, name, email, phone, orders_count, total_spent, first_order_at, last_order_at)
       VALUES ($1, $2, 'Seg', $3, $4, $5, $6, '2019-01-01T00:00:00.000Z', $7)`,
      [accountId, c.key, c.email, c.phone, c.orders, c.spent, c.last],
    );
  }
  await insert('orders', { status: 'new', customer_email: 'seg-b@example.com', page_id: pageId });
  await insert('orders', { status: 'paid', customer_phone: '+359 222', line_items: [{ ...LINE_ITEMS[0], product_id: productId }] });
  await insert('abandoned_carts', { email: 'SEG-A@example.com' });

  const at = (n: number) => ({
    created_at: `2026-11-1${n % 10}T0${n % 10}:00:00.${String(n * 37).padStart(3, '0')}Z`,
    updated_at: `2026-11-2${n % 10}T00:00:00.${n}00Z`,
  });
  const membership = async (n: number, name: string, members: string[]) => {
    const id = crypto.randomUUID();
    await insert('segments', { id, name, filters: { inSegment: id }, ...at(n) });
    for (const key of members)
      await db.query('INSERT INTO segment_members (account_id, segment_id, customer_key) VALUES ($1, $2, $3)', [accountId, id, key]);
    return id;
  };
  const emptyList = await membership(0, 'Empty list', []);
  const list = await membership(1, 'VIP "list" ☕ \u0001', ['seg-a@example.com', '+359 222', 'nobody@example.com']);
  const computed = async (n: number, filters: Record<string, unknown>) => insert('segments', { name: `computed ${n}`, filters, ...at(n) });
  const nested = await computed(2, { minOrders: 2 });
  const ids = [emptyList, list, nested];
  for (const [n, filters] of [
    { minTotal: 12.5, maxTotal: 500 },
    { minOrders: 1, maxOrders: 3, hasEmail: true },
    { hasPhone: false },
    { lastOrderBeforeDaysAgo: 30 },
    { lastOrderAfterDate: '2026-01-01', lastOrderBeforeDate: '2026-11-10' },
    { productId },
    { pageId },
    { hasAbandonedCart: true },
    { hasAbandonedCart: false, minTotal: 0.1 },
    { inSegment: list },
    { inSegment: nested, hasEmail: true },
    // Names a segment that is gone: no one.
    { inSegment: crypto.randomUUID() },
    // Not its own id alone: computed (over the list), not membership.
    { inSegment: list, minOrders: 0 },
  ].entries()) {
    ids.push(await computed(n + 3, filters));
  }
  const validate = ajv.compile(Segment);
  const kinds = new Set<string>();
  const counts = new Set<number>();
  for (const id of ids) {
    const [{ filters }] = (await db.query('SELECT filters FROM segments WHERE id = $1', [id])).rows;
    const text = (await segmentText(db, accountId, { id, filters })).text;
    const value = JSON.parse(text);
    assert.ok(validate(value), `schema: ${JSON.stringify(validate.errors)} in ${text}`);
    const legacy = await legacySegment(db, accountId, id);
    assert.equal(text, JSON.stringify(legacy));
    kinds.add(value.kind);
    counts.add(value.customer_count);
  }
  assert.deepEqual([...kinds].sort(), ['computed', 'membership']);
  assert.ok(counts.size >= 3, `the rows tell the filters apart: counts ${[...counts]}`);
  // The list: one statement for every view and count, oldest first.
  const listText = (await listSegments(db, accountId)).text;
  assert.equal(listText, JSON.stringify(await legacySegments(db, accountId)));

  // A number jsonb spells otherwise (1e+21 as 1000000000000000000000): the same JSON by meaning, and the same ETag.
  const big = await computed(20, { minTotal: 1e21 });
  const [{ filters }] = (await db.query('SELECT filters FROM segments WHERE id = $1', [big])).rows;
  const bigText = (await segmentText(db, accountId, { id: big, filters })).text;
  assert.equal(canonicalJson(JSON.parse(bigText)), canonicalJson(await legacySegment(db, accountId, big)));
});
