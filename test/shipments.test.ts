// SPEC Endpoints > Shipments (create with dry run, get, label, cancel with dry
// run), GET /orders/{id}/shipment, the Shipment view, order status rules on
// creation and cancellation (SPEC "Order status" table), events
// shipment.created / order.status_changed / shipment.cancelled, Errors; GAPS
// "Orders and shipments" (live, order_status 409, courier_not_enabled, COD,
// weight, content_label, cancel result); MCP get_shipment, create_shipment,
// cancel_shipment. Everything through the courier simulator over HTTP.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { startTestService, http, freshTenant, type TestService } from './helpers/harness.ts';
import { assertError, assertScopeMissing } from './helpers/contract.ts';
import { callTool, callToolError, rpc, request, assertRefusal, toolCall } from './helpers/mcp.ts';
import {
  CANCEL_RESULT_FIELDS,
  CREATE_PREVIEW_FIELDS,
  DEFAULT_TERMS,
  DRY,
  assertLabel,
  assertShipmentView,
  assertSummary,
  cancel,
  checkoutWith,
  changeParcel,
  createShipment,
  events,
  fetchLabel,
  forgetParcel,
  getShipment,
  merchantSets,
  newParcels,
  orderNow,
  parcel,
  parcelKeys,
  pdfText,
  putCourier,
  ship,
  shipTenant,
  shipmentNow,
  summaryOf,
  withMode,
} from './helpers/shipments.ts';

let svc: TestService;
before(async () => {
  svc = await startTestService({ COURIER_TIMEOUT_MS: '1000' });
});
after(async () => {
  await svc.close();
});

const orderShipment = (key: string, orderId: string) => http(svc.url, 'GET', `/api/v1/orders/${orderId}/shipment`, { token: key });

// ---------------------------------------------------------------- create

test('POST /shipments uses the checkout courier, mode and office: 201 {data: Shipment}; the order moves new -> processing with courier and tracking set', async () => {
  const { accountId, key } = await shipTenant(svc);
  const order = await checkoutWith(svc, accountId, 'courier_a');
  assert.equal(order.status, 'new');
  const before = await parcelKeys(svc);

  const res = await createShipment(svc, key, { order_id: order.id });
  assert.equal(res.status, 201, res.text);
  assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
  assert.deepEqual(Object.keys(res.body), ['data']);
  const s = res.body.data;
  assertShipmentView(s, 'created');
  assert.equal(s.order_id, order.id);
  assert.equal(s.courier_slug, 'courier_a');
  assert.equal(s.status, 'pending', 'SPEC shipment table: pending as first status');
  assert.equal(typeof s.tracking_number, 'string');
  assert.ok(s.tracking_number.length > 0);
  assert.equal(s.delivery_mode, 'office');
  assert.equal(s.office_id, 101);
  assert.equal(s.cod_amount, 12.5, 'cod + unpaid: COD is the order total');
  assert.equal(s.parcel_weight_g, 1000, 'legacy order: the default parcel weight');
  assert.equal(typeof s.shipping_cost, 'number', 'the courier quoted a price');
  assert.deepEqual(s.sender_origin, { mode: 'address' });
  assert.ok(s.shipment_terms && typeof s.shipment_terms === 'object');
  for (const [k, v] of Object.entries(DEFAULT_TERMS)) assert.equal(s.shipment_terms[k], v, `shipment_terms.${k}`);
  assert.ok(s.status_events.length >= 1, 'at least the creation event');

  // The courier holds exactly this waybill, with what the service computed.
  const issued = await newParcels(svc, before);
  assert.equal(issued.length, 1, 'exactly one waybill at the courier');
  assert.equal(issued[0].trackingNumber, s.tracking_number);
  assert.equal(issued[0].slug, 'courier_a');
  assert.equal(issued[0].codAmount, 12.5);
  assert.equal(issued[0].weightKg, 1);

  assert.deepEqual(await shipmentNow(svc, key, s.id), s, 'GET returns the same view');
  const view = await orderNow(svc, key, order.id);
  assert.equal(view.status, 'processing', 'SPEC order table: new -> processing');
  assert.equal(view.courier, 'courier_a', 'GAPS: order courier set from the waybill');
  assert.equal(view.tracking_number, s.tracking_number);
  assert.equal(typeof view.tracking_url, 'string');
  assertSummary(view.shipment, s, 'order view');

  const created = await events(svc, accountId, 'shipment.created');
  assert.equal(created.length, 1);
  assert.deepEqual(Object.keys(created[0].data).sort(), ['order_id', 'shipment', 'source']);
  assert.deepEqual(created[0].data.shipment, s, 'shipment.created carries the Shipment view');
  assert.equal(created[0].data.order_id, order.id);
  assert.equal(created[0].data.source, 'api');
  const changed = await events(svc, accountId, 'order.status_changed');
  assert.equal(changed.length, 1);
  assert.equal(changed[0].data.previous_status, 'new');
  assert.equal(changed[0].data.status, 'processing');
  assert.equal(changed[0].data.source, 'api');
  assert.equal(changed[0].data.order.id, order.id);
  assert.equal(changed[0].data.order.status, 'processing');
});

