// SPEC Events (envelope, order.* events and their data) and Endpoints >
// Orders ("PATCH emits ..."); OPERATOR_API checkout, payment, merchant status
// and edit. Read from the events outbox (harness outboxEvents()).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { startTestService, http, freshTenant, outboxEvents, type TestService } from './helpers/harness.ts';
import { assertOrderView, ISO_RE, UUID_RE } from './helpers/contract.ts';

let svc: TestService;
before(async () => {
  svc = await startTestService();
});
after(async () => {
  await svc.close();
});

/** Reads the outbox and returns the events that appeared since the last call. */
function eventTracker(accountId: string) {
  const seen = new Set<string>();
  return {
    async fresh(): Promise<any[]> {
      const rows = await outboxEvents(svc.service, accountId);
      const out = rows.filter((r: any) => !seen.has(r.id));
      for (const r of out) seen.add(r.id);
      return out;
    },
  };
}

function only(events: any[], name: string): any {
  const matching = events.filter((e) => e.event === name);
  assert.equal(matching.length, 1, `exactly one ${name} in ${JSON.stringify(events.map((e) => e.event))}`);
  return matching[0];
}

function assertEnvelope(event: any, accountId: string): void {
  assert.deepEqual(Object.keys(event).sort(), ['account_id', 'api_version', 'created_at', 'data', 'event', 'id']);
  assert.match(event.id, UUID_RE);
  assert.equal(event.account_id, accountId);
  assert.equal(event.api_version, '2026-09-01');
  assert.match(String(event.created_at), ISO_RE);
  assert.ok(event.data && typeof event.data === 'object' && !Array.isArray(event.data));
  if (event.data.order) assertOrderView(event.data.order, `${event.event} data.order`);
}

async function patch(key: string, id: string, body: unknown, headers: Record<string, string> = {}) {
  return http(svc.url, 'PATCH', `/api/v1/orders/${id}`, { token: key, body, headers });
}

test('checkout emits order.created {order} with the envelope fields', async () => {
  const { op, accountId } = await freshTenant(svc.url);
  const events = eventTracker(accountId);
  const order = await op.checkout(accountId);
  const fresh = await events.fresh();
  assert.deepEqual(
    fresh.map((e) => e.event),
    ['order.created'],
  );
  const created = fresh[0];
  assertEnvelope(created, accountId);
  assert.deepEqual(Object.keys(created.data), ['order']);
  assert.deepEqual(created.data.order, order, 'data.order is the public Order view');
  assert.ok(Date.parse(created.created_at) >= Date.parse(order.created_at) - 1000);

  const second = await op.checkout(accountId);
  const next = await events.fresh();
  assert.deepEqual(
    next.map((e) => e.event),
    ['order.created'],
  );
  assert.equal(next[0].data.order.id, second.id);
  assert.notEqual(next[0].id, created.id, 'every event has its own id');
});

test('PATCH of tracking emits order.updated {order, changed: ["tracking_number"], source: "api"} and nothing else', async () => {
  const { op, accountId, key } = await freshTenant(svc.url);
  const order = await op.checkout(accountId);
  const events = eventTracker(accountId);
  await events.fresh();
  const res = await patch(key, order.id, { tracking_number: 'EV-1' });
  assert.equal(res.status, 200, res.text);
  const fresh = await events.fresh();
  assert.deepEqual(
    fresh.map((e) => e.event),
    ['order.updated'],
  );
  const updated = fresh[0];
  assertEnvelope(updated, accountId);
  assert.deepEqual(Object.keys(updated.data).sort(), ['changed', 'order', 'source']);
  assert.deepEqual(updated.data.changed, ['tracking_number']);
  assert.equal(updated.data.source, 'api');
  assert.equal(updated.data.order.tracking_number, 'EV-1');
  assert.deepEqual(updated.data.order, res.body.data, 'the order after the change');

  const res2 = await patch(key, order.id, {
    courier: 'courier_c',
    tracking_url: 'https://t.example/EV-1',
    admin_notes: 'note',
    tracking_number: 'EV-1',
  });
  assert.equal(res2.status, 200);
  const two = only(await events.fresh(), 'order.updated');
  assert.deepEqual([...two.data.changed].sort(), ['admin_notes', 'courier', 'tracking_url'], 'only the fields that changed');
  assert.equal(two.data.source, 'api');
});

