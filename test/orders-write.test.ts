// SPEC Order view, States and transitions (order status), Endpoints > Orders
// (GET one, PATCH with dry run, GET shipment), "What the service does" 8
// (no attribution/IP/provider/cost), Errors (404 never 403).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { startTestService, http, freshTenant, operator, outboxEvents, ADMIN_TOKEN, type TestService } from './helpers/harness.ts';
import { assertError, assertOrderView, listIds, listOrders, ORDER_FIELDS, UUID_RE } from './helpers/contract.ts';

let svc: TestService;
before(async () => {
  svc = await startTestService();
});
after(async () => {
  await svc.close();
});

const ALLOWED_PATCH_FIELDS = ['admin_notes', 'courier', 'notify_customer', 'status', 'tracking_number', 'tracking_url'];
const DRY = (value = '1') => ({ 'x-merx-dry-run': value });

async function getOrder(key: string, id: string) {
  const res = await http(svc.url, 'GET', `/api/v1/orders/${id}`, { token: key });
  assert.equal(res.status, 200, res.text);
  assert.deepEqual(Object.keys(res.body), ['data']);
  return res.body.data;
}

async function patchOrder(key: string, id: string, body: unknown, headers: Record<string, string> = {}) {
  return http(svc.url, 'PATCH', `/api/v1/orders/${id}`, { token: key, body, headers });
}

test("GET /orders/{id} returns {data: Order}; another account's order is 404, never 403", async () => {
  const mine = await freshTenant(svc.url);
  const theirs = await freshTenant(svc.url);
  const own = await mine.op.checkout(mine.accountId);
  const foreign = await theirs.op.checkout(theirs.accountId);

  const res = await http(svc.url, 'GET', `/api/v1/orders/${own.id}`, { token: mine.key });
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
  assert.deepEqual(res.body, { data: own }, 'the same view as checkout returned');

  assertError(await http(svc.url, 'GET', `/api/v1/orders/${foreign.id}`, { token: mine.key }), 404, 'not_found', 'foreign GET');
  assertError(await http(svc.url, 'GET', `/api/v1/orders/${foreign.id}/shipment`, { token: mine.key }), 404, 'not_found', 'foreign shipment');
  assertError(await patchOrder(mine.key, foreign.id, { status: 'cancelled', admin_notes: 'mine now' }), 404, 'not_found', 'foreign PATCH');
  assertError(await patchOrder(mine.key, foreign.id, { status: 'cancelled' }, DRY()), 404, 'not_found', 'foreign dry run');
  assertError(await http(svc.url, 'GET', `/api/v1/orders/${crypto.randomUUID()}`, { token: mine.key }), 404, 'not_found', 'unknown id');

  const untouched = await getOrder(theirs.key, foreign.id);
  assert.deepEqual(untouched, foreign, "the other account's order is unchanged");
  assert.equal((await outboxEvents(svc.service, theirs.accountId)).length, 1, 'only its order.created');
});

