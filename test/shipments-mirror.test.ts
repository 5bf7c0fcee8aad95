// Every row of SPEC's "Shipment status" table, for each courier (poll for
// courier_a/b, push for courier_c), and the courier rows of the "Order status"
// table: shipment.status_changed with source courier on each new normalised
// status; the order mirror (GAPS "Courier mirror") for delivered, returned and
// cancelled with order.status_changed source courier and the stock effects;
// refused, picked_up and in_transit leave the order alone; repeated and
// out-of-order courier reports are idempotent. Then the order list filters
// courier and shipment_status and the Order view's shipment summary on real
// waybills.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService, http, type TestService } from './helpers/harness.ts';
import { assertError, assertSameSet, listIds, listOrders } from './helpers/contract.ts';
import {
  DRY,
  RAW_CODE,
  SHIPMENT_STATUSES,
  SLUGS,
  TERMINAL,
  type Slug,
  assertSummary,
  cancel,
  changeParcel,
  checkoutWith,
  courierEvent,
  courierReports,
  events,
  merchantSets,
  movements,
  orderNow,
  parcel,
  poll,
  push,
  pushTokenOf,
  ship,
  shipTenant,
  shipmentNow,
  stockOf,
} from './helpers/shipments.ts';

let svc: TestService;
before(async () => {
  svc = await startTestService({ COURIER_TIMEOUT_MS: '1000' });
});
after(async () => {
  await svc.close();
});

type Tenant = Awaited<ReturnType<typeof shipTenant>>;
/** GAPS Courier mirror: the courier statuses that move the order. */
const ORDER_MIRROR: Record<string, string> = { delivered: 'delivered', returned: 'returned', cancelled: 'cancelled' };

/** A tracked product (stock 10) and a cod order of 2 of it with a waybill of `slug`; stock is 8 after checkout. */
async function stockedShipment(t: Tenant, slug: Slug) {
  const product = await t.op.createProduct(t.accountId, { name: 'Kettle', sku: `K-${slug}`, price: 20, stock_quantity: 10 });
  const order = await checkoutWith(svc, t.accountId, slug, { line_items: [{ product_id: product.id, qty: 2 }], legacy: undefined });
  assert.equal(await stockOf(svc, t.key, product.id), 8, 'checkout sold 2');
  const shipment = await ship(svc, t.key, { order_id: order.id });
  return { product, order, shipment };
}

const statusChanges = async (accountId: string, shipmentId: string) =>
  (await events(svc, accountId, 'shipment.status_changed')).filter((e: any) => e.data.shipment.id === shipmentId);
const orderChanges = async (accountId: string, orderId: string, source?: string) =>
  (await events(svc, accountId, 'order.status_changed')).filter((e: any) => e.data.order.id === orderId && (!source || e.data.source === source));

/** Reports `status` from the courier and checks the state-table row: the shipment moves and one shipment.status_changed (source courier) says so. */
async function reportAndExpectMove(t: Tenant, shipment: any, status: string, wording: { code?: string | number; label?: string } = {}) {
  const before = await shipmentNow(svc, t.key, shipment.id);
  const eventsBefore = (await statusChanges(t.accountId, shipment.id)).length;
  await courierReports(svc, shipment, status, wording);
  const after = await shipmentNow(svc, t.key, shipment.id);
  assert.equal(after.status, status, `${shipment.courier_slug}: ${before.status} -> ${status}`);
  const raw = after.status_events.find((e: any) => String(e.code) === String(RAW_CODE[shipment.courier_slug as Slug][status]));
  assert.ok(raw, `raw ${shipment.courier_slug} event for ${status} kept: ${JSON.stringify(after.status_events)}`);
  assert.equal(after.last_status_label, raw.label);
  const changes = await statusChanges(t.accountId, shipment.id);
  assert.equal(changes.length, eventsBefore + 1, `one shipment.status_changed for ${status}`);
  const last = changes[changes.length - 1].data;
  assert.deepEqual(Object.keys(last).sort(), ['event', 'previous_status', 'shipment', 'source', 'status']);
  assert.equal(last.source, 'courier');
  assert.equal(last.previous_status, before.status);
  assert.equal(last.status, status);
  assert.deepEqual(last.shipment, after, 'the event carries the Shipment view');
  assert.deepEqual(last.event, { at: raw.at, code: raw.code, label: raw.label }, 'the raw courier event');
  return after;
}

