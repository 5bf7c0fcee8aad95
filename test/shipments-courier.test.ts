// The three couriers, each through its own protocol on the simulator over
// HTTP (SPEC Shipments; GAPS "Orders and shipments"; OPERATOR_API courier
// integrations, courier-sim modes, courier-events, jobs): create, label,
// cancel (confirmed by courier_a/b, local with a note for courier_c), status
// mirroring by poll (courier_a/b) and push (courier_c), refusal, outage,
// timeout and wrong credentials (502 courier_error with details.reason), and
// no orphan waybill when our commit fails after the courier accepted.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService, http, operator, type TestService } from './helpers/harness.ts';
import { rpc, toolCall } from './helpers/mcp.ts';
import { assertError } from './helpers/contract.ts';
import {
  POLLED,
  RAW_CODE,
  SLUGS,
  type Slug,
  assertLabel,
  assertShipmentView,
  cancel,
  checkoutWith,
  courierEvent,
  createShipment,
  events,
  fetchLabel,
  changeParcel,
  newParcels,
  orderNow,
  orphans,
  parcel,
  parcelKeys,
  pdfText,
  poll,
  push,
  pushTokenOf,
  putCourier,
  ship,
  shipTenant,
  shipmentNow,
  shipmentRows,
  withMode,
} from './helpers/shipments.ts';

let svc: TestService;
before(async () => {
  svc = await startTestService({ COURIER_TIMEOUT_MS: '1000' });
});
after(async () => {
  await svc.close();
});

/** Credentials the simulator does not accept, in each courier's own shape. */
const WRONG: Record<Slug, Record<string, string>> = {
  courier_a: { api_token: 'wrong' },
  courier_b: { api_key: 'wrong', client_id: 'wrong' },
  courier_c: { username: 'wrong', password: 'wrong' },
};

const lastCourierCode = async (tracking: string) => {
  const evs = (await parcel(svc, tracking)).events;
  return evs[evs.length - 1].code;
};

// ------------------------------------------------- polling through outages
// (first in the file: a poll while a courier is down waits out one timeout per account)

for (const slug of POLLED) {
  test(`${slug}: a poll while the courier is down or refuses the credentials fails quietly; the next good poll mirrors what was missed`, async () => {
    const { accountId, key } = await shipTenant(svc);
    const broken = await shipTenant(svc);
    const order = await checkoutWith(svc, accountId, slug);
    const s = await ship(svc, key, { order_id: order.id });
    const brokenOrder = await checkoutWith(svc, broken.accountId, slug);
    const brokenShipment = await ship(svc, broken.key, { order_id: brokenOrder.id });
    await courierEvent(svc, s.id, 'picked_up');
    await courierEvent(svc, brokenShipment.id, 'picked_up');

    await withMode(svc, slug, 'down', async () => {
      await poll(svc);
    });
    assert.equal((await shipmentNow(svc, key, s.id)).status, 'pending', 'nothing heard while the courier was down');

    // One account's wrong credentials do not stop the other accounts' polling.
    await putCourier(svc, broken.accountId, slug, { enabled: true, credentials: WRONG[slug] });
    await poll(svc);
    assert.equal((await shipmentNow(svc, key, s.id)).status, 'picked_up', 'mirrored after the outage');
    assert.equal((await shipmentNow(svc, broken.key, brokenShipment.id)).status, 'pending', 'the courier refused these credentials');
    await putCourier(svc, broken.accountId, slug, { enabled: true, credentials: {} });
    await poll(svc);
    assert.equal((await shipmentNow(svc, broken.key, brokenShipment.id)).status, 'picked_up');
    assert.equal((await events(svc, accountId, 'shipment.status_changed')).length, 1);
  });
}

// ---------------------------------------------------------------- create