test('GAPS: the order view carries courier (and tracking) from the waybill, for every courier, created over REST or MCP, in get, list and events; a new waybill replaces it', async () => {
  const { accountId, key } = await shipTenant(svc);
  for (const slug of ['courier_a', 'courier_b', 'courier_c'] as const) {
    for (const via of ['rest', 'mcp']) {
      const order = await checkoutWith(svc, accountId, slug);
      const s =
        via === 'rest'
          ? await ship(svc, key, { order_id: order.id })
          : (await callTool(svc.url, key, 'create_shipment', { order_id: order.id })).structuredContent.data;
      const views = [
        await orderNow(svc, key, order.id),
        (await callTool(svc.url, key, 'get_order', { id: order.id })).structuredContent.data,
        (await http(svc.url, 'GET', `/api/v1/orders?courier=${slug}&limit=200`, { token: key })).body.data.find((o: any) => o.id === order.id),
        (await events(svc, accountId, 'order.updated')).find((e: any) => e.data.order.id === order.id)?.data.order,
      ];
      for (const [i, view] of views.entries()) {
        const where = `${slug} via ${via}, view ${i}`;
        assert.equal(view?.shipping.courier_slug, slug, where);
        assert.equal(view.courier, slug, `${where}: courier is set from the waybill`);
        assert.equal(view.tracking_number, s.tracking_number, where);
        assert.equal(typeof view.tracking_url, 'string', where);
      }
    }
  }
  // Cancelled, then a new waybill with another courier: the order follows the newest waybill.
  const order = await checkoutWith(svc, accountId, 'courier_a');
  const first = await ship(svc, key, { order_id: order.id });
  assert.equal((await cancel(svc, key, first.id)).status, 200);
  const second = await ship(svc, key, { order_id: order.id, courier: 'courier_b' });
  const view = await orderNow(svc, key, order.id);
  assert.deepEqual([view.courier, view.tracking_number, view.shipping.courier_slug], ['courier_b', second.tracking_number, 'courier_a']);
});

test('overrides win over checkout choices: courier, delivery_mode home (recipient address), office_id, weight_g, dim_cm', async () => {
  const { accountId, key } = await shipTenant(svc);
  const order = await checkoutWith(svc, accountId, 'courier_a');
  const before = await parcelKeys(svc);
  const s = await ship(svc, key, {
    order_id: order.id,
    courier: 'courier_b',
    delivery_mode: 'home',
    weight_g: 2500,
    dim_cm: { l: 30, w: 20, h: 10 },
  });
  assert.equal(s.courier_slug, 'courier_b');
  assert.equal(s.delivery_mode, 'home');
  assert.equal(s.office_id, null, 'home delivery has no office');
  assert.deepEqual(s.recipient_address, { city: 'Sofia', street: 'ul. Vitosha 1' }, 'SPEC: home delivery {city, street}');
  assert.equal(s.parcel_weight_g, 2500);
  assert.deepEqual(s.parcel_dim_cm, { l: 30, w: 20, h: 10 });
  const [issued] = await newParcels(svc, before);
  assert.equal(issued.slug, 'courier_b', 'the overriding courier issued the waybill');
  assert.equal(issued.weightKg, 2.5);
  assert.equal((await orderNow(svc, key, order.id)).courier, 'courier_b');

  const o2 = await checkoutWith(svc, accountId, 'courier_c');
  const s2 = await ship(svc, key, { order_id: o2.id, office_id: 'SOF-7' });
  assert.equal(s2.courier_slug, 'courier_c');
  assert.equal(s2.delivery_mode, 'office');
  assert.equal(s2.office_id, 'SOF-7', 'a string office id stays a string');

  // Checkout chose home delivery: no office needed.
  const o3 = await checkoutWith(
    svc,
    accountId,
    'courier_a',
    {},
    { courier_delivery_mode: 'home', courier_office_id: null, city: 'Plovdiv', address: 'bul. Maritsa 5' },
  );
  const s3 = await ship(svc, key, { order_id: o3.id });
  assert.equal(s3.delivery_mode, 'home');
  assert.deepEqual(s3.recipient_address, { city: 'Plovdiv', street: 'bul. Maritsa 5' });
  // ... and overriding to office with an office id works too.
  const o4 = await checkoutWith(svc, accountId, 'courier_a', {}, { courier_delivery_mode: 'home', courier_office_id: null });
  const s4 = await ship(svc, key, { order_id: o4.id, delivery_mode: 'office', office_id: 55 });
  assert.equal(s4.delivery_mode, 'office');
  assert.equal(s4.office_id, 55);
});

test('COD (GAPS): the order total when payment_method is cod and not paid, otherwise 0; the courier gets the same amount', async () => {
  const { op, accountId, key } = await shipTenant(svc);
  const unpaid = await checkoutWith(svc, accountId, 'courier_b', { delivery_price: 5, discount_amount: 1 });
  assert.equal(unpaid.total, 16.5);
  const paid = await checkoutWith(svc, accountId, 'courier_b');
  await op.pay(paid.id, 'paid');
  const card = await checkoutWith(svc, accountId, 'courier_b', { payment_method: 'card' });

  for (const [order, cod] of [
    [unpaid, 16.5],
    [paid, 0],
    [card, 0],
  ] as const) {
    const preview = await createShipment(svc, key, { order_id: order.id }, DRY);
    assert.equal(preview.status, 200, preview.text);
    assert.equal(preview.body.cod_amount, cod, 'dry-run preview');
    const before = await parcelKeys(svc);
    const s = await ship(svc, key, { order_id: order.id });
    assert.equal(s.cod_amount, cod, 'shipment cod_amount');
    assert.equal((await newParcels(svc, before))[0].codAmount, cod, 'what the courier was told to collect');
  }
});

test('parcel weight (GAPS): override, else the sum of physical line items weight_g x qty, else 1000 g', async () => {
  const { op, accountId, key } = await shipTenant(svc);
  const a = await op.createProduct(accountId, { name: 'Mug', sku: 'W-A', price: 10, weight_g: 300 });
  const b = await op.createProduct(accountId, { name: 'Plate', sku: 'W-B', price: 10, weight_g: 450 });
  const ebook = await op.createProduct(accountId, { name: 'Ebook', sku: 'W-D', price: 5, weight_g: 999, delivery_type: 'digital' });
  const light = await op.createProduct(accountId, { name: 'Sticker', sku: 'W-N', price: 1 });
  const items = [
    { product_id: a.id, qty: 2 },
    { product_id: b.id, qty: 1 },
    { product_id: ebook.id, qty: 1 },
  ];
  const mixed = await checkoutWith(svc, accountId, 'courier_a', { line_items: items, legacy: undefined });
  const unweighed = await checkoutWith(svc, accountId, 'courier_a', { line_items: [{ product_id: light.id, qty: 3 }], legacy: undefined });

  const preview = async (body: Record<string, unknown>) => {
    const res = await createShipment(svc, key, body, DRY);
    assert.equal(res.status, 200, res.text);
    return res.body.weight_g;
  };
  assert.equal(await preview({ order_id: mixed.id }), 1050, '2 x 300 + 450; the digital item weighs nothing');
  assert.equal(await preview({ order_id: unweighed.id }), 1000, 'no product weights: the default');
  assert.equal(await preview({ order_id: mixed.id, weight_g: 777 }), 777, 'the override');

  const before = await parcelKeys(svc);
  const s = await ship(svc, key, { order_id: mixed.id });
  assert.equal(s.parcel_weight_g, 1050);
  assert.equal((await newParcels(svc, before))[0].weightKg, 1.05);
});