test("a line-item order has exactly SPEC's fields, with line items resolved from the catalog", async () => {
  const { op, accountId, key } = await freshTenant(svc.url);
  const product = await op.createProduct(accountId, {
    name: 'Mug',
    price: 12.5,
    sku: 'MUG-1',
    variants: [{ type: 'color', name: 'Color', value: 'Red', price_delta: 2.5 }],
  });
  const variantId = product.variants[0].id;
  const page = await op.createPage(accountId, [product.id]);
  const parent = await op.checkout(accountId);
  const order = await op.checkout(accountId, {
    page_id: page.id,
    customer: { name: 'Ana Petrova', email: 'ana@example.com', phone: '+359888000111', vat: 'BG123456789' },
    shipping: {
      address: 'ul. Vitosha 1',
      city: 'Sofia',
      zip: '1000',
      method: 'courier',
      courier_slug: 'courier_b',
      courier_delivery_mode: 'home',
      courier_office_id: 'OFF-7',
    },
    line_items: [
      { product_id: product.id, qty: 2 },
      { product_id: product.id, variant_id: variantId, qty: 1, kind: 'bump' },
    ],
    legacy: undefined,
    payment_method: 'card',
    delivery_price: 5,
    discount_amount: 1,
    coupon_code: 'SPRING',
    notes: 'Leave at the door',
    funnel_step: 'upsell',
    parent_order_id: parent.id,
  });
  const view = await getOrder(key, order.id);
  assertOrderView(view, 'line-item order');
  assert.deepEqual(Object.keys(view).sort(), ORDER_FIELDS);
  assert.equal(view.status, 'new');
  assert.equal(view.number, parent.number + 1, 'merchant-facing numbers count up per account');
  assert.equal(Number.isInteger(view.order_number), true);
  assert.equal(view.payment_method, 'card');
  assert.equal(view.payment_status, 'pending');
  assert.equal(view.funnel_step, 'upsell');
  assert.equal(view.parent_order_id, parent.id);
  assert.equal(view.page_id, page.id);
  assert.equal(view.coupon_code, 'SPRING');
  assert.equal(view.notes, 'Leave at the door');
  assert.equal(view.delivery_price, 5);
  assert.equal(view.discount_amount, 1);
  assert.equal(view.total, 25 + 15 + 5 - 1, 'items + delivery - discount');
  assert.deepEqual(view.customer, { name: 'Ana Petrova', email: 'ana@example.com', phone: '+359888000111', vat: 'BG123456789' });
  assert.deepEqual(view.shipping, {
    address: 'ul. Vitosha 1',
    city: 'Sofia',
    zip: '1000',
    method: 'courier',
    courier_slug: 'courier_b',
    courier_delivery_mode: 'home',
    courier_office_id: 'OFF-7',
  });
  for (const nullField of [
    'courier',
    'tracking_number',
    'tracking_url',
    'admin_notes',
    'return_note',
    'invoice_number',
    'shipment',
    'refund_amount_cents',
    'refunded_at',
  ]) {
    assert.equal(view[nullField], null, nullField);
  }
  assert.equal(view.line_items.length, 2);
  const [main, bump] = view.line_items;
  assert.deepEqual(
    {
      kind: main.kind,
      product_id: main.product_id,
      variant_id: main.variant_id,
      name: main.name,
      sku: main.sku,
      qty: main.qty,
      unit_price_cents: main.unit_price_cents,
      total_cents: main.total_cents,
      delivery_type: main.delivery_type,
      digital: main.digital,
    },
    {
      kind: 'main',
      product_id: product.id,
      variant_id: null,
      name: 'Mug',
      sku: 'MUG-1',
      qty: 2,
      unit_price_cents: 1250,
      total_cents: 2500,
      delivery_type: 'physical',
      digital: false,
    },
  );
  assert.deepEqual(
    {
      kind: bump.kind,
      product_id: bump.product_id,
      variant_id: bump.variant_id,
      qty: bump.qty,
      unit_price_cents: bump.unit_price_cents,
      total_cents: bump.total_cents,
    },
    { kind: 'bump', product_id: product.id, variant_id: variantId, qty: 1, unit_price_cents: 1500, total_cents: 1500 },
  );
  assert.equal(typeof main.note, 'string');

  // The same view everywhere: list item, PATCH result, dry-run data.
  const listed = (await listOrders(svc.url, key)).data.find((o) => o.id === order.id);
  assert.deepEqual(listed, view);
  const dry = await patchOrder(key, order.id, { admin_notes: 'x' }, DRY());
  assert.deepEqual(dry.body.data, view);
  const patched = await patchOrder(key, order.id, { admin_notes: 'x' });
  assertOrderView(patched.body.data, 'PATCH result');
});