for (const slug of SLUGS) {
  test(`${slug}: create sends recipient, reference, COD and weight in the courier's protocol; sender origin and shipment terms come from the integration`, async () => {
    const senderOrigin = { mode: 'office', office_id: 9, office_label: 'Sofia Center' };
    const terms = { cod_type: 'cash', service_payer: 'receiver', open_before: 'open', refusal_payer: 'receiver' };
    const { accountId, key } = await shipTenant(svc, undefined, { sender_origin: senderOrigin, shipment_terms: terms });
    const order = await checkoutWith(svc, accountId, slug, { delivery_price: 3.25 });
    const before = await parcelKeys(svc);
    const preview = await createShipment(svc, key, { order_id: order.id, weight_g: 1750 }, { 'x-merx-dry-run': '1' });
    assert.equal(preview.status, 200, preview.text);
    assert.deepEqual(preview.body.shipment_terms, terms, 'the preview shows the integration terms');
    const s = await ship(svc, key, { order_id: order.id, weight_g: 1750 });
    assert.equal(s.courier_slug, slug);
    assert.deepEqual(s.sender_origin, senderOrigin);
    assert.deepEqual(s.shipment_terms, terms);
    assert.equal(typeof s.shipping_cost, 'number');
    assert.equal(s.cod_amount, 15.75);

    const issued = await newParcels(svc, before);
    assert.equal(issued.length, 1);
    const p = issued[0];
    assert.equal(p.slug, slug);
    assert.equal(p.trackingNumber, s.tracking_number);
    assert.equal(p.reference, String(order.number), 'the order number is the courier reference');
    assert.equal(p.codAmount, 15.75, 'COD in the courier units converts back to the same amount');
    assert.equal(p.weightKg, 1.75, 'weight in the courier units converts back to the same weight');
    assert.ok(
      p.recipient.includes('Ana Petrova') && p.recipient.includes('Sofia') && p.recipient.includes('ul. Vitosha 1'),
      JSON.stringify(p.recipient),
    );

    const view = await orderNow(svc, key, order.id);
    assert.equal(view.courier, slug);
    assert.equal(view.tracking_number, s.tracking_number);
    assert.ok(view.tracking_url.includes(encodeURIComponent(s.tracking_number)), view.tracking_url);
    if (slug === 'courier_c') assert.ok((await pushTokenOf(svc, s.tracking_number)).length > 0, 'courier_c got where and how to push');
    else assert.equal(p.notify, null, 'polled couriers get no notify URL');
  });

  test(`${slug}: refusal, outage (timeout) and wrong credentials on create are 502 courier_error (refused / timeout / auth); nothing is written`, async () => {
    const { accountId, key } = await shipTenant(svc);
    const order = await checkoutWith(svc, accountId, slug);
    const before = await parcelKeys(svc);
    const refused = await withMode(svc, slug, 'refuse', async () =>
      assertError(await createShipment(svc, key, { order_id: order.id }), 502, 'courier_error', 'refuse'),
    );
    assert.equal(refused.details.reason, 'refused');
    assert.equal(typeof refused.details.detail, 'string');
    assert.ok(refused.details.detail.length > 0);
    const down = await withMode(svc, slug, 'down', async () =>
      assertError(await createShipment(svc, key, { order_id: order.id }), 502, 'courier_error', 'down'),
    );
    assert.equal(down.details.reason, 'timeout');
    assert.equal(typeof down.details.detail, 'string');
    await putCourier(svc, accountId, slug, { enabled: true, credentials: WRONG[slug] });
    const auth = assertError(await createShipment(svc, key, { order_id: order.id }), 502, 'courier_error', 'wrong credentials');
    assert.equal(auth.details.reason, 'auth');
    assert.equal(typeof auth.details.detail, 'string');

    assert.equal((await newParcels(svc, before)).length, 0, 'the courier issued nothing');
    assert.equal((await shipmentRows(svc, accountId)).length, 0, 'no shipment row');
    const view = await orderNow(svc, key, order.id);
    assert.equal(view.status, 'new');
    assert.equal(view.tracking_number, null);
    assert.equal(view.shipment, null);
    assert.equal((await events(svc, accountId, 'shipment.created')).length, 0);
    assert.equal((await events(svc, accountId, 'order.status_changed')).length, 0);

    await putCourier(svc, accountId, slug, { enabled: true, credentials: {} });
    await ship(svc, key, { order_id: order.id });
  });

  // ---------------------------------------------------------------- label

  test(`${slug}: the label is the courier's PDF; every call asks the courier; refusal, outage and wrong credentials are 502 (refused / timeout / auth)`, async () => {
    const { accountId, key } = await shipTenant(svc);
    const order = await checkoutWith(svc, accountId, slug);
    const s = await ship(svc, key, { order_id: order.id });
    const label = await fetchLabel(svc, key, s.id);
    assertLabel(label, s.tracking_number, slug);
    assert.ok(pdfText(label.bytes).includes('Ana Petrova'), 'recipient on the label');
    await changeParcel(svc, s.tracking_number, (p) => (p.recipient = ['Reprinted Recipient']));
    const again = await fetchLabel(svc, key, s.id);
    assertLabel(again, s.tracking_number, `${slug} again`);
    assert.ok(pdfText(again.bytes).includes('Reprinted Recipient'), 'fetched from the courier again, not cached');

    for (const [mode, reason] of [
      ['refuse', 'refused'],
      ['down', 'timeout'],
    ] as const) {
      const res = await withMode(svc, slug, mode, async () => fetchLabel(svc, key, s.id));
      assert.equal(res.status, 502, `${mode}: ${res.bytes.toString('utf8').slice(0, 200)}`);
      assert.equal(res.json.error.code, 'courier_error');
      assert.equal(res.json.error.details.reason, reason);
      assert.equal(res.headers.get('content-disposition'), null, 'an error is not an attachment');
    }
    await putCourier(svc, accountId, slug, { enabled: true, credentials: WRONG[slug] });
    const auth = await fetchLabel(svc, key, s.id);
    assert.equal(auth.status, 502);
    assert.equal(auth.json.error.code, 'courier_error');
    assert.equal(auth.json.error.details.reason, 'auth');
    await putCourier(svc, accountId, slug, { enabled: true, credentials: {} });
    assertLabel(await fetchLabel(svc, key, s.id), s.tracking_number, `${slug} restored`);
  });
}