test('a status change emits order.status_changed {order, previous_status, status, source: "api"}', async () => {
  const { op, accountId, key } = await freshTenant(svc.url);
  const order = await op.checkout(accountId);
  const events = eventTracker(accountId);
  await events.fresh();

  const res = await patch(key, order.id, { status: 'confirmed' });
  assert.equal(res.status, 200, res.text);
  const fresh = await events.fresh();
  assert.deepEqual(
    fresh.map((e) => e.event),
    ['order.status_changed'],
    'no order.updated for a status-only change',
  );
  const changed = fresh[0];
  assertEnvelope(changed, accountId);
  assert.deepEqual(Object.keys(changed.data).sort(), ['order', 'previous_status', 'source', 'status']);
  assert.equal(changed.data.previous_status, 'new');
  assert.equal(changed.data.status, 'confirmed');
  assert.equal(changed.data.source, 'api');
  assert.equal(changed.data.order.status, 'confirmed');

  // Status and tracking together: both events.
  const both = await patch(key, order.id, { status: 'shipped', tracking_number: 'EV-2' });
  assert.equal(both.status, 200);
  const fresh2 = await events.fresh();
  assert.deepEqual(fresh2.map((e) => e.event).sort(), ['order.status_changed', 'order.updated']);
  const sc = only(fresh2, 'order.status_changed');
  assert.equal(sc.data.previous_status, 'confirmed');
  assert.equal(sc.data.status, 'shipped');
  assert.equal(sc.data.source, 'api');
  const up = only(fresh2, 'order.updated');
  assert.deepEqual(up.data.changed, ['tracking_number']);
  assert.equal(up.data.source, 'api');

  // Every listed transition target emits with the right previous status.
  let previous = 'shipped';
  for (const status of ['delivered', 'returned', 'refunded', 'archived', 'processing', 'cancelled', 'new']) {
    const r = await patch(key, order.id, { status });
    assert.equal(r.status, 200, `${previous} -> ${status}: ${r.text}`);
    const e = only(await events.fresh(), 'order.status_changed');
    assert.equal(e.data.previous_status, previous);
    assert.equal(e.data.status, status);
    previous = status;
  }
});

test('merchant and automation status changes carry their source (default merchant)', async () => {
  const { op, accountId } = await freshTenant(svc.url);
  const order = await op.checkout(accountId);
  const events = eventTracker(accountId);
  await events.fresh();

  const viaAutomation = await op.setStatus(order.id, 'confirmed', 'automation');
  assert.equal(viaAutomation.status, 'confirmed');
  const a = only(await events.fresh(), 'order.status_changed');
  assertEnvelope(a, accountId);
  assert.equal(a.data.source, 'automation');
  assert.equal(a.data.previous_status, 'new');
  assert.equal(a.data.status, 'confirmed');

  await op.setStatus(order.id, 'processing');
  const m = only(await events.fresh(), 'order.status_changed');
  assert.equal(m.data.source, 'merchant');
  assert.equal(m.data.previous_status, 'confirmed');

  await op.setStatus(order.id, 'processing', 'merchant');
  assert.deepEqual(await events.fresh(), [], 'the same status emits nothing');
});

test('payment paid emits order.paid {order, previous_payment_status, source: "payment"}', async () => {
  const { op, accountId } = await freshTenant(svc.url);
  const order = await op.checkout(accountId);
  const events = eventTracker(accountId);
  await events.fresh();

  const paid = await op.pay(order.id, 'paid');
  assert.equal(paid.payment_status, 'paid');
  const fresh = await events.fresh();
  const e = only(fresh, 'order.paid');
  assertEnvelope(e, accountId);
  assert.deepEqual(Object.keys(e.data).sort(), ['order', 'previous_payment_status', 'source']);
  assert.equal(e.data.previous_payment_status, 'pending');
  assert.equal(e.data.source, 'payment');
  assert.equal(e.data.order.payment_status, 'paid');
  assert.equal(fresh.filter((x) => x.event === 'order.status_changed').length, 0, 'payment is not a status change');

  await op.pay(order.id, 'paid');
  assert.equal((await events.fresh()).filter((x) => x.event === 'order.paid').length, 0, 'already paid: no second order.paid');
  await op.pay(order.id, 'refunded');
  assert.equal((await events.fresh()).filter((x) => x.event === 'order.paid').length, 0, 'refunded is not paid');

  const card = await op.checkout(accountId, { payment_method: 'card', payment_status: 'failed' });
  await events.fresh();
  await op.pay(card.id, 'paid');
  assert.equal(only(await events.fresh(), 'order.paid').data.previous_payment_status, 'failed');
});