test("a legacy order has exactly SPEC's fields, line_items null and product_name/quantity/unit_price set", async () => {
  const { op, accountId, key } = await freshTenant(svc.url);
  const order = await op.checkout(accountId, {
    legacy: { product_name: 'Old Mug', product_sku: 'OLD-1', quantity: 3, unit_price: 12.5 },
    delivery_price: 4.5,
    shipping: { address: 'a', city: 'b', zip: 'c', courier_slug: 'courier_a', courier_delivery_mode: 'office', courier_office_id: 101 },
  });
  const view = await getOrder(key, order.id);
  assertOrderView(view, 'legacy order');
  assert.deepEqual(Object.keys(view).sort(), ORDER_FIELDS);
  assert.equal(view.line_items, null);
  assert.equal(view.product_name, 'Old Mug');
  assert.equal(view.product_sku, 'OLD-1');
  assert.equal(view.quantity, 3);
  assert.equal(view.unit_price, 12.5);
  assert.equal(view.total, 3 * 12.5 + 4.5);
  assert.equal(view.shipping.courier_office_id, 101, 'an integer office id stays an integer');
  assert.equal(view.shipping.courier_delivery_mode, 'office');
  const listed = (await listOrders(svc.url, key)).data;
  assert.deepEqual(listed, [view]);
});

test('attribution, IP addresses, payment-provider ids and costs never appear (seeded hidden columns)', async () => {
  const { op, accountId, key } = await freshTenant(svc.url);
  await op.call('POST', `/accounts/${accountId}/seed`, { orders: 120, products: 6 });
  // The seed really fills the hidden columns, so their absence below means something.
  const { rows } = await svc.service.db.query(
    `SELECT count(*)::int AS n FROM orders WHERE account_id = $1 AND attribution::text LIKE '%utm_source%'
       AND ip_address LIKE '203.0.113.%' AND payment_provider_id LIKE 'pi_seed_%' AND cost_total IS NOT NULL`,
    [accountId],
  );
  assert.equal(rows[0].n, 120);
  const texts: string[] = [];
  const ids: string[] = [];
  let cursor: string | undefined;
  for (const status of [undefined, 'archived', 'shipped']) {
    cursor = undefined;
    do {
      const res: any = await http(svc.url, 'GET', `/api/v1/orders?limit=50${status ? `&status=${status}` : ''}${cursor ? `&cursor=${cursor}` : ''}`, {
        token: key,
      });
      assert.equal(res.status, 200);
      texts.push(res.text);
      for (const o of res.body.data) {
        assertOrderView(o, 'seeded order');
        ids.push(o.id);
      }
      cursor = res.body.next_cursor ?? undefined;
    } while (cursor);
  }
  assert.ok(ids.length >= 120);
  for (const id of ids.slice(0, 10)) {
    const res = await http(svc.url, 'GET', `/api/v1/orders/${id}`, { token: key });
    texts.push(res.text);
    texts.push((await http(svc.url, 'GET', `/api/v1/orders/${id}/shipment`, { token: key })).text);
  }
  const target = ids[0];
  texts.push((await patchOrder(key, target, { status: 'confirmed', admin_notes: 'n' }, DRY())).text);
  texts.push((await patchOrder(key, target, { tracking_number: 'HID-1', courier: 'courier_a' })).text);
  texts.push((await patchOrder(key, target, { status: 'shipped' })).text);
  texts.push(JSON.stringify(await outboxEvents(svc.service, accountId)));
  texts.push(JSON.stringify(await op.messages(accountId)));

  const all = texts.join('\n');
  for (const secret of ['utm_source', '203.0.113.', 'pi_seed_', 'attribution', 'ip_address', 'payment_provider', 'cost_total', 'avg_cost']) {
    assert.ok(!all.includes(secret), `no response or event contains ${secret}`);
  }
});