// ---------------------------------------------------------------- cancel

for (const slug of POLLED) {
  test(`${slug}: cancel is confirmed by the courier (it records its cancelled code); courier_cancelled and courier_confirmed true, no note`, async () => {
    const { accountId, key } = await shipTenant(svc);
    const order = await checkoutWith(svc, accountId, slug);
    const s = await ship(svc, key, { order_id: order.id });
    const res = await cancel(svc, key, s.id, { reason: 'wrong address' });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.data.status, 'cancelled');
    assert.equal(res.body.courier_cancelled, true);
    assert.equal(res.body.courier_confirmed, true);
    assert.equal(res.body.note, null);
    assert.equal(await lastCourierCode(s.tracking_number), RAW_CODE[slug].cancelled, 'the courier recorded a cancelled event');
    assertLabel(await fetchLabel(svc, key, s.id), s.tracking_number, 'GAPS: a label for any shipment with a tracking number');
    const [event] = await events(svc, accountId, 'shipment.cancelled');
    assert.equal(event.data.courier_cancelled, true);
    assert.equal(event.data.courier_confirmed, true);
    assert.equal(event.data.shipment.status, 'cancelled');
    // Later polls do not resurrect it.
    await poll(svc);
    assert.equal((await shipmentNow(svc, key, s.id)).status, 'cancelled');
    assert.equal((await events(svc, accountId, 'shipment.status_changed')).length, 0);
  });

  test(`${slug}: cancel fails with 502 when the courier refuses, is down or rejects the credentials; the waybill stays live`, async () => {
    const { accountId, key } = await shipTenant(svc);
    const order = await checkoutWith(svc, accountId, slug);
    const s = await ship(svc, key, { order_id: order.id });
    for (const [mode, reason] of [
      ['refuse', 'refused'],
      ['down', 'timeout'],
    ] as const) {
      const error = await withMode(svc, slug, mode, async () => assertError(await cancel(svc, key, s.id), 502, 'courier_error', mode));
      assert.equal(error.details.reason, reason);
    }
    await putCourier(svc, accountId, slug, { enabled: true, credentials: WRONG[slug] });
    assert.equal(assertError(await cancel(svc, key, s.id), 502, 'courier_error', 'auth').details.reason, 'auth');
    await putCourier(svc, accountId, slug, { enabled: true, credentials: {} });
    assert.equal((await shipmentNow(svc, key, s.id)).status, 'pending');
    assert.notEqual(await lastCourierCode(s.tracking_number), RAW_CODE[slug].cancelled);
    assert.equal((await events(svc, accountId, 'shipment.cancelled')).length, 0);
    assert.equal((await cancel(svc, key, s.id)).status, 200);
  });
}