test('content_label (GAPS): line item names joined with ", ", at most 100 characters; legacy orders use product_name', async () => {
  const { op, accountId, key } = await shipTenant(svc);
  const mug = await op.createProduct(accountId, { name: 'Blue Mug', sku: 'CL-1', price: 10 });
  const plate = await op.createProduct(accountId, { name: 'Red Plate', sku: 'CL-2', price: 10 });
  const two = await checkoutWith(svc, accountId, 'courier_a', {
    line_items: [
      { product_id: mug.id, qty: 1 },
      { product_id: plate.id, qty: 2 },
    ],
    legacy: undefined,
  });
  const longName = (c: string) => c.repeat(60);
  const long = await checkoutWith(svc, accountId, 'courier_a', {
    line_items: [
      { product_id: mug.id, qty: 1, name: longName('x') },
      { product_id: plate.id, qty: 1, name: longName('y') },
    ],
    legacy: undefined,
  });
  const legacy = await checkoutWith(svc, accountId, 'courier_a', { legacy: { product_name: 'Tea Set', quantity: 1, unit_price: 20 } });

  const label = async (orderId: string) => {
    const res = await createShipment(svc, key, { order_id: orderId }, DRY);
    assert.equal(res.status, 200, res.text);
    return res.body.content_label;
  };
  assert.equal(await label(two.id), 'Blue Mug, Red Plate');
  const cut = await label(long.id);
  assert.equal(cut.length, 100);
  assert.equal(cut, `${longName('x')}, ${longName('y')}`.slice(0, 100));
  assert.equal(await label(legacy.id), 'Tea Set');
});

test('dry run (X-Merx-Dry-Run 1/true/yes): the full preview, no courier call (works while the courier is down), nothing written', async () => {
  const { accountId, key } = await shipTenant(svc);
  const order = await checkoutWith(svc, accountId, 'courier_a', {}, { courier_office_id: 'OFF-9' });
  const before = await parcelKeys(svc);
  const eventsBefore = (await events(svc, accountId)).length;
  await withMode(svc, 'courier_a', 'down', async () => {
    for (const value of ['1', 'true', 'yes']) {
      const res = await createShipment(svc, key, { order_id: order.id, weight_g: 1200 }, { 'x-merx-dry-run': value });
      assert.equal(res.status, 200, `dry run ${value}: ${res.text}`);
      assert.deepEqual(Object.keys(res.body).sort(), CREATE_PREVIEW_FIELDS);
      assert.deepEqual(res.body, {
        dry_run: true,
        courier: 'courier_a',
        delivery_mode: 'office',
        office_id: 'OFF-9',
        weight_g: 1200,
        cod_amount: 12.5,
        content_label: 'Mug',
        shipment_terms: res.body.shipment_terms,
      });
      for (const [k, v] of Object.entries(DEFAULT_TERMS)) assert.equal(res.body.shipment_terms[k], v);
    }
    const home = await createShipment(svc, key, { order_id: order.id, courier: 'courier_c', delivery_mode: 'home' }, DRY);
    assert.equal(home.status, 200, home.text);
    assert.equal(home.body.courier, 'courier_c');
    assert.equal(home.body.delivery_mode, 'home');
    assert.equal(home.body.office_id, null);
  });
  assert.equal((await newParcels(svc, before)).length, 0, 'no courier was called');
  assert.deepEqual((await orderShipment(key, order.id)).body, { data: null }, 'no shipment written');
  const view = await orderNow(svc, key, order.id);
  assert.equal(view.status, 'new', 'the order did not move');
  assert.equal(view.tracking_number, null);
  assert.equal((await events(svc, accountId)).length, eventsBefore, 'no events');

  // The preview applies the same rules: a disabled courier and a live shipment are refused.
  await putCourier(svc, accountId, 'courier_b', { enabled: false });
  const disabled = assertError(
    await createShipment(svc, key, { order_id: order.id, courier: 'courier_b' }, DRY),
    400,
    'validation_failed',
    'dry run, disabled courier',
  );
  assert.equal(disabled.details.reason, 'courier_not_enabled');
  const s = await ship(svc, key, { order_id: order.id });
  const live = assertError(await createShipment(svc, key, { order_id: order.id }, DRY), 409, 'conflict', 'dry run with a live shipment');
  assertSummary(live.details.shipment, s, 'dry run 409');
});

test('an order with a live shipment gives 409 with details.shipment (its ShipmentSummary) and calls no courier; after cancel a new waybill is allowed and is the newest', async () => {
  const { accountId, key } = await shipTenant(svc);
  const order = await checkoutWith(svc, accountId, 'courier_a');
  const first = await ship(svc, key, { order_id: order.id });
  const before = await parcelKeys(svc);
  for (const body of [{ order_id: order.id }, { order_id: order.id, courier: 'courier_b' }]) {
    const error = assertError(await createShipment(svc, key, body), 409, 'conflict', 'second waybill');
    assertSummary(error.details.shipment, first, '409 details.shipment');
    assert.deepEqual(error.details.shipment, (await orderNow(svc, key, order.id)).shipment, 'the same summary as the order view');
  }
  assert.equal((await newParcels(svc, before)).length, 0, 'the courier was not called');
  assert.equal((await events(svc, accountId, 'shipment.created')).length, 1);

  const cancelled = await cancel(svc, key, first.id);
  assert.equal(cancelled.status, 200, cancelled.text);
  const second = await ship(svc, key, { order_id: order.id, courier: 'courier_b' });
  assert.notEqual(second.id, first.id);
  const newest = await orderShipment(key, order.id);
  assert.equal(newest.status, 200);
  assert.deepEqual(newest.body, { data: second }, 'GET /orders/{id}/shipment is the newest waybill');
  assertSummary((await orderNow(svc, key, order.id)).shipment, second, 'order view summary is the newest waybill');
  assert.equal((await shipmentNow(svc, key, first.id)).status, 'cancelled', 'the older waybill is still readable');
});