for (const slug of SLUGS) {
  const via = slug === 'courier_c' ? 'push' : 'poll';

  test(`${slug} (${via}): (none) -> pending on create; pending -> picked_up -> in_transit leave the order processing; -> delivered mirrors the order to delivered (source courier)`, async () => {
    const t = await shipTenant(svc);
    const order = await checkoutWith(svc, t.accountId, slug);
    const s = await ship(svc, t.key, { order_id: order.id });
    assert.equal(s.status, 'pending');
    assert.equal((await events(svc, t.accountId, 'shipment.created')).length, 1);
    await reportAndExpectMove(t, s, 'picked_up');
    await reportAndExpectMove(t, s, 'in_transit');
    assert.equal((await orderNow(svc, t.key, order.id)).status, 'processing', 'picked_up and in_transit change no order status');
    assert.equal((await orderChanges(t.accountId, order.id, 'courier')).length, 0);

    const delivered = await reportAndExpectMove(t, s, 'delivered');
    const view = await orderNow(svc, t.key, order.id);
    assert.equal(view.status, 'delivered');
    assertSummary(view.shipment, delivered, 'order view after delivery');
    const mirrored = await orderChanges(t.accountId, order.id, 'courier');
    assert.equal(mirrored.length, 1);
    assert.equal(mirrored[0].data.previous_status, 'processing');
    assert.equal(mirrored[0].data.status, 'delivered');
    assert.equal(mirrored[0].data.order.status, 'delivered');
    assert.deepEqual(mirrored[0].data.order.shipment, view.shipment);
  });

  test(`${slug} (${via}): pending -> refused changes no order status; a refused waybill does not block a new one`, async () => {
    const t = await shipTenant(svc);
    const order = await checkoutWith(svc, t.accountId, slug);
    const s = await ship(svc, t.key, { order_id: order.id });
    await reportAndExpectMove(t, s, 'refused');
    assert.equal((await orderNow(svc, t.key, order.id)).status, 'processing', 'GAPS: refused changes no order status');
    assert.equal((await orderChanges(t.accountId, order.id, 'courier')).length, 0);
    const next = await ship(svc, t.key, { order_id: order.id });
    assert.equal(next.status, 'pending');
    assertSummary((await orderNow(svc, t.key, order.id)).shipment, next, 'newest waybill');
  });

  test(`${slug} (${via}): in_transit -> returned mirrors the order to returned (source courier) and restocks with one return movement`, async () => {
    const t = await shipTenant(svc);
    const { product, order, shipment } = await stockedShipment(t, slug);
    await reportAndExpectMove(t, shipment, 'in_transit');
    await reportAndExpectMove(t, shipment, 'returned');
    assert.equal((await orderNow(svc, t.key, order.id)).status, 'returned');
    const [mirrored] = await orderChanges(t.accountId, order.id, 'courier');
    assert.equal(mirrored.data.previous_status, 'processing');
    assert.equal(mirrored.data.status, 'returned');
    const ledger = await movements(svc, t.key, order.id);
    assert.deepEqual(ledger.map((m) => [m.type, m.qty]).sort(), [
      ['return', 2],
      ['sale', -2],
    ]);
    assert.equal(ledger.find((m) => m.type === 'return').product_id, product.id);
    assert.equal(await stockOf(svc, t.key, product.id), 10, 'stock is back');

    // The courier repeats itself: nothing happens twice.
    if (slug === 'courier_c') {
      const token = await pushTokenOf(svc, shipment.tracking_number);
      const last = (await parcel(svc, shipment.tracking_number)).events.at(-1)!;
      const res = await push(svc, token, {
        barcode: shipment.tracking_number,
        events: [{ occurred_at: last.at, state: last.code, note: last.label }],
      });
      assert.equal(res.status, 200, res.text);
    } else {
      await poll(svc);
    }
    await courierReports(svc, shipment, 'returned');
    assert.equal((await movements(svc, t.key, order.id)).length, 2, 'one return movement, however often the courier reports it');
    assert.equal(await stockOf(svc, t.key, product.id), 10);
    assert.equal((await orderChanges(t.accountId, order.id, 'courier')).length, 1);
    assert.equal((await statusChanges(t.accountId, shipment.id)).length, 2);
  });

  test(`${slug} (${via}): picked_up -> cancelled by the courier mirrors the order to cancelled (source courier) and releases the stock`, async () => {
    const t = await shipTenant(svc);
    const { product, order, shipment } = await stockedShipment(t, slug);
    await reportAndExpectMove(t, shipment, 'picked_up');
    await reportAndExpectMove(t, shipment, 'cancelled');
    assert.equal((await orderNow(svc, t.key, order.id)).status, 'cancelled');
    const [mirrored] = await orderChanges(t.accountId, order.id, 'courier');
    assert.equal(mirrored.data.status, 'cancelled');
    assert.equal(mirrored.data.previous_status, 'processing');
    const ledger = await movements(svc, t.key, order.id);
    assert.deepEqual(ledger.map((m) => [m.type, m.qty]).sort(), [
      ['release', 2],
      ['sale', -2],
    ]);
    assert.equal(await stockOf(svc, t.key, product.id), 10);
  });

  test(`${slug} (${via}): delivered keeps the stock sold; a courier report after a terminal status (delivered, refused) changes nothing`, async () => {
    const t = await shipTenant(svc);
    const { product, order, shipment } = await stockedShipment(t, slug);
    await reportAndExpectMove(t, shipment, 'delivered');
    assert.equal(await stockOf(svc, t.key, product.id), 8);
    await courierReports(svc, shipment, 'returned');
    assert.equal((await shipmentNow(svc, t.key, shipment.id)).status, 'delivered', 'SPEC: only a non-terminal shipment follows the courier');
    assert.equal((await orderNow(svc, t.key, order.id)).status, 'delivered');
    assert.equal(await stockOf(svc, t.key, product.id), 8);
    assert.equal((await statusChanges(t.accountId, shipment.id)).length, 1);

    const other = await checkoutWith(svc, t.accountId, slug);
    const refused = await ship(svc, t.key, { order_id: other.id });
    await reportAndExpectMove(t, refused, 'refused');
    await courierReports(svc, refused, 'in_transit');
    assert.equal((await shipmentNow(svc, t.key, refused.id)).status, 'refused');
    assert.equal((await statusChanges(t.accountId, refused.id)).length, 1);
  });

  test(`${slug}: cancel moves pending, picked_up and in_transit to cancelled; cancelled, delivered, refused and returned give 409 (dry run: cancellable false)`, async () => {
    const t = await shipTenant(svc);
    for (const from of ['pending', 'picked_up', 'in_transit']) {
      const order = await checkoutWith(svc, t.accountId, slug);
      const s = await ship(svc, t.key, { order_id: order.id });
      if (from !== 'pending') await reportAndExpectMove(t, s, from);
      const dry = await cancel(svc, t.key, s.id, {}, DRY);
      assert.equal(dry.body.cancellable, true, `${from} is cancellable`);
      const res = await cancel(svc, t.key, s.id);
      assert.equal(res.status, 200, `${from}: ${res.text}`);
      assert.equal(res.body.data.status, 'cancelled');
      const expectConfirmed = slug !== 'courier_c';
      assert.equal(res.body.courier_cancelled, expectConfirmed);
      assert.equal(res.body.courier_confirmed, expectConfirmed);
      assert.equal(typeof res.body.note, expectConfirmed ? 'object' : 'string');
      const [event] = (await events(svc, t.accountId, 'shipment.cancelled')).filter((e: any) => e.data.shipment.id === s.id);
      assert.ok(event, `${from}: shipment.cancelled`);
      assert.equal(event.data.courier_cancelled, expectConfirmed);
      assert.equal(event.data.courier_confirmed, expectConfirmed);
      if (expectConfirmed)
        assert.equal((await parcel(svc, s.tracking_number)).events.at(-1)!.code, RAW_CODE[slug].cancelled, `${from}: the courier confirmed`);
      assert.equal((await orderNow(svc, t.key, order.id)).status, 'processing', 'a processing order keeps its status');
    }

    for (const terminal of TERMINAL) {
      const order = await checkoutWith(svc, t.accountId, slug);
      const s = await ship(svc, t.key, { order_id: order.id });
      if (terminal === 'cancelled') assert.equal((await cancel(svc, t.key, s.id)).status, 200);
      else await reportAndExpectMove(t, s, terminal);
      const before = await shipmentNow(svc, t.key, s.id);
      const courierEvents = (await parcel(svc, s.tracking_number)).events.length;
      const dry = await cancel(svc, t.key, s.id, {}, DRY);
      assert.equal(dry.status, 200, dry.text);
      assert.equal(dry.body.cancellable, false, `${terminal} is not cancellable`);
      assertError(await cancel(svc, t.key, s.id), 409, 'conflict', `cancel a ${terminal} shipment`);
      assert.deepEqual(await shipmentNow(svc, t.key, s.id), before, `${terminal}: unchanged`);
      assert.equal((await parcel(svc, s.tracking_number)).events.length, courierEvents, `${terminal}: no courier call`);
    }
  });

  test(`${slug} (${via}): repeated reports change nothing twice; an older report arriving after a newer one does not move the status back`, async () => {
    const t = await shipTenant(svc);
    const order = await checkoutWith(svc, t.accountId, slug);
    const s = await ship(svc, t.key, { order_id: order.id });
    const transit = await reportAndExpectMove(t, s, 'in_transit');

    // The same status again (and, for the polled couriers, the same history at every poll).
    await courierReports(svc, s, 'in_transit');
    if (slug !== 'courier_c') await poll(svc);
    const repeated = await shipmentNow(svc, t.key, s.id);
    assert.equal(repeated.status, 'in_transit');
    assert.ok(repeated.last_status_at >= transit.last_status_at, 'last_status_at follows the newest courier report');
    assert.equal((await statusChanges(t.accountId, s.id)).length, 1, 'no second event for the same normalised status');

    // An older event, reported late.
    const newestAt = Date.parse(transit.last_status_at);
    const olderAt = new Date(newestAt - 60_000).toISOString();
    if (slug === 'courier_c') {
      const res = await push(svc, await pushTokenOf(svc, s.tracking_number), {
        barcode: s.tracking_number,
        events: [{ occurred_at: olderAt, state: RAW_CODE.courier_c.picked_up, note: 'Collected (late report)' }],
      });
      assert.equal(res.status, 200, res.text);
    } else {
      await changeParcel(svc, s.tracking_number, (p) =>
        p.events.push({ at: olderAt, code: RAW_CODE[slug].picked_up, label: 'Collected (late report)' }),
      );
      await poll(svc);
    }
    const after = await shipmentNow(svc, t.key, s.id);
    assert.equal(after.status, 'in_transit', 'the newer status stands');
    assert.equal(after.last_status_at, repeated.last_status_at, 'a late report does not move last_status_at back');
    assert.ok(
      after.status_events.some((e: any) => e.label === 'Collected (late report)'),
      'the late raw event is still kept',
    );
    assert.equal((await statusChanges(t.accountId, s.id)).length, 1, 'no event for the late report');
    assert.equal((await orderNow(svc, t.key, order.id)).status, 'processing');
    if (slug !== 'courier_c') {
      await poll(svc);
      const again = await shipmentNow(svc, t.key, s.id);
      assert.equal(again.status_events.length, after.status_events.length, 'polling the same history again adds no raw events');
    }
  });
}