test('courier_c: no cancel API, so cancel marks the waybill cancelled locally with a note (both flags false) and calls no courier, even while it is down', async () => {
  const { accountId, key } = await shipTenant(svc);
  const order = await checkoutWith(svc, accountId, 'courier_c');
  const s = await ship(svc, key, { order_id: order.id });
  const courierEvents = (await parcel(svc, s.tracking_number)).events.length;
  // No body at all: the cancel body is optional.
  const res = await withMode(svc, 'courier_c', 'down', async () => http(svc.url, 'POST', `/api/v1/shipments/${s.id}/cancel`, { token: key }));
  assert.equal(res.status, 200, res.text);
  assert.deepEqual(Object.keys(res.body).sort(), ['courier_cancelled', 'courier_confirmed', 'data', 'note']);
  assert.equal(res.body.data.status, 'cancelled');
  assert.equal(res.body.courier_cancelled, false);
  assert.equal(res.body.courier_confirmed, false);
  assert.equal(typeof res.body.note, 'string');
  assert.ok(res.body.note.length > 0, 'an explanatory note');
  assert.equal((await parcel(svc, s.tracking_number)).events.length, courierEvents, 'nothing was sent to the courier');
  const [event] = await events(svc, accountId, 'shipment.cancelled');
  assert.equal(event.data.courier_cancelled, false);
  assert.equal(event.data.courier_confirmed, false);
  assert.deepEqual(event.data.shipment, res.body.data);
  assertError(await cancel(svc, key, s.id), 409, 'conflict', 'cancel twice');
  assertLabel(await fetchLabel(svc, key, s.id), s.tracking_number, 'the sticker of a locally cancelled parcel');
  // The courier keeps reporting the parcel: the locally cancelled waybill stays cancelled.
  await courierEvent(svc, s.id, 'in_transit');
  const after = await shipmentNow(svc, key, s.id);
  assert.equal(after.status, 'cancelled');
  assert.ok(
    after.status_events.some((e: any) => e.code === 'on_the_way'),
    'the raw event is still kept',
  );
  assert.equal((await events(svc, accountId, 'shipment.status_changed')).length, 0);
});

// ---------------------------------------------------------------- mirroring

for (const slug of POLLED) {
  test(`${slug}: statuses arrive at the 15-minute poll (jobs/courier-poll/run), not before; normalised status, raw event kept, shipment.status_changed source courier`, async () => {
    const { accountId, key } = await shipTenant(svc);
    const orders = [await checkoutWith(svc, accountId, slug), await checkoutWith(svc, accountId, slug), await checkoutWith(svc, accountId, slug)];
    const shipments = [];
    for (const o of orders) shipments.push(await ship(svc, key, { order_id: o.id }));
    const [s, t, quiet] = shipments;
    const outForDelivery = slug === 'courier_a' ? { code: 'OUT_FOR_DELIVERY', label: 'Out for delivery' } : { code: 30, label: 'Sorting centre' };
    await courierEvent(svc, s.id, 'in_transit', outForDelivery);
    await courierEvent(svc, t.id, 'picked_up');
    assert.equal((await shipmentNow(svc, key, s.id)).status, 'pending', 'a polled courier pushes nothing');

    assert.ok((await poll(svc)) >= 2, 'the poll changed both waybills');
    const now = await shipmentNow(svc, key, s.id);
    assert.equal(now.status, 'in_transit');
    assert.equal(now.last_status_label, outForDelivery.label);
    const raw = now.status_events.find((e: any) => e.code === outForDelivery.code);
    assert.ok(raw, `raw courier event kept: ${JSON.stringify(now.status_events)}`);
    assert.equal(raw.label, outForDelivery.label);
    assert.equal(now.last_status_at, new Date(raw.at).toISOString());
    assert.equal((await shipmentNow(svc, key, t.id)).status, 'picked_up');
    assert.equal((await shipmentNow(svc, key, quiet.id)).status, 'pending', 'no news, no change');

    const changed = (await events(svc, accountId, 'shipment.status_changed')).filter((e: any) => e.data.shipment.id === s.id);
    assert.equal(changed.length, 1);
    assert.deepEqual(Object.keys(changed[0].data).sort(), ['event', 'previous_status', 'shipment', 'source', 'status']);
    assert.equal(changed[0].data.source, 'courier');
    assert.equal(changed[0].data.previous_status, 'pending');
    assert.equal(changed[0].data.status, 'in_transit');
    assert.deepEqual(changed[0].data.shipment, now);
    assert.deepEqual(changed[0].data.event, { at: raw.at, code: raw.code, label: raw.label });

    // A code the service does not know is kept raw but moves nothing. (The operator API always reports a status in
    // the courier's own words, so the unknown code is put in the courier's records directly.)
    await changeParcel(svc, t.tracking_number, (p) =>
      p.events.push({ at: new Date().toISOString(), code: slug === 'courier_a' ? 'CUSTOMS_HOLD' : 77, label: 'Held at customs' }),
    );
    await poll(svc);
    const held = await shipmentNow(svc, key, t.id);
    assert.equal(held.status, 'picked_up');
    assert.ok(held.status_events.some((e: any) => e.label === 'Held at customs'));
    assert.equal((await events(svc, accountId, 'shipment.status_changed')).length, 2, 'one event per new normalised status');
  });
}