test('a merchant edit of the shipping address emits order.updated with the changed columns', async () => {
  const { op, accountId } = await freshTenant(svc.url);
  const order = await op.checkout(accountId);
  const events = eventTracker(accountId);
  await events.fresh();

  const edited = await op.call('PATCH', `/orders/${order.id}`, { shipping: { city: 'Plovdiv', zip: '4000', address: 'ul. Glavna 5' } });
  assert.equal(edited.data.shipping.city, 'Plovdiv');
  const fresh = await events.fresh();
  assert.deepEqual(
    fresh.map((e) => e.event),
    ['order.updated'],
  );
  const e = fresh[0];
  assertEnvelope(e, accountId);
  for (const column of ['shipping_city', 'shipping_zip', 'shipping_address']) {
    assert.ok(e.data.changed.includes(column), `changed includes ${column}: ${JSON.stringify(e.data.changed)}`);
  }
  assert.equal(e.data.source, 'merchant');
  assert.equal(e.data.order.shipping.city, 'Plovdiv');
  assert.equal(e.data.order.shipping.zip, '4000');

  await op.call('PATCH', `/orders/${order.id}`, { shipping: { city: 'Plovdiv' } });
  assert.deepEqual(await events.fresh(), [], 'an unchanged value emits nothing');

  await op.call('PATCH', `/orders/${order.id}`, { admin_notes: 'call first' });
  const notes = only(await events.fresh(), 'order.updated');
  assert.deepEqual(notes.data.changed, ['admin_notes']);
  assert.equal(notes.data.source, 'merchant');
});

test('failing, refused, dry-run and no-op PATCHes write no event', async () => {
  const { op, accountId, key } = await freshTenant(svc.url);
  const order = await op.checkout(accountId);
  const readOnly = await op.issueKey(accountId, { scopes: ['orders:read'] });
  const other = await freshTenant(svc.url);
  const events = eventTracker(accountId);
  await events.fresh();

  const attempts = [
    await patch(key, order.id, { status: 'shipped', bogus: true }),
    await patch(key, order.id, { status: 'teleported' }),
    await patch(key, order.id, { tracking_number: 42 }),
    await http(svc.url, 'PATCH', `/api/v1/orders/${order.id}`, {
      token: key,
      rawBody: '{"status":',
      headers: { 'content-type': 'application/json' },
    }),
    await patch(other.key, order.id, { status: 'shipped' }),
    await patch(readOnly, order.id, { status: 'shipped' }),
    await http(svc.url, 'PATCH', `/api/v1/orders/${order.id}`, { body: { status: 'shipped' } }),
    await patch(key, crypto.randomUUID(), { status: 'shipped' }),
  ];
  assert.deepEqual(
    attempts.map((r) => r.status),
    [400, 400, 400, 400, 404, 403, 401, 404],
  );
  const dry = await patch(key, order.id, { status: 'shipped', tracking_number: 'D' }, { 'x-merx-dry-run': 'yes' });
  assert.equal(dry.status, 200);
  assert.equal(dry.body.dry_run, true);
  const same = await patch(key, order.id, { status: 'new', tracking_number: null });
  assert.equal(same.status, 200);
  assert.equal(same.body.status_changed, false);
  const empty = await patch(key, order.id, {});
  assert.equal(empty.status, 200);

  assert.deepEqual(await events.fresh(), [], 'no events');
  assert.deepEqual(await outboxEvents(svc.service, other.accountId), [], 'nothing in the other account either');
});

test('events are per account and every order event carries the public view', async () => {
  const a = await freshTenant(svc.url);
  const b = await freshTenant(svc.url);
  const oa = await a.op.checkout(a.accountId);
  const ob = await b.op.checkout(b.accountId);
  await patch(a.key, oa.id, { status: 'shipped', tracking_number: 'A-1' });
  await a.op.pay(oa.id);
  await b.op.setStatus(ob.id, 'cancelled');

  const ea = await outboxEvents(svc.service, a.accountId);
  const eb = await outboxEvents(svc.service, b.accountId);
  assert.deepEqual(ea.map((e: any) => e.event).sort(), ['order.created', 'order.paid', 'order.status_changed', 'order.updated']);
  assert.deepEqual(eb.map((e: any) => e.event).sort(), ['order.created', 'order.status_changed']);
  for (const e of ea) {
    assertEnvelope(e, a.accountId);
    assert.equal(e.data.order.id, oa.id);
  }
  for (const e of eb) {
    assertEnvelope(e, b.accountId);
    assert.equal(e.data.order.id, ob.id);
  }
  const ids = [...ea, ...eb].map((e: any) => e.id);
  assert.equal(new Set(ids).size, ids.length, 'event ids are unique');
});