for (const slug of SLUGS) {
  test(`${slug} (${slug === 'courier_c' ? 'push' : 'poll'}): an operator event with its own code and label moves a pending waybill to each status at once, in the courier's own vocabulary`, async () => {
    const t = await shipTenant(svc);
    for (const status of SHIPMENT_STATUSES.filter((s) => s !== 'pending')) {
      const order = await checkoutWith(svc, t.accountId, slug);
      const s = await ship(svc, t.key, { order_id: order.id });
      const label = `Parcel ${status} (operator wording)`;
      const after = await reportAndExpectMove(t, s, status, { code: 'IT1', label });
      assert.equal(after.last_status_label, label, 'the label is the courier event text');
      assert.ok(!after.status_events.some((e: any) => e.code === 'IT1'), 'the operator code is never taken for the courier code');
      const mirrored = ORDER_MIRROR[status];
      assert.equal((await orderNow(svc, t.key, order.id)).status, mirrored ?? 'processing', `order after ${status}`);
    }
  });
}

for (const slug of SLUGS) {
  test(`${slug}: several new statuses in one report (one poll, or one push body) give one shipment.status_changed per new normalised status, in the courier's time order`, async () => {
    const t = await shipTenant(svc);
    const order = await checkoutWith(svc, t.accountId, slug);
    const s = await ship(svc, t.key, { order_id: order.id });
    if (slug === 'courier_c') {
      const base = Date.now();
      const res = await push(svc, await pushTokenOf(svc, s.tracking_number), {
        barcode: s.tracking_number,
        events: [
          { occurred_at: new Date(base + 1000).toISOString(), state: 'collected', note: 'Collected' },
          { occurred_at: new Date(base + 2000).toISOString(), state: 'on_the_way', note: 'On the way' },
        ],
      });
      assert.equal(res.status, 200, res.text);
    } else {
      // Both happen between two polls (the poll runs every 15 minutes).
      const base = Date.now() + 1000;
      await changeParcel(svc, s.tracking_number, (p) =>
        p.events.push(
          { at: new Date(base).toISOString(), code: RAW_CODE[slug].picked_up, label: 'Collected' },
          { at: new Date(base + 5000).toISOString(), code: RAW_CODE[slug].in_transit, label: 'On the way' },
        ),
      );
      await poll(svc);
    }
    assert.equal((await shipmentNow(svc, t.key, s.id)).status, 'in_transit');
    const changes = (await statusChanges(t.accountId, s.id)).map((e: any) => [e.data.previous_status, e.data.status]);
    assert.deepEqual(
      changes,
      [
        ['pending', 'picked_up'],
        ['picked_up', 'in_transit'],
      ],
      'issue: shipment.status_changed on each new normalised status',
    );
  });
}