test('courier_c: statuses are pushed at once to POST /api/couriers/courier_c/push with the integration token; the poll does not touch them', async () => {
  const { accountId, key } = await shipTenant(svc);
  const order = await checkoutWith(svc, accountId, 'courier_c');
  const s = await ship(svc, key, { order_id: order.id });
  await courierEvent(svc, s.id, 'picked_up', { label: 'Collected from the shop' });
  const now = await shipmentNow(svc, key, s.id);
  assert.equal(now.status, 'picked_up', 'pushed without any poll');
  assert.equal(now.last_status_label, 'Collected from the shop');
  assert.ok(
    now.status_events.some((e: any) => e.code === 'collected'),
    'raw state kept',
  );
  const [changed] = await events(svc, accountId, 'shipment.status_changed');
  assert.equal(changed.data.source, 'courier');
  assert.equal(changed.data.previous_status, 'pending');
  assert.equal(changed.data.status, 'picked_up');
  assert.equal(changed.data.event.code, 'collected');
  await poll(svc);
  assert.deepEqual(await shipmentNow(svc, key, s.id), now);
});

test('courier_c push endpoint: a wrong, missing or foreign token is 401; an unknown barcode is 404; a malformed body is 400; a good push answers 200', async () => {
  const { accountId, key } = await shipTenant(svc);
  const other = await shipTenant(svc);
  const order = await checkoutWith(svc, accountId, 'courier_c');
  const s = await ship(svc, key, { order_id: order.id });
  const otherOrder = await checkoutWith(svc, other.accountId, 'courier_c');
  const otherShipment = await ship(svc, other.key, { order_id: otherOrder.id });
  const token = await pushTokenOf(svc, s.tracking_number);
  const otherToken = await pushTokenOf(svc, otherShipment.tracking_number);
  assert.notEqual(token, otherToken, 'one token per integration');
  const body = { barcode: s.tracking_number, events: [{ occurred_at: new Date().toISOString(), state: 'on_the_way', note: 'On the way' }] };

  assertError(await push(svc, 'wrongtoken0123', body), 401, 'unauthorized', 'wrong token');
  assertError(await push(svc, null, body), 401, 'unauthorized', 'no Authorization');
  assertError(await push(svc, null, body, `Bearer ${token}`), 401, 'unauthorized', 'Bearer instead of Token');
  assertError(await push(svc, otherToken, body), 404, 'not_found', "another integration's token does not reach this barcode");
  assertError(await push(svc, token, { ...body, barcode: 'CC000000000BG' }), 404, 'not_found', 'unknown barcode');
  const aOrder = await checkoutWith(svc, accountId, 'courier_a');
  const aShipment = await ship(svc, key, { order_id: aOrder.id });
  assertError(
    await push(svc, token, { ...body, barcode: aShipment.tracking_number }),
    404,
    'not_found',
    "a courier_a waybill is not courier_c's to report",
  );
  assertError(await push(svc, token, { barcode: s.tracking_number }), 400, 'validation_failed', 'no events');
  assertError(
    await push(svc, token, { barcode: s.tracking_number, events: [{ state: 'on_the_way' }] }),
    400,
    'validation_failed',
    'event without time',
  );
  assertError(
    await push(svc, token, { barcode: s.tracking_number, events: [{ occurred_at: 'yesterday', state: 'on_the_way' }] }),
    400,
    'validation_failed',
    'bad time',
  );
  assert.equal((await shipmentNow(svc, key, s.id)).status, 'pending', 'nothing applied by refused pushes');
  assert.equal((await shipmentNow(svc, other.key, otherShipment.id)).status, 'pending');

  // A disabled integration's token no longer authenticates.
  await putCourier(svc, other.accountId, 'courier_c', { enabled: false });
  assertError(await push(svc, otherToken, { ...body, barcode: otherShipment.tracking_number }), 401, 'unauthorized', 'disabled integration');

  const ok = await push(svc, token, body);
  assert.equal(ok.status, 200, ok.text);
  assert.equal((await shipmentNow(svc, key, s.id)).status, 'in_transit');
  assert.equal((await events(svc, accountId, 'shipment.status_changed')).length, 1);
});