test('two simultaneous creations for one order: one waybill, one 409, exactly one parcel at the courier', async () => {
  const { accountId, key } = await shipTenant(svc);
  const order = await checkoutWith(svc, accountId, 'courier_a');
  const before = await parcelKeys(svc);
  const results = await Promise.all([createShipment(svc, key, { order_id: order.id }), createShipment(svc, key, { order_id: order.id })]);
  assert.deepEqual(results.map((r) => r.status).sort(), [201, 409], results.map((r) => r.text).join(' | '));
  assert.equal((await newParcels(svc, before)).length, 1, 'no second (orphan) waybill');
  assert.equal((await events(svc, accountId, 'shipment.created')).length, 1);
});

test('order status rules on creation: confirmed -> processing; processing and shipped keep their status; cancelled, returned, refunded, archived, delivered give 409 kind order_status', async () => {
  const { accountId, key } = await shipTenant(svc);

  const confirmed = await checkoutWith(svc, accountId, 'courier_a');
  await merchantSets(svc, confirmed.id, 'confirmed');
  await ship(svc, key, { order_id: confirmed.id });
  assert.equal((await orderNow(svc, key, confirmed.id)).status, 'processing');
  const moved = (await events(svc, accountId, 'order.status_changed')).filter(
    (e: any) => e.data.order.id === confirmed.id && e.data.source === 'api',
  );
  assert.equal(moved.length, 1);
  assert.equal(moved[0].data.previous_status, 'confirmed');
  assert.equal(moved[0].data.status, 'processing');

  for (const status of ['processing', 'shipped']) {
    const order = await checkoutWith(svc, accountId, 'courier_b');
    await merchantSets(svc, order.id, status);
    const statusEventsBefore = (await events(svc, accountId, 'order.status_changed')).length;
    const s = await ship(svc, key, { order_id: order.id });
    assert.equal(s.status, 'pending');
    assert.equal((await orderNow(svc, key, order.id)).status, status, `${status} keeps its status`);
    assert.equal((await events(svc, accountId, 'order.status_changed')).length, statusEventsBefore, `${status}: no order.status_changed`);
    assert.equal((await events(svc, accountId, 'shipment.created')).filter((e: any) => e.data.order_id === order.id).length, 1);
  }

  for (const status of ['cancelled', 'returned', 'refunded', 'archived', 'delivered']) {
    const order = await checkoutWith(svc, accountId, 'courier_a');
    await merchantSets(svc, order.id, status);
    const before = await parcelKeys(svc);
    const error = assertError(await createShipment(svc, key, { order_id: order.id }), 409, 'conflict', `order ${status}`);
    assert.equal(error.details?.kind, 'order_status', `${status}: details.kind`);
    assertError(await createShipment(svc, key, { order_id: order.id }, DRY), 409, 'conflict', `order ${status}, dry run`);
    assert.equal((await newParcels(svc, before)).length, 0, `${status}: no courier call`);
    assert.equal((await orderNow(svc, key, order.id)).status, status);
    assert.deepEqual((await orderShipment(key, order.id)).body, { data: null });
  }
});

test('create refusals: courier not enabled 400 courier_not_enabled; no courier chosen 400; office without office id 400; unknown fields 400 with details.allowed; bad ids 400; unknown or foreign order 404', async () => {
  const { accountId, key } = await shipTenant(svc);
  const other = await shipTenant(svc);
  const order = await checkoutWith(svc, accountId, 'courier_a');
  const before = await parcelKeys(svc);

  await putCourier(svc, accountId, 'courier_b', { enabled: false });
  const notEnabled = assertError(
    await createShipment(svc, key, { order_id: order.id, courier: 'courier_b' }),
    400,
    'validation_failed',
    'disabled courier',
  );
  assert.equal(notEnabled.details.reason, 'courier_not_enabled');
  const fresh = await freshTenant(svc.url);
  const never = await checkoutWith(svc, fresh.accountId, 'courier_c');
  const neverEnabled = assertError(await createShipment(svc, fresh.key, { order_id: never.id }), 400, 'validation_failed', 'never enabled');
  assert.equal(neverEnabled.details.reason, 'courier_not_enabled');

  const noCourier = await checkoutWith(svc, accountId, null, {}, { courier_delivery_mode: null, courier_office_id: null });
  assertError(await createShipment(svc, key, { order_id: noCourier.id }), 400, 'validation_failed', 'no courier at checkout, none given');
  const home = await checkoutWith(svc, accountId, 'courier_a', {}, { courier_delivery_mode: 'home', courier_office_id: null });
  assertError(
    await createShipment(svc, key, { order_id: home.id, delivery_mode: 'office' }),
    400,
    'validation_failed',
    'office without an office id',
  );

  const unknown = assertError(await createShipment(svc, key, { order_id: order.id, cod_amount: 0 }), 400, 'validation_failed', 'unknown field');
  assert.ok(Array.isArray(unknown.details?.allowed), 'details.allowed lists the accepted fields');
  for (const f of ['order_id', 'courier', 'delivery_mode', 'office_id', 'weight_g', 'dim_cm'])
    assert.ok(unknown.details.allowed.includes(f), `allowed has ${f}`);
  assertError(await createShipment(svc, key, {}), 400, 'validation_failed', 'order_id missing');
  assertError(await createShipment(svc, key, { order_id: 'not-a-uuid' }), 400, 'validation_failed', 'non-UUID order_id');
  assertError(await createShipment(svc, key, { order_id: String(order.number) }), 400, 'validation_failed', 'order number is not an id');
  assertError(await createShipment(svc, key, { order_id: order.id, courier: 'courier_z' }), 400, 'validation_failed', 'unknown courier');
  assertError(await createShipment(svc, key, { order_id: order.id, delivery_mode: 'drone' }), 400, 'validation_failed', 'bad delivery_mode');
  assertError(await createShipment(svc, key, { order_id: order.id, weight_g: 'heavy' }), 400, 'validation_failed', 'bad weight_g');
  assertError(await createShipment(svc, key, { order_id: crypto.randomUUID() }), 404, 'not_found', 'unknown order');
  const foreign = await checkoutWith(svc, other.accountId, 'courier_a');
  assertError(await createShipment(svc, key, { order_id: foreign.id }), 404, 'not_found', 'order of another account');
  assertError(await createShipment(svc, key, { order_id: foreign.id }, DRY), 404, 'not_found', 'order of another account, dry run');

  assert.equal((await newParcels(svc, before)).length, 0, 'no waybill for any refused request');
  assert.equal((await orderNow(svc, key, order.id)).status, 'new');
  assert.equal((await orderNow(svc, other.key, foreign.id)).status, 'new');
});