test('courier_c: the very same push twice is applied once (one raw event, one status_changed); a late push of an older state keeps the newer one', async () => {
  const t = await shipTenant(svc);
  const order = await checkoutWith(svc, t.accountId, 'courier_c');
  const s = await ship(svc, t.key, { order_id: order.id });
  const token = await pushTokenOf(svc, s.tracking_number);
  const base = Date.now();
  const newer = {
    barcode: s.tracking_number,
    events: [{ occurred_at: new Date(base + 2000).toISOString(), state: 'on_the_way', note: 'Left the depot' }],
  };
  for (let i = 0; i < 2; i++) {
    const res = await push(svc, token, newer);
    assert.equal(res.status, 200, res.text);
  }
  let now = await shipmentNow(svc, t.key, s.id);
  assert.equal(now.status, 'in_transit');
  assert.equal(now.status_events.filter((e: any) => e.code === 'on_the_way').length, 1, 'the repeated push is stored once');
  assert.equal((await statusChanges(t.accountId, s.id)).length, 1);

  // Same event, same instant written with an offset: still the same event.
  const local = new Date(base + 2000 + 2 * 3600_000).toISOString().slice(0, 23) + '+02:00';
  assert.equal(Date.parse(local), base + 2000);
  assert.equal((await push(svc, token, { ...newer, events: [{ ...newer.events[0], occurred_at: local }] })).status, 200);
  now = await shipmentNow(svc, t.key, s.id);
  assert.equal(now.status_events.filter((e: any) => e.code === 'on_the_way').length, 1, 'the same instant in another offset is the same event');

  const older = { barcode: s.tracking_number, events: [{ occurred_at: new Date(base + 1000).toISOString(), state: 'collected', note: 'Collected' }] };
  assert.equal((await push(svc, token, older)).status, 200);
  now = await shipmentNow(svc, t.key, s.id);
  assert.equal(now.status, 'in_transit');
  assert.equal(now.last_status_label, 'Left the depot');
  assert.equal((await statusChanges(t.accountId, s.id)).length, 1);

  // Two events in one push, out of order inside the body: the newest by time wins.
  const both = {
    barcode: s.tracking_number,
    events: [
      { occurred_at: new Date(base + 4000).toISOString(), state: 'handed_over', note: 'Delivered' },
      { occurred_at: new Date(base + 3000).toISOString(), state: 'on_the_way', note: 'Out for delivery' },
    ],
  };
  assert.equal((await push(svc, token, both)).status, 200);
  now = await shipmentNow(svc, t.key, s.id);
  assert.equal(now.status, 'delivered');
  assert.equal((await orderNow(svc, t.key, order.id)).status, 'delivered');
  assert.equal((await orderChanges(t.accountId, order.id, 'courier')).length, 1);
});