// ---------------------------------------------------------------- no orphan waybills

for (const slug of POLLED) {
  test(`${slug}: when our commit fails after the courier accepted, the waybill is cancelled at the courier and nothing is left behind`, async () => {
    const { accountId, key } = await shipTenant(svc);
    const order = await checkoutWith(svc, accountId, slug);
    const before = await parcelKeys(svc);
    await operator(svc.url).call('PUT', '/faults', { shipment_commit: 'fail_next' });
    const res = await createShipment(svc, key, { order_id: order.id });
    assertError(res, 500, 'internal_error', 'injected commit failure');
    assert.ok(!/injected|courier accepted/i.test(res.text), 'a 500 never shows its cause');

    const issued = await newParcels(svc, before);
    assert.equal(issued.length, 1, 'the courier had accepted one waybill');
    assert.equal(issued[0].events[issued[0].events.length - 1].code, RAW_CODE[slug].cancelled, 'the courier recorded a CANCELLED event');
    assert.deepEqual(await orphans(svc, accountId), [], 'cancelled, so nothing to reconcile');
    assert.equal((await shipmentRows(svc, accountId)).length, 0, 'no shipment row');
    const view = await orderNow(svc, key, order.id);
    assert.equal(view.status, 'new');
    assert.equal(view.tracking_number, null);
    assert.equal(view.courier, null);
    assert.equal((await events(svc, accountId, 'shipment.created')).length, 0);
    assert.equal((await events(svc, accountId, 'order.status_changed')).length, 0);

    // The fault fired once; the next attempt goes through.
    const s = await ship(svc, key, { order_id: order.id });
    assert.notEqual(s.tracking_number, issued[0].trackingNumber);
  });
}

test('courier_c: when our commit fails after the courier accepted, the waybill (not cancellable) is recorded in courier_orphans for reconciliation', async () => {
  const { accountId, key } = await shipTenant(svc);
  const order = await checkoutWith(svc, accountId, 'courier_c');
  const before = await parcelKeys(svc);
  await operator(svc.url).call('PUT', '/faults', { shipment_commit: 'fail_next' });
  assertError(await createShipment(svc, key, { order_id: order.id }), 500, 'internal_error', 'injected commit failure');
  const issued = await newParcels(svc, before);
  assert.equal(issued.length, 1);
  const rows = await orphans(svc, accountId);
  assert.equal(rows.length, 1, 'one waybill kept for reconciliation');
  assert.equal(rows[0].courier_slug, 'courier_c');
  assert.equal(rows[0].tracking_number, issued[0].trackingNumber);
  assert.equal(rows[0].order_id, order.id);
  assert.equal(typeof rows[0].reason, 'string');
  assert.equal((await shipmentRows(svc, accountId)).length, 0);
  assert.equal((await orderNow(svc, key, order.id)).status, 'new');
  assert.equal((await events(svc, accountId, 'shipment.created')).length, 0);
  await ship(svc, key, { order_id: order.id });
  assert.equal((await orphans(svc, accountId)).length, 1);
});

test('a dry run does not consume the injected commit failure, and MCP create reports it as an internal error (-32603)', async () => {
  const { accountId, key } = await shipTenant(svc);
  const order = await checkoutWith(svc, accountId, 'courier_a');
  await operator(svc.url).call('PUT', '/faults', { shipment_commit: 'fail_next' });
  try {
    const dry = await createShipment(svc, key, { order_id: order.id }, { 'x-merx-dry-run': '1' });
    assert.equal(dry.status, 200, dry.text);
    const before = await parcelKeys(svc);
    const res = await rpc(svc.url, key, toolCall('create_shipment', { order_id: order.id }));
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.error?.code, -32603, res.text);
    assert.equal((await newParcels(svc, before))[0].events.at(-1)!.code, 'CANCELLED');
  } finally {
    await operator(svc.url).call('PUT', '/faults', { shipment_commit: 'ok' });
  }
  assertShipmentView(await ship(svc, key, { order_id: order.id }), 'after the fault');
});