test('PATCH accepts only status, tracking_number, tracking_url, courier, admin_notes, notify_customer', async () => {
  const { op, accountId, key } = await freshTenant(svc.url);
  const order = await op.checkout(accountId);
  const unknownBodies = [
    { foo: 1 },
    { total: 1 },
    { payment_status: 'paid' },
    { status: 'shipped', shipping: { city: 'Plovdiv' } },
    { customer: { name: 'X' } },
    { id: crypto.randomUUID() },
    { notes: 'customer note' },
    { dry_run: true, status: 'shipped' },
  ];
  for (const body of unknownBodies) {
    for (const headers of [{}, DRY()]) {
      const error = assertError(await patchOrder(key, order.id, body, headers), 400, 'validation_failed', JSON.stringify(body));
      assert.deepEqual([...error.details.allowed].sort(), ALLOWED_PATCH_FIELDS, `details.allowed for ${JSON.stringify(body)}`);
    }
  }
  const badTypes = [
    { status: 'bogus' },
    { status: 'SHIPPED' },
    { status: null },
    { status: 1 },
    { tracking_number: 5 },
    { tracking_url: ['x'] },
    { courier: true },
    { admin_notes: { text: 'x' } },
    { notify_customer: 'yes' },
    { notify_customer: 1 },
  ];
  for (const body of badTypes) {
    assertError(await patchOrder(key, order.id, body), 400, 'validation_failed', JSON.stringify(body));
  }
  assert.deepEqual(await getOrder(key, order.id), order, 'nothing changed');
  assert.equal((await outboxEvents(svc.service, accountId)).length, 1, 'no event besides order.created');
  assert.deepEqual(await op.messages(accountId), []);
});

test('PATCH changes tracking, courier and notes; returns {data, status_changed, email_sent}; null clears a field', async () => {
  const { op, accountId, key } = await freshTenant(svc.url);
  const order = await op.checkout(accountId);
  const res = await patchOrder(key, order.id, {
    tracking_number: 'TRK-100',
    tracking_url: 'https://track.example.com/TRK-100',
    courier: 'courier_b',
    admin_notes: 'fragile',
  });
  assert.equal(res.status, 200, res.text);
  assert.deepEqual(Object.keys(res.body).sort(), ['data', 'email_sent', 'status_changed']);
  assert.equal(res.body.status_changed, false);
  assert.equal(res.body.email_sent, false);
  const data = res.body.data;
  assertOrderView(data);
  assert.equal(data.tracking_number, 'TRK-100');
  assert.equal(data.tracking_url, 'https://track.example.com/TRK-100');
  assert.equal(data.courier, 'courier_b');
  assert.equal(data.admin_notes, 'fragile');
  assert.equal(data.status, 'new');
  assert.ok(Date.parse(data.updated_at) >= Date.parse(order.updated_at));
  assert.deepEqual(await getOrder(key, order.id), data, 'GET shows what PATCH returned');
  assert.deepEqual(await op.messages(accountId), [], 'no customer message without a status change');

  const cleared = await patchOrder(key, order.id, { admin_notes: null, tracking_url: null });
  assert.equal(cleared.status, 200, cleared.text);
  assert.equal(cleared.body.data.admin_notes, null);
  assert.equal(cleared.body.data.tracking_url, null);
  assert.equal(cleared.body.data.tracking_number, 'TRK-100');

  const empty = await patchOrder(key, order.id, {});
  assert.equal(empty.status, 200, empty.text);
  assert.equal(empty.body.status_changed, false);
  assert.deepEqual(empty.body.data, cleared.body.data, 'an empty PATCH changes nothing');
});