test('GAPS live: a delivered waybill still blocks a new one (409 details.shipment); cancelled, refused and returned ones do not', async () => {
  const t = await shipTenant(svc);
  const delivered = await checkoutWith(svc, t.accountId, 'courier_c');
  const s = await ship(svc, t.key, { order_id: delivered.id });
  const done = await reportAndExpectMove(t, s, 'delivered');
  const closed = assertError(await ship409(t, delivered.id), 409, 'conflict', 'delivered order');
  assert.equal(closed.details.kind, 'order_status');
  await merchantSets(svc, delivered.id, 'processing');
  const live = assertError(await ship409(t, delivered.id), 409, 'conflict', 'delivered waybill is live');
  assertSummary(live.details.shipment, done, 'details.shipment');

  const returned = await checkoutWith(svc, t.accountId, 'courier_a');
  const r = await ship(svc, t.key, { order_id: returned.id });
  await reportAndExpectMove(t, r, 'returned');
  assert.equal((await orderNow(svc, t.key, returned.id)).status, 'returned');
  await merchantSets(svc, returned.id, 'processing');
  assert.equal((await ship(svc, t.key, { order_id: returned.id })).status, 'pending', 'a returned waybill does not block');
});

const ship409 = (t: Tenant, orderId: string) => http(svc.url, 'POST', '/api/v1/shipments', { token: t.key, body: { order_id: orderId } });