test('courier refusal and outage on create: 502 courier_error with details.reason and details.detail; nothing written', async () => {
  const { accountId, key } = await shipTenant(svc);
  const order = await checkoutWith(svc, accountId, 'courier_a');
  for (const [mode, reason] of [
    ['refuse', 'refused'],
    ['down', 'timeout'],
  ] as const) {
    const error = await withMode(svc, 'courier_a', mode, async () =>
      assertError(await createShipment(svc, key, { order_id: order.id }), 502, 'courier_error', `courier ${mode}`),
    );
    assert.equal(error.details.reason, reason);
    assert.equal(typeof error.details.detail, 'string');
  }
  assert.deepEqual((await orderShipment(key, order.id)).body, { data: null });
  assert.equal((await orderNow(svc, key, order.id)).status, 'new');
  assert.equal((await events(svc, accountId, 'shipment.created')).length, 0);
  await ship(svc, key, { order_id: order.id });
});

// ---------------------------------------------------------------- read

test('GET /shipments/{id}: {data: Shipment}; unknown or foreign id 404 (never 403); non-UUID 400; GET /orders/{id}/shipment null before any waybill', async () => {
  const { accountId, key } = await shipTenant(svc);
  const other = await shipTenant(svc);
  const order = await checkoutWith(svc, accountId, 'courier_c');
  assert.deepEqual((await orderShipment(key, order.id)).body, { data: null });
  const s = await ship(svc, key, { order_id: order.id });
  const res = await getShipment(svc, key, s.id);
  assert.equal(res.status, 200);
  assert.deepEqual(res.body, { data: s });
  assert.deepEqual((await orderShipment(key, order.id)).body, { data: s });

  assertError(await getShipment(svc, other.key, s.id), 404, 'not_found', 'foreign shipment');
  assertError(await http(svc.url, 'GET', `/api/v1/orders/${order.id}/shipment`, { token: other.key }), 404, 'not_found', 'foreign order shipment');
  assertError(await getShipment(svc, key, crypto.randomUUID()), 404, 'not_found', 'unknown shipment');
  assertError(await getShipment(svc, key, order.id), 404, 'not_found', 'an order id is not a shipment id');
  assertError(await getShipment(svc, key, 'abc'), 400, 'validation_failed', 'non-UUID');
  assertError(await http(svc.url, 'GET', `/api/v1/orders/${crypto.randomUUID()}/shipment`, { token: key }), 404, 'not_found', 'unknown order');
});

test('scopes: a read-only key reads shipments and labels but cannot create or cancel (403 scope_missing shipments:write); an orders-only key cannot read them', async () => {
  const { op, accountId, key } = await shipTenant(svc);
  const readOnly = await op.issueKey(accountId, { preset: 'read_only' });
  const ordersOnly = await op.issueKey(accountId, { scopes: ['orders:read', 'orders:write'] });
  const order = await checkoutWith(svc, accountId, 'courier_a');
  const s = await ship(svc, key, { order_id: order.id });

  assert.equal((await getShipment(svc, readOnly, s.id)).status, 200);
  assertLabel(await fetchLabel(svc, readOnly, s.id), s.tracking_number, 'read-only label');
  assertScopeMissing(await createShipment(svc, readOnly, { order_id: order.id }), 'shipments:write', 'read-only create');
  assertScopeMissing(await createShipment(svc, readOnly, { order_id: order.id }, DRY), 'shipments:write', 'read-only dry run');
  assertScopeMissing(await cancel(svc, readOnly, s.id), 'shipments:write', 'read-only cancel');
  assertScopeMissing(await getShipment(svc, ordersOnly, s.id), 'shipments:read', 'orders-only get');
  assertScopeMissing(await http(svc.url, 'GET', `/api/v1/shipments/${s.id}/label`, { token: ordersOnly }), 'shipments:read', 'orders-only label');
  assertScopeMissing(
    await http(svc.url, 'GET', `/api/v1/orders/${order.id}/shipment`, { token: ordersOnly }),
    'shipments:read',
    'orders-only order shipment',
  );
  assert.equal((await shipmentNow(svc, key, s.id)).status, 'pending');
});

// ---------------------------------------------------------------- label