test('PATCH to the same status is a no-op: status_changed false, no event, no message', async () => {
  const { op, accountId, key } = await freshTenant(svc.url);
  const order = await op.checkout(accountId);
  const before = (await outboxEvents(svc.service, accountId)).length;
  const same = await patchOrder(key, order.id, { status: 'new' });
  assert.equal(same.status, 200, same.text);
  assert.equal(same.body.status_changed, false);
  assert.equal(same.body.email_sent, false);
  assert.deepEqual(same.body.data, order, 'unchanged, updated_at included');
  assert.equal((await outboxEvents(svc.service, accountId)).length, before, 'no event');

  const shipped = await patchOrder(key, order.id, { status: 'shipped' });
  assert.equal(shipped.body.status_changed, true);
  assert.equal(shipped.body.email_sent, true);
  const afterShip = (await outboxEvents(svc.service, accountId)).length;
  const again = await patchOrder(key, order.id, { status: 'shipped' });
  assert.equal(again.status, 200);
  assert.equal(again.body.status_changed, false);
  assert.equal(again.body.email_sent, false, 'no second shipped email');
  assert.equal((await outboxEvents(svc.service, accountId)).length, afterShip, 'no event for shipped -> shipped');
  assert.equal((await op.messages(accountId)).length, 1, 'still one email');
});

test('status shipped emails the customer (email_sent true) per the default notification settings', async () => {
  const { op, accountId, key } = await freshTenant(svc.url);
  const order = await op.checkout(accountId, { customer: { name: 'Ana Petrova', email: 'ana.ship@example.com', phone: '+359888000111' } });
  await patchOrder(key, order.id, { status: 'confirmed' });
  assert.deepEqual(await op.messages(accountId), [], 'confirmed sends nothing');
  const res = await patchOrder(key, order.id, { status: 'shipped', tracking_number: 'SHIP-1' });
  assert.equal(res.status, 200, res.text);
  assert.equal(res.body.status_changed, true);
  assert.equal(res.body.email_sent, true);
  assert.equal(res.body.data.status, 'shipped');
  const messages = await op.messages(accountId);
  assert.equal(messages.length, 1);
  assert.equal(messages[0].channel, 'email');
  assert.equal(messages[0].to, 'ana.ship@example.com');
  assert.equal(typeof messages[0].body, 'string');
  assert.equal((await getOrder(key, order.id)).status, 'shipped');
});

test('notify_customer false: status changes, no message, email_sent false', async () => {
  const { op, accountId, key } = await freshTenant(svc.url);
  await op.call('PATCH', `/accounts/${accountId}`, { notification_settings: { email_on_shipped: true, sms_on_shipped: true } });
  const order = await op.checkout(accountId);
  const res = await patchOrder(key, order.id, { status: 'shipped', notify_customer: false });
  assert.equal(res.status, 200, res.text);
  assert.equal(res.body.status_changed, true);
  assert.equal(res.body.email_sent, false);
  assert.equal(res.body.data.status, 'shipped');
  assert.deepEqual(await op.messages(accountId), []);
  // notify_customer true is the default behaviour.
  const other = await op.checkout(accountId);
  const notified = await patchOrder(key, other.id, { status: 'shipped', notify_customer: true });
  assert.equal(notified.body.email_sent, true);
});