// ---------------------------------------------------------------- lists and the order view

test('GET /orders courier=<slug> and shipment_status=<status> filter on real waybills; each listed order carries its latest ShipmentSummary', async () => {
  const t = await shipTenant(svc);
  const inTransitA = await checkoutWith(svc, t.accountId, 'courier_a');
  const pendingB = await checkoutWith(svc, t.accountId, 'courier_a');
  const deliveredC = await checkoutWith(svc, t.accountId, 'courier_c');
  const reshipped = await checkoutWith(svc, t.accountId, 'courier_a');
  const refusedB = await checkoutWith(svc, t.accountId, 'courier_b');
  const none = await checkoutWith(svc, t.accountId, 'courier_a');

  const sA = await ship(svc, t.key, { order_id: inTransitA.id });
  await courierReports(svc, sA, 'in_transit');
  const sB = await ship(svc, t.key, { order_id: pendingB.id, courier: 'courier_b' });
  const sC = await ship(svc, t.key, { order_id: deliveredC.id });
  await courierReports(svc, sC, 'delivered');
  const first = await ship(svc, t.key, { order_id: reshipped.id });
  assert.equal((await cancel(svc, t.key, first.id)).status, 200);
  const second = await ship(svc, t.key, { order_id: reshipped.id, courier: 'courier_b' });
  const sR = await ship(svc, t.key, { order_id: refusedB.id });
  await courierReports(svc, sR, 'refused');

  const ids = (params: Record<string, string>) => listIds(svc.url, t.key, params);
  assertSameSet(await ids({ courier: 'courier_a' }), [inTransitA.id], 'courier_a: the courier actually used');
  assertSameSet(await ids({ courier: 'courier_b' }), [pendingB.id, reshipped.id, refusedB.id], 'courier_b (incl. an override and a re-shipment)');
  assertSameSet(await ids({ courier: 'courier_c' }), [deliveredC.id]);
  assertSameSet(await ids({ courier: 'none' }), [none.id], 'none: no tracking number');
  assertSameSet(await ids({ shipment_status: 'in_transit' }), [inTransitA.id]);
  assertSameSet(await ids({ shipment_status: 'pending' }), [pendingB.id, reshipped.id], 'pending (the re-shipped order by its newest waybill)');
  assertSameSet(await ids({ shipment_status: 'delivered' }), [deliveredC.id]);
  assertSameSet(await ids({ shipment_status: 'refused' }), [refusedB.id]);
  assertSameSet(await ids({ shipment_status: 'cancelled' }), [], "a cancelled older waybill is not the order's shipment any more");
  assertSameSet(await ids({ shipment_status: 'returned' }), []);
  assertSameSet(await ids({ courier: 'courier_b', shipment_status: 'pending' }), [pendingB.id, reshipped.id], 'filters combine');
  assertSameSet(await ids({ status: 'delivered', shipment_status: 'delivered' }), [deliveredC.id]);
  assertError(
    await http(svc.url, 'GET', '/api/v1/orders?shipment_status=lost', { token: t.key }),
    400,
    'validation_failed',
    'unknown shipment status',
  );

  const latest: Record<string, any> = {
    [inTransitA.id]: await shipmentNow(svc, t.key, sA.id),
    [pendingB.id]: await shipmentNow(svc, t.key, sB.id),
    [deliveredC.id]: await shipmentNow(svc, t.key, sC.id),
    [reshipped.id]: await shipmentNow(svc, t.key, second.id),
    [refusedB.id]: await shipmentNow(svc, t.key, sR.id),
  };
  const page = await listOrders(svc.url, t.key, { limit: 200 });
  for (const order of page.data) {
    if (order.id === none.id) assert.equal(order.shipment, null, 'no waybill: shipment null');
    else assertSummary(order.shipment, latest[order.id], `list summary of ${order.id}`);
  }
  for (const status of ['in_transit', 'pending', 'delivered', 'refused']) {
    for (const order of (await listOrders(svc.url, t.key, { shipment_status: status })).data) assert.equal(order.shipment.status, status);
  }

  // Cancelling the latest waybill moves the order to shipment_status=cancelled (the status is kept on the order).
  assert.equal((await cancel(svc, t.key, sB.id)).status, 200);
  assertSameSet(await ids({ shipment_status: 'cancelled' }), [pendingB.id], "a cancelled latest waybill is the order's shipment");
  assertSameSet(await ids({ shipment_status: 'pending' }), [reshipped.id]);
  const replaced = await ship(svc, t.key, { order_id: pendingB.id, courier: 'courier_b' });
  assertSameSet(await ids({ shipment_status: 'cancelled' }), [], 'a new waybill replaces it');
  assertSameSet(await ids({ shipment_status: 'pending' }), [reshipped.id, pendingB.id]);
  assert.equal(
    (await listOrders(svc.url, t.key, { shipment_status: 'pending' })).data.find((o: any) => o.id === pendingB.id).shipment.id,
    replaced.id,
  );
});