test('label: a PDF from the courier with Content-Disposition attachment; filename="label_<tracking>.pdf"; fetched on every call, never cached; 502 when the courier fails', async () => {
  const { accountId, key } = await shipTenant(svc);
  const other = await shipTenant(svc);
  const order = await checkoutWith(svc, accountId, 'courier_a');
  const s = await ship(svc, key, { order_id: order.id });
  const first = await fetchLabel(svc, key, s.id);
  assertLabel(first, s.tracking_number, 'first label');
  assert.ok(pdfText(first.bytes).includes('Cash on delivery: 12.50'), 'the courier printed the COD amount');

  // The courier reprints with new content: the next call shows it, so nothing was cached.
  await changeParcel(svc, s.tracking_number, (p) => (p.reference = 'REPRINT-42'));
  const second = await fetchLabel(svc, key, s.id);
  assertLabel(second, s.tracking_number, 'second label');
  assert.ok(pdfText(second.bytes).includes('REPRINT-42'), 'the label came from the courier again');

  const refused = await withMode(svc, 'courier_a', 'refuse', async () => fetchLabel(svc, key, s.id));
  assert.equal(refused.status, 502, 'a cached label would have been served');
  assert.equal(refused.json?.error?.code, 'courier_error');
  assert.equal(refused.json.error.details.reason, 'refused');
  const down = await withMode(svc, 'courier_a', 'down', async () => fetchLabel(svc, key, s.id));
  assert.equal(down.status, 502);
  assert.equal(down.json?.error?.code, 'courier_error');
  assert.equal(down.json.error.details.reason, 'timeout');
  assertLabel(await fetchLabel(svc, key, s.id), s.tracking_number, 'after the outage');

  // The courier no longer knows the waybill: a courier failure, 502.
  const other2 = await checkoutWith(svc, accountId, 'courier_a');
  const forgotten = await ship(svc, key, { order_id: other2.id });
  await forgetParcel(svc, forgotten.tracking_number);
  const lost = await fetchLabel(svc, key, forgotten.id);
  assert.equal(lost.status, 502);
  assert.equal(lost.json?.error?.code, 'courier_error');

  const foreign = await fetchLabel(svc, other.key, s.id);
  assert.equal(foreign.status, 404);
  assert.equal(foreign.json?.error?.code, 'not_found');
  const bad = await fetchLabel(svc, key, 'nope');
  assert.equal(bad.status, 400);
  assert.equal(bad.json?.error?.code, 'validation_failed');
});

// ---------------------------------------------------------------- cancel

test('cancel (courier_a): the courier confirms; result {data, courier_cancelled, courier_confirmed, note}; shipment.cancelled; then 409; dry run tells cancellable', async () => {
  const { accountId, key } = await shipTenant(svc);
  const order = await checkoutWith(svc, accountId, 'courier_a');
  const s = await ship(svc, key, { order_id: order.id });
  const courierEventsBefore = (await parcel(svc, s.tracking_number)).events.length;

  const dry = await cancel(svc, key, s.id, {}, DRY);
  assert.equal(dry.status, 200, dry.text);
  assert.deepEqual(Object.keys(dry.body).sort(), ['cancellable', 'data', 'dry_run']);
  assert.equal(dry.body.dry_run, true);
  assert.equal(dry.body.cancellable, true);
  assert.deepEqual(dry.body.data, s);
  assert.equal((await parcel(svc, s.tracking_number)).events.length, courierEventsBefore, 'dry run: no courier call');
  assert.equal((await shipmentNow(svc, key, s.id)).status, 'pending');
  assert.equal((await events(svc, accountId, 'shipment.cancelled')).length, 0);

  const orderBefore = await orderNow(svc, key, order.id);
  const res = await cancel(svc, key, s.id, { reason: 'customer changed mind' });
  assert.equal(res.status, 200, res.text);
  assert.deepEqual(Object.keys(res.body).sort(), CANCEL_RESULT_FIELDS);
  // The order's shipment summary changed, so did its updated_at: SPEC's cheap poll (since = updated_at >=) finds it.
  const orderAfter = await orderNow(svc, key, order.id);
  assert.equal(orderAfter.shipment.status, 'cancelled');
  assert.ok(Date.parse(orderAfter.updated_at) > Date.parse(orderBefore.updated_at), 'updated_at moved with the shipment summary');
  const polled = await http(svc.url, 'GET', `/api/v1/orders?since=${encodeURIComponent(orderAfter.updated_at)}`, { token: key });
  assert.ok(
    polled.body.data.some((o: { id: string }) => o.id === order.id),
    'a since poll from the change finds the order',
  );
  assertShipmentView(res.body.data, 'cancelled');
  assert.equal(res.body.data.status, 'cancelled');
  assert.equal(res.body.courier_cancelled, true);
  assert.equal(res.body.courier_confirmed, true);
  assert.equal(res.body.note, null);
  const courierSide = (await parcel(svc, s.tracking_number)).events;
  assert.equal(courierSide[courierSide.length - 1].code, 'CANCELLED', 'the courier recorded the cancellation');
  assert.deepEqual(await shipmentNow(svc, key, s.id), res.body.data);

  const cancelled = await events(svc, accountId, 'shipment.cancelled');
  assert.equal(cancelled.length, 1);
  assert.deepEqual(Object.keys(cancelled[0].data).sort(), ['courier_cancelled', 'courier_confirmed', 'order_id', 'shipment', 'source']);
  assert.deepEqual(cancelled[0].data.shipment, res.body.data);
  assert.equal(cancelled[0].data.order_id, order.id);
  assert.equal(cancelled[0].data.courier_cancelled, true);
  assert.equal(cancelled[0].data.courier_confirmed, true);
  assert.equal(cancelled[0].data.source, 'api');

  assertError(await cancel(svc, key, s.id), 409, 'conflict', 'cancel twice');
  const dryAgain = await cancel(svc, key, s.id, {}, DRY);
  assert.equal(dryAgain.status, 200);
  assert.equal(dryAgain.body.cancellable, false);
  assert.equal((await events(svc, accountId, 'shipment.cancelled')).length, 1);
  assert.equal((await orderNow(svc, key, order.id)).status, 'processing', 'a processing order keeps its status');
});