test('email_on_shipped false: email_sent false and no email; sms_on_shipped true sends an SMS', async () => {
  const op = operator(svc.url);
  const noEmail = await op.createAccount({ notification_settings: { email_on_shipped: false, sms_on_shipped: false } });
  const k1 = await op.issueKey(noEmail.id);
  const o1 = await op.checkout(noEmail.id);
  const r1 = await patchOrder(k1, o1.id, { status: 'shipped' });
  assert.equal(r1.body.status_changed, true);
  assert.equal(r1.body.email_sent, false);
  assert.deepEqual(await op.messages(noEmail.id), []);

  const smsOnly = await op.createAccount({ notification_settings: { email_on_shipped: false, sms_on_shipped: true } });
  const k2 = await op.issueKey(smsOnly.id);
  const o2 = await op.checkout(smsOnly.id, { customer: { name: 'Ivo', email: 'ivo@example.com', phone: '+359888777666' } });
  const r2 = await patchOrder(k2, o2.id, { status: 'shipped' });
  assert.equal(r2.body.email_sent, false, 'an SMS is not an email');
  const m2 = await op.messages(smsOnly.id);
  assert.equal(m2.length, 1);
  assert.equal(m2[0].channel, 'sms');
  assert.equal(m2[0].to, '+359888777666');

  const both = await op.createAccount({ notification_settings: { email_on_shipped: true, sms_on_shipped: true } });
  const k3 = await op.issueKey(both.id);
  const o3 = await op.checkout(both.id, { customer: { name: 'Ivo', email: 'ivo@example.com', phone: '+359888777666' } });
  const r3 = await patchOrder(k3, o3.id, { status: 'shipped' });
  assert.equal(r3.body.email_sent, true);
  const m3 = await op.messages(both.id);
  assert.deepEqual(m3.map((m: any) => m.channel).sort(), ['email', 'sms']);
  assert.equal(m3.find((m: any) => m.channel === 'email').to, 'ivo@example.com');

  // Settings changed later apply to the next shipment.
  await op.call('PATCH', `/accounts/${both.id}`, { notification_settings: { email_on_shipped: false, sms_on_shipped: false } });
  const o4 = await op.checkout(both.id);
  const r4 = await patchOrder(k3, o4.id, { status: 'shipped' });
  assert.equal(r4.body.email_sent, false);
  assert.equal((await op.messages(both.id)).length, 2);

  // No customer email: nothing to send, email_sent false.
  const { op: op5, accountId: a5, key: k5 } = await freshTenant(svc.url);
  const o5 = await op5.checkout(a5, { customer: { name: 'No Mail', email: null, phone: null } });
  const r5 = await patchOrder(k5, o5.id, { status: 'shipped' });
  assert.equal(r5.body.status_changed, true);
  assert.equal(r5.body.email_sent, false);
  assert.deepEqual(await op5.messages(a5), []);
});

test('dry run (X-Merx-Dry-Run 1, true or yes) previews the change and writes nothing', async () => {
  for (const value of ['1', 'true', 'yes']) {
    const { op, accountId, key } = await freshTenant(svc.url);
    const order = await op.checkout(accountId);
    const eventsBefore = await outboxEvents(svc.service, accountId);
    const res = await patchOrder(key, order.id, { status: 'shipped', tracking_number: 'DRY-1', admin_notes: 'dry' }, DRY(value));
    assert.equal(res.status, 200, `${value}: ${res.text}`);
    assert.deepEqual(Object.keys(res.body).sort(), ['changes', 'data', 'dry_run', 'status_would_change', 'would_notify_customer'], value);
    assert.equal(res.body.dry_run, true);
    assert.deepEqual(res.body.data, order, `${value}: data is the current order`);
    assert.deepEqual(res.body.changes, { status: 'shipped', tracking_number: 'DRY-1', admin_notes: 'dry' });
    assert.equal(res.body.status_would_change, true);
    assert.equal(res.body.would_notify_customer, true);

    assert.deepEqual(await getOrder(key, order.id), order, `${value}: the order is unchanged`);
    assert.deepEqual(await outboxEvents(svc.service, accountId), eventsBefore, `${value}: no events`);
    assert.deepEqual(await op.messages(accountId), [], `${value}: no messages`);
  }
});