test("the Order view's shipment summary follows the courier: status, last_status_label and last_status_at of the newest waybill", async () => {
  const t = await shipTenant(svc);
  const order = await checkoutWith(svc, t.accountId, 'courier_b');
  assert.equal((await orderNow(svc, t.key, order.id)).shipment, null);
  const s = await ship(svc, t.key, { order_id: order.id });
  assertSummary((await orderNow(svc, t.key, order.id)).shipment, s, 'after create');
  await courierEvent(svc, s.id, 'picked_up', { label: 'Picked up in Sofia' });
  assertSummary((await orderNow(svc, t.key, order.id)).shipment, s, 'nothing known before the poll');
  await poll(svc);
  const picked = await shipmentNow(svc, t.key, s.id);
  const view = await orderNow(svc, t.key, order.id);
  assertSummary(view.shipment, picked, 'after the poll');
  assert.equal(view.shipment.status, 'picked_up');
  assert.equal(view.shipment.last_status_label, 'Picked up in Sofia');
  assert.ok(Date.parse(view.shipment.last_status_at) >= Date.parse(s.last_status_at) - 1000);

  await merchantSets(svc, order.id, 'shipped');
  const res = await cancel(svc, t.key, s.id, { reason: 'lost parcel' });
  assert.equal(res.status, 200, res.text);
  const afterCancel = await orderNow(svc, t.key, order.id);
  assertSummary(afterCancel.shipment, res.body.data, 'after cancel');
  assert.equal(afterCancel.status, 'processing', 'shipped order back to processing');
  const next = await ship(svc, t.key, { order_id: order.id, courier: 'courier_a' });
  assertSummary((await orderNow(svc, t.key, order.id)).shipment, next, 'the newest waybill');
});