test('cancel refusals: unknown body field 400; non-UUID 400; unknown or foreign shipment 404; the courier refusing or not answering is 502 and the waybill stays live', async () => {
  const { accountId, key } = await shipTenant(svc);
  const other = await shipTenant(svc);
  const order = await checkoutWith(svc, accountId, 'courier_b');
  const s = await ship(svc, key, { order_id: order.id });
  const unknown = assertError(await cancel(svc, key, s.id, { why: 'x' }), 400, 'validation_failed', 'unknown field');
  assert.ok(Array.isArray(unknown.details?.allowed) && unknown.details.allowed.includes('reason'));
  assertError(await cancel(svc, key, 'abc'), 400, 'validation_failed', 'non-UUID');
  assertError(await cancel(svc, key, crypto.randomUUID()), 404, 'not_found', 'unknown');
  assertError(await cancel(svc, other.key, s.id), 404, 'not_found', 'foreign');
  assertError(await cancel(svc, other.key, s.id, {}, DRY), 404, 'not_found', 'foreign dry run');
  for (const [mode, reason] of [
    ['refuse', 'refused'],
    ['down', 'timeout'],
  ] as const) {
    const error = await withMode(svc, 'courier_b', mode, async () =>
      assertError(await cancel(svc, key, s.id), 502, 'courier_error', `cancel, courier ${mode}`),
    );
    assert.equal(error.details.reason, reason);
    assert.equal((await shipmentNow(svc, key, s.id)).status, 'pending', `${mode}: not cancelled`);
  }
  assert.equal((await events(svc, accountId, 'shipment.cancelled')).length, 0);
  const ok = await cancel(svc, key, s.id);
  assert.equal(ok.status, 200, ok.text);
});

test('cancelling the only live waybill of a shipped order moves the order back to processing (order.status_changed); a new waybill can then be made', async () => {
  const { accountId, key } = await shipTenant(svc);
  const order = await checkoutWith(svc, accountId, 'courier_a');
  const s = await ship(svc, key, { order_id: order.id });
  await merchantSets(svc, order.id, 'shipped');
  const res = await cancel(svc, key, s.id);
  assert.equal(res.status, 200, res.text);
  assert.equal((await orderNow(svc, key, order.id)).status, 'processing');
  const back = (await events(svc, accountId, 'order.status_changed')).filter((e: any) => e.data.previous_status === 'shipped');
  assert.equal(back.length, 1);
  assert.equal(back[0].data.status, 'processing');
  assert.equal(back[0].data.order.status, 'processing');
  await ship(svc, key, { order_id: order.id });
});

test('two simultaneous cancels of one waybill: one 200, one 409; the courier is asked once; one shipment.cancelled', async () => {
  const { accountId, key } = await shipTenant(svc);
  const order = await checkoutWith(svc, accountId, 'courier_a');
  const s = await ship(svc, key, { order_id: order.id });
  const results = await Promise.all([cancel(svc, key, s.id), cancel(svc, key, s.id)]);
  assert.deepEqual(results.map((r) => r.status).sort(), [200, 409], results.map((r) => r.text).join(' | '));
  assert.equal((await parcel(svc, s.tracking_number)).events.filter((e) => e.code === 'CANCELLED').length, 1);
  assert.equal((await events(svc, accountId, 'shipment.cancelled')).length, 1);
});

// ---------------------------------------------------------------- MCP

test('MCP tools/list: get_shipment, create_shipment and cancel_shipment by scope; no label tool', async () => {
  const { op, accountId, key } = await shipTenant(svc);
  const readOnly = await op.issueKey(accountId, { preset: 'read_only' });
  const names = async (k: string) => {
    const res = await rpc(svc.url, k, request('tools/list'));
    assert.equal(res.status, 200, res.text);
    return res.body.result.tools.map((t: any) => t.name) as string[];
  };
  const all = await names(key);
  for (const t of ['get_shipment', 'create_shipment', 'cancel_shipment']) assert.ok(all.includes(t), `fulfilment key sees ${t}`);
  for (const t of ['get_shipment_label', 'get_shipment_by_id', 'get_order_shipment']) assert.ok(!all.includes(t), `${t} is not a tool (SPEC MCP)`);
  const ro = await names(readOnly);
  assert.ok(ro.includes('get_shipment'));
  assert.ok(!ro.includes('create_shipment') && !ro.includes('cancel_shipment'));
  assertRefusal(await callTool(svc.url, readOnly, 'create_shipment', { order_id: crypto.randomUUID() }), 'SCOPE');
});

test('MCP get_shipment: by id and by order_id (newest, or {data: null}); neither or both refused; unknown or foreign NOT_FOUND', async () => {
  const { accountId, key } = await shipTenant(svc);
  const other = await shipTenant(svc);
  const order = await checkoutWith(svc, accountId, 'courier_b');
  const bare = await checkoutWith(svc, accountId, 'courier_b');
  const s = await ship(svc, key, { order_id: order.id });

  const byId = await callTool(svc.url, key, 'get_shipment', { id: s.id });
  assert.equal(byId.isError, false);
  assert.deepEqual(byId.structuredContent, (await getShipment(svc, key, s.id)).body, 'same JSON as REST');
  const byOrder = await callTool(svc.url, key, 'get_shipment', { order_id: order.id });
  assert.equal(byOrder.isError, false);
  assert.deepEqual(byOrder.structuredContent, (await orderShipment(key, order.id)).body);
  assert.deepEqual((await callTool(svc.url, key, 'get_shipment', { order_id: bare.id })).structuredContent, { data: null });

  for (const args of [{}, { id: s.id, order_id: order.id }]) {
    const res = await rpc(svc.url, key, toolCall('get_shipment', args));
    assert.equal(res.status, 200, res.text);
    if (res.body.error) assert.equal(res.body.error.code, -32602, `${JSON.stringify(args)}: invalid params`);
    else assertRefusal(res.body.result, 'VALIDATION_FAILED');
  }
  assert.equal((await callToolError(svc.url, key, 'get_shipment', { id: 'nope' })).code, -32602, 'non-UUID id');
  assertRefusal(await callTool(svc.url, key, 'get_shipment', { id: crypto.randomUUID() }), 'NOT_FOUND');
  assertRefusal(await callTool(svc.url, other.key, 'get_shipment', { id: s.id }), 'NOT_FOUND');
  assertRefusal(await callTool(svc.url, other.key, 'get_shipment', { order_id: order.id }), 'NOT_FOUND');
});