test('dry run previews: same status, notify_customer false, email off; validation and 404 still apply', async () => {
  const { op, accountId, key } = await freshTenant(svc.url);
  const order = await op.checkout(accountId);
  const same = await patchOrder(key, order.id, { status: 'new' }, DRY());
  assert.equal(same.status, 200);
  assert.equal(same.body.status_would_change, false);
  assert.equal(same.body.would_notify_customer, false);
  assert.ok(!('status' in same.body.changes), 'no status change to preview');

  const quiet = await patchOrder(key, order.id, { status: 'shipped', notify_customer: false }, DRY());
  assert.equal(quiet.body.status_would_change, true);
  assert.equal(quiet.body.would_notify_customer, false);
  assert.equal(quiet.body.changes.status, 'shipped');

  const notShipped = await patchOrder(key, order.id, { status: 'cancelled' }, DRY());
  assert.equal(notShipped.body.status_would_change, true);
  assert.equal(notShipped.body.would_notify_customer, false);

  await op.call('PATCH', `/accounts/${accountId}`, { notification_settings: { email_on_shipped: false, sms_on_shipped: false } });
  const off = await patchOrder(key, order.id, { status: 'shipped' }, DRY());
  assert.equal(off.body.would_notify_customer, false);

  assertError(await patchOrder(key, order.id, { bogus: 1 }, DRY()), 400, 'validation_failed', 'dry run still validates');
  assertError(await patchOrder(key, crypto.randomUUID(), { status: 'shipped' }, DRY()), 404, 'not_found', 'dry run on an unknown order');
  assertError(await patchOrder(key, 'not-a-uuid', { status: 'shipped' }, DRY()), 400, 'validation_failed', 'dry run on a bad id');

  assert.deepEqual(await getOrder(key, order.id), order);
  assert.equal((await outboxEvents(svc.service, accountId)).length, 1);
});

test("X-Merx-Dry-Run values other than 1/true/yes (e.g. 'no') are not a dry run", async () => {
  for (const value of ['no', 'false', '0']) {
    const { op, accountId, key } = await freshTenant(svc.url);
    const order = await op.checkout(accountId);
    const res = await patchOrder(key, order.id, { status: 'shipped' }, DRY(value));
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.dry_run, undefined, `${value}: not a preview`);
    assert.equal(res.body.status_changed, true);
    assert.equal(res.body.email_sent, true);
    assert.equal((await getOrder(key, order.id)).status, 'shipped', `${value}: written`);
    assert.equal((await op.messages(accountId)).length, 1);
  }
});

test('GET /orders/{id}/shipment is {data: null} when no waybill exists', async () => {
  const { op, accountId, key } = await freshTenant(svc.url);
  const order = await op.checkout(accountId);
  const res = await http(svc.url, 'GET', `/api/v1/orders/${order.id}/shipment`, { token: key });
  assert.equal(res.status, 200, res.text);
  assert.deepEqual(res.body, { data: null });
  // Shipped by PATCH (tracking set by hand) is still no waybill.
  await patchOrder(key, order.id, { status: 'shipped', tracking_number: 'HAND-1', courier: 'courier_a' });
  assert.deepEqual((await http(svc.url, 'GET', `/api/v1/orders/${order.id}/shipment`, { token: key })).body, { data: null });
  assert.equal((await getOrder(key, order.id)).shipment, null);

  const readOnly = await op.issueKey(accountId, { preset: 'read_only' });
  assert.deepEqual((await http(svc.url, 'GET', `/api/v1/orders/${order.id}/shipment`, { token: readOnly })).body, { data: null });
  assertError(await http(svc.url, 'GET', `/api/v1/orders/${crypto.randomUUID()}/shipment`, { token: key }), 404, 'not_found', 'unknown order');
});

test('order numbers are per account; ids are UUIDs; checkout view equals the API view', async () => {
  const a = await freshTenant(svc.url);
  const b = await freshTenant(svc.url);
  const a1 = await a.op.checkout(a.accountId);
  const b1 = await b.op.checkout(b.accountId);
  const a2 = await a.op.checkout(a.accountId);
  assert.equal(a1.number, 1);
  assert.equal(a2.number, 2);
  assert.equal(b1.number, 1);
  assert.notEqual(a1.order_number, b1.order_number, 'order_number is platform-wide');
  assert.notEqual(a2.order_number, a1.order_number);
  for (const o of [a1, a2, b1]) assert.match(o.id, UUID_RE);
  assert.deepEqual(await listIds(svc.url, a.key), [a2.id, a1.id]);
  const check = await http(svc.url, 'GET', `/admin/api/accounts/${a.accountId}/messages`, { token: ADMIN_TOKEN });
  assert.deepEqual(check.body, { data: [] });
});