test('MCP create_shipment: dry_run previews like REST without a courier call; a real call creates; a second is CONFLICT; a refusing courier is COURIER_ERROR', async () => {
  const { accountId, key } = await shipTenant(svc);
  const order = await checkoutWith(svc, accountId, 'courier_c');
  const before = await parcelKeys(svc);
  const dry = await callTool(svc.url, key, 'create_shipment', { order_id: order.id, dry_run: true });
  assert.equal(dry.isError, false);
  assert.deepEqual(dry.structuredContent, (await createShipment(svc, key, { order_id: order.id }, DRY)).body, 'same preview as REST');
  assert.equal(dry.structuredContent.dry_run, true);
  assert.equal((await newParcels(svc, before)).length, 0);
  assert.deepEqual((await orderShipment(key, order.id)).body, { data: null });

  const created = await callTool(svc.url, key, 'create_shipment', { order_id: order.id, weight_g: 640 });
  assert.equal(created.isError, false, JSON.stringify(created.structuredContent));
  assert.deepEqual(Object.keys(created.structuredContent), ['data']);
  assertShipmentView(created.structuredContent.data, 'MCP created');
  assert.equal(created.structuredContent.data.parcel_weight_g, 640);
  assert.deepEqual((await orderShipment(key, order.id)).body, created.structuredContent);
  assert.equal((await events(svc, accountId, 'shipment.created')).length, 1);

  assertRefusal(await callTool(svc.url, key, 'create_shipment', { order_id: order.id }), 'CONFLICT');
  assert.equal((await callToolError(svc.url, key, 'create_shipment', { order_id: order.id, surprise: 1 })).code, -32602, 'unknown argument');
  const o2 = await checkoutWith(svc, accountId, 'courier_c');
  await withMode(svc, 'courier_c', 'refuse', async () => {
    assertRefusal(await callTool(svc.url, key, 'create_shipment', { order_id: o2.id }), 'COURIER_ERROR');
  });
  assertRefusal(await callTool(svc.url, key, 'create_shipment', { order_id: crypto.randomUUID() }), 'NOT_FOUND');
});

test('MCP cancel_shipment: dry_run says cancellable and changes nothing; a real call cancels with the courier flags; again is CONFLICT', async () => {
  const { accountId, key } = await shipTenant(svc);
  const order = await checkoutWith(svc, accountId, 'courier_b');
  const s = await ship(svc, key, { order_id: order.id });
  const dry = await callTool(svc.url, key, 'cancel_shipment', { id: s.id, dry_run: true });
  assert.equal(dry.isError, false);
  assert.deepEqual(dry.structuredContent, { dry_run: true, data: s, cancellable: true });
  assert.equal((await shipmentNow(svc, key, s.id)).status, 'pending');

  const res = await callTool(svc.url, key, 'cancel_shipment', { id: s.id, reason: 'duplicate order' });
  assert.equal(res.isError, false, JSON.stringify(res.structuredContent));
  assert.deepEqual(Object.keys(res.structuredContent).sort(), CANCEL_RESULT_FIELDS);
  assert.equal(res.structuredContent.data.status, 'cancelled');
  assert.equal(res.structuredContent.courier_cancelled, true);
  assert.equal(res.structuredContent.courier_confirmed, true);
  const courierSide = (await parcel(svc, s.tracking_number)).events;
  assert.equal(courierSide[courierSide.length - 1].code, 90, 'courier_b recorded its cancelled code');
  assert.equal((await events(svc, accountId, 'shipment.cancelled')).length, 1);

  assertRefusal(await callTool(svc.url, key, 'cancel_shipment', { id: s.id }), 'CONFLICT');
  const again = await callTool(svc.url, key, 'cancel_shipment', { id: s.id, dry_run: true });
  assert.equal(again.structuredContent.cancellable, false);
  assertRefusal(await callTool(svc.url, key, 'cancel_shipment', { id: crypto.randomUUID() }), 'NOT_FOUND');
});

test('the summary in the order list is the same ShipmentSummary as on the order and the shipment', async () => {
  const { accountId, key } = await shipTenant(svc);
  const order = await checkoutWith(svc, accountId, 'courier_a');
  const plain = await checkoutWith(svc, accountId, 'courier_a');
  const s = await ship(svc, key, { order_id: order.id });
  const list = await http(svc.url, 'GET', '/api/v1/orders', { token: key });
  assert.equal(list.status, 200);
  const listed = list.body.data.find((o: any) => o.id === order.id);
  assert.deepEqual(listed.shipment, summaryOf(s));
  assert.equal(list.body.data.find((o: any) => o.id === plain.id).shipment, null, 'no waybill: shipment null');
});

test('JSON answers of the shipment routes are labelled Content-Type application/json: dry-run previews and error bodies (409, 404, 400, 502)', async () => {
  const { accountId, key } = await shipTenant(svc);
  const order = await checkoutWith(svc, accountId, 'courier_a');
  const preview = await createShipment(svc, key, { order_id: order.id }, DRY);
  const s = await ship(svc, key, { order_id: order.id });
  const answers: Record<string, { status: number; headers: Headers }> = {
    'get 200': await getShipment(svc, key, s.id),
    'create dry run 200': preview,
    'cancel dry run 200': await cancel(svc, key, s.id, {}, DRY),
    'create 409': await createShipment(svc, key, { order_id: order.id }),
    'get 404': await getShipment(svc, key, crypto.randomUUID()),
    'get 400': await getShipment(svc, key, 'nope'),
    'label 502': await withMode(svc, 'courier_a', 'refuse', async () => fetchLabel(svc, key, s.id)),
  };
  const unlabelled = Object.entries(answers)
    .filter(([, res]) => !/^application\/json/.test(res.headers.get('content-type') ?? ''))
    .map(([name, res]) => `${name} (got ${res.status}, content-type ${res.headers.get('content-type')})`);
  assert.deepEqual(unlabelled, [], 'JSON bodies without a JSON content type');
});
