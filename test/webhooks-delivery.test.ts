// Webhook delivery against a real HTTPS receiver on loopback (self-signed CA
// trusted through NODE_EXTRA_CA_CERTS, WEBHOOK_ALLOW_HOSTS=127.0.0.1):
// signatures (also checked by the official stripe package), headers,
// envelope, the whole retry schedule driven by the operator's delivery job
// with `now`, 3xx, timeout, 410, the dead-endpoint email, and what stops
// deliveries (SPEC Webhook delivery status, Events, Receiver rules; GAPS Webhooks).
import { test, before, after, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import Stripe from 'stripe';
import { startTestService, http, freshTenant, type TestService } from './helpers/harness.ts';
import { startHttpsReceiver, type HttpsReceiver, type ReceiverEndpoint } from './helpers/https-receiver.ts';
import {
  isolatedDatabase,
  createWebhook,
  patchWebhook,
  getWebhook,
  deliveriesOf,
  deliveryWhen,
  touchOrder,
  runDeliveryJob,
  driveUntilSettled,
  assertSignedDelivery,
  eventually,
  type IsolatedDatabase,
  BACKOFF_SEC,
  UUID_RE,
} from './helpers/webhooks.ts';
import { verifyMerxSignature } from '../src/modules/webhooks/signing/signature.ts';

let svc: TestService;
let receiver: HttpsReceiver;
let database: IsolatedDatabase;
const stripe = new Stripe('sk_test_merx_webhook_signature_check');

before(async () => {
  receiver = await startHttpsReceiver();
  process.env.NODE_EXTRA_CA_CERTS = receiver.caFile;
  database = await isolatedDatabase();
  // WORKERS=0: no minute timer; only the operator job moves deliveries along.
  svc = await startTestService({ ...database.env, WEBHOOK_ALLOW_HOSTS: '127.0.0.1', WORKERS: '0' });
});
after(async () => {
  await svc?.close();
  await receiver?.close();
  await database?.drop();
});

const SECOND = 1000;

/** A tenant with one order and one subscription to `events` at `endpoint`; deleted after the test so no delivery lingers. */
async function setup(t: TestContext, endpoint: ReceiverEndpoint, events = ['order.updated']) {
  const tenant = await freshTenant(svc.url);
  const { data: sub, secret } = await createWebhook(svc.url, tenant.key, { url: endpoint.url, events });
  const order = await tenant.op.checkout(tenant.accountId);
  t.after(async () => {
    await http(svc.url, 'DELETE', `/api/v1/webhooks/${sub.id}`, { token: tenant.key });
  });
  return { ...tenant, sub, secret, order };
}

const deadMails = async (op: { messages(id: string): Promise<any[]> }, accountId: string) =>
  (await op.messages(accountId)).filter((m) => m.kind === 'webhook_dead');

test('an order PATCH delivers order.updated once, at once: exact headers, envelope and a signature Stripe accepts', async (t) => {
  const endpoint = receiver.endpoint();
  const { key, accountId, sub, secret, order } = await setup(t, endpoint);
  const patched = await touchOrder(svc.url, key, order.id, 'leave at the door');

  const [received] = await endpoint.waitFor(1);
  assert.equal(received.method, 'POST');
  assert.equal(received.path, endpoint.path);
  const envelope = assertSignedDelivery(received, secret, 'order.updated');
  assert.equal(envelope.account_id, accountId);
  assert.deepEqual(Object.keys(envelope.data).sort(), ['changed', 'order', 'source']);
  assert.deepEqual(envelope.data.changed, ['admin_notes']);
  assert.equal(envelope.data.source, 'api');
  assert.equal(envelope.data.order.id, order.id);
  assert.equal(envelope.data.order.admin_notes, 'leave at the door');
  assert.deepEqual(envelope.data.order, patched.data, 'data.order is the public Order view');

  // The exported verifier and the official Stripe library both accept the header value.
  const header = String(received.headers['x-merx-signature']);
  assert.equal(verifyMerxSignature(received.rawBody, header, secret), true);
  assert.equal(verifyMerxSignature(received.body, header, secret), true);
  assert.deepEqual(stripe.webhooks.constructEvent(received.rawBody, header, secret), envelope);
  assert.deepEqual(stripe.webhooks.constructEvent(received.body, header, secret), envelope);
  // ... and both refuse a tampered body, another secret, or a stale timestamp.
  const tampered = received.body.replace('leave at the door', 'leave at the gate');
  assert.equal(verifyMerxSignature(tampered, header, secret), false);
  assert.throws(() => stripe.webhooks.constructEvent(tampered, header, secret), /signature/i);
  const otherSecret = 'f'.repeat(64);
  assert.equal(verifyMerxSignature(received.body, header, otherSecret), false);
  assert.throws(() => stripe.webhooks.constructEvent(received.body, header, otherSecret), /signature/i);
  const t0 = Number(received.headers['x-merx-timestamp']);
  assert.equal(verifyMerxSignature(received.body, header, secret, 300, t0 + 300), true);
  assert.equal(verifyMerxSignature(received.body, header, secret, 300, t0 + 301), false, 'replay window is 300 s');
  assert.equal(verifyMerxSignature(received.body, header, secret, 300, t0 - 301), false);
  assert.throws(() => stripe.webhooks.constructEvent(received.body, header, secret, 300, undefined, (t0 + 301) * 1000), /timestamp/i);

  const delivery = await deliveryWhen(svc.url, key, sub.id, (d) => d.status === 'delivered');
  assert.equal(delivery.event, 'order.updated');
  assert.equal(delivery.event_id, envelope.id);
  assert.equal(delivery.attempt, 1);
  assert.equal(delivery.last_status_code, 200);
  assert.equal(delivery.last_error, null);
  assert.equal(delivery.response_body, 'ok');
  assert.notEqual(delivery.delivered_at, null);
  const listed = await getWebhook(svc.url, key, sub.id);
  assert.equal(listed.last_status_code, 200);
  assert.notEqual(listed.last_triggered_at, null);

  // Delivered is final: a worker pass a day later sends nothing more.
  await runDeliveryJob(svc.url, new Date(Date.now() + 86_400 * SECOND));
  assert.equal(endpoint.requests.length, 1, 'delivered exactly once');
  assert.equal((await deliveriesOf(svc.url, key, sub.id)).length, 1);
});

test('one event fans out to every active subscription to it, and only to those', async (t) => {
  const updated = receiver.endpoint();
  const statusOnly = receiver.endpoint();
  const { key, sub, order } = await setup(t, updated);
  const { data: other } = await createWebhook(svc.url, key, { url: statusOnly.url, events: ['order.status_changed'] });
  await touchOrder(svc.url, key, order.id);
  await updated.waitFor(1);
  await deliveryWhen(svc.url, key, sub.id, (d) => d.status === 'delivered');
  assert.equal(statusOnly.requests.length, 0);
  assert.deepEqual(await deliveriesOf(svc.url, key, other.id), []);

  const res = await http(svc.url, 'PATCH', `/api/v1/orders/${order.id}`, { token: key, body: { status: 'confirmed' } });
  assert.equal(res.status, 200);
  const [received] = await statusOnly.waitFor(1);
  const envelope = JSON.parse(received.body);
  assert.equal(envelope.event, 'order.status_changed');
  assert.equal(envelope.data.previous_status, 'new');
  assert.equal(envelope.data.status, 'confirmed');
  assert.equal(envelope.data.source, 'api');
  assert.equal(updated.requests.length, 1, 'a status change alone is not order.updated');
});

test('the whole retry schedule: attempt 1 at once, then 60, 300, 1800, 7200, 43200 s; then dead and ONE email', async (t) => {
  const endpoint = receiver.endpoint();
  endpoint.script([], { status: 500, body: 'internal error' });
  const { op, account, accountId, key, sub, secret, order } = await setup(t, endpoint);
  await touchOrder(svc.url, key, order.id);

  await endpoint.waitFor(1);
  let delivery = await deliveryWhen(svc.url, key, sub.id, (d) => d.attempt === 1 && d.last_status_code === 500);
  const recordedBy = Date.now();
  assert.equal(delivery.status, 'pending');
  assert.equal(delivery.last_error === null, false, 'a failed attempt records an error');
  assert.equal(delivery.response_body, 'internal error');
  const created = Date.parse(delivery.created_at);
  let due = Date.parse(delivery.next_attempt_at);
  assert.ok(due >= created + 60 * SECOND, `attempt 2 is due 60 s after attempt 1 (${delivery.next_attempt_at} vs created ${delivery.created_at})`);
  assert.ok(due <= recordedBy + 60 * SECOND + SECOND, `attempt 2 is due 60 s after attempt 1, not later (${delivery.next_attempt_at})`);

  // Within the first minute nothing is due.
  await runDeliveryJob(svc.url, new Date(created + 59 * SECOND));
  assert.equal(endpoint.requests.length, 1);

  for (let attempt = 2; attempt <= 6; attempt++) {
    await runDeliveryJob(svc.url, new Date(due - SECOND));
    assert.equal(endpoint.requests.length, attempt - 1, `attempt ${attempt} is not made a second early`);
    // +1 ms: the due time may carry microseconds the ISO string drops.
    const runAt = due + 1;
    assert.ok((await runDeliveryJob(svc.url, new Date(runAt))) >= 1);
    assert.equal(endpoint.requests.length, attempt, `attempt ${attempt} is made when due`);
    delivery = (await deliveriesOf(svc.url, key, sub.id))[0];
    assert.equal(delivery.attempt, attempt);
    assert.equal(delivery.last_status_code, 500);
    if (attempt < 6) {
      assert.equal(delivery.status, 'pending');
      due = Date.parse(delivery.next_attempt_at);
      assert.equal(due, runAt + BACKOFF_SEC[attempt - 1] * SECOND, `delay before attempt ${attempt + 1}`);
    } else {
      assert.equal(delivery.status, 'dead', 'the 6th failure makes the delivery dead');
    }
  }

  // Every attempt carried the same event, a fresh delivery id and a valid signature.
  const eventIds = new Set(endpoint.requests.map((r) => r.headers['x-merx-event-id']));
  assert.equal(eventIds.size, 1);
  assert.equal(new Set(endpoint.requests.map((r) => r.headers['x-merx-delivery'])).size, 6);
  for (const r of endpoint.requests) assertSignedDelivery(r, secret, 'order.updated');

  const mails = await deadMails(op, accountId);
  assert.equal(mails.length, 1, 'one email to the merchant');
  assert.equal(mails[0].channel, 'email');
  assert.equal(mails[0].to, account.email);
  const listed = await getWebhook(svc.url, key, sub.id);
  assert.notEqual(listed.dead_notified_at, null);
  assert.equal(listed.active, true, 'later events are still attempted');

  // Dead is final for the worker.
  await runDeliveryJob(svc.url, new Date(due + 7 * 86_400 * SECOND));
  assert.equal(endpoint.requests.length, 6);
  assert.equal((await deliveriesOf(svc.url, key, sub.id))[0].status, 'dead');
  assert.equal((await deadMails(op, accountId)).length, 1);
});

test('a second death sends no second email; a success clears dead_notified_at and the next death emails again', async (t) => {
  const endpoint = receiver.endpoint();
  endpoint.script([], { status: 502 });
  const { op, accountId, key, sub, order } = await setup(t, endpoint);

  const deliverOne = async (expectedRequests: number) => {
    await touchOrder(svc.url, key, order.id);
    await endpoint.waitFor(expectedRequests);
    // The PATCH committed the delivery with the event, so the newest delivery is this event's.
    const first = await eventually(async () => {
      const [newest] = await deliveriesOf(svc.url, key, sub.id);
      return newest.attempt === 1 && newest.last_status_code !== null ? newest : null;
    }, 'the first attempt');
    return driveUntilSettled(svc.url, key, sub.id, first.id);
  };

  assert.equal((await deliverOne(1)).status, 'dead');
  assert.equal((await deadMails(op, accountId)).length, 1);
  assert.equal((await deliverOne(7)).status, 'dead');
  assert.equal((await deadMails(op, accountId)).length, 1, 'one email per subscription until a delivery succeeds again');
  assert.notEqual((await getWebhook(svc.url, key, sub.id)).dead_notified_at, null);

  endpoint.script([], { status: 204 });
  assert.equal((await deliverOne(13)).status, 'delivered');
  assert.equal((await getWebhook(svc.url, key, sub.id)).dead_notified_at, null, 'a success clears dead_notified_at');

  endpoint.script([], { status: 500 });
  assert.equal((await deliverOne(14)).status, 'dead');
  assert.equal((await deadMails(op, accountId)).length, 2, 'the next death emails again');
});

test('a 3xx answer is a failed attempt and the redirect is not followed', async (t) => {
  const endpoint = receiver.endpoint();
  const elsewhere = receiver.endpoint('moved');
  endpoint.script([{ status: 301, headers: { location: elsewhere.url } }]);
  const { key, sub, order } = await setup(t, endpoint);
  await touchOrder(svc.url, key, order.id);
  await endpoint.waitFor(1);
  const delivery = await deliveryWhen(svc.url, key, sub.id, (d) => d.attempt === 1 && d.last_status_code !== null);
  assert.equal(delivery.status, 'pending');
  assert.equal(delivery.last_status_code, 301);
  assert.notEqual(delivery.last_error, null);
  assert.equal(delivery.delivered_at, null);
  assert.equal(elsewhere.requests.length, 0, 'the redirect target was never called');

  for (const status of [302, 307, 308]) {
    endpoint.script([{ status, headers: { location: elsewhere.url } }]);
    const retried = await http(svc.url, 'POST', `/api/v1/webhook-deliveries/${delivery.id}/retry`, { token: key });
    assert.equal(retried.status, 200);
    assert.equal(retried.body.ok, false, `${status} is not a success`);
    assert.equal(retried.body.status, status);
    assert.equal(retried.body.data.status, 'pending');
  }
  assert.equal(elsewhere.requests.length, 0);
});

test('an unreachable endpoint is a failed attempt (connection error)', async (t) => {
  const closedPort = await new Promise<number>((resolve) => {
    const probe = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as net.AddressInfo;
      probe.close(() => resolve(port));
    });
  });
  const tenant = await freshTenant(svc.url);
  const { data: sub } = await createWebhook(svc.url, tenant.key, { url: `https://127.0.0.1:${closedPort}/hook`, events: ['order.updated'] });
  t.after(() => http(svc.url, 'DELETE', `/api/v1/webhooks/${sub.id}`, { token: tenant.key }));
  const res = await http(svc.url, 'POST', `/api/v1/webhooks/${sub.id}/test`, { token: tenant.key });
  assert.equal(res.status, 200);
  assert.equal(res.body.data.status, 'pending');
  assert.equal(res.body.data.attempt, 1);
  assert.equal(res.body.data.last_status_code, null);
  assert.notEqual(res.body.data.last_error, null);
});

test('a receiver that does not answer within 10 s: timeout, a failed attempt', async (t) => {
  const endpoint = receiver.endpoint();
  endpoint.script([{ hang: true }]);
  const { key, sub, order } = await setup(t, endpoint);
  await touchOrder(svc.url, key, order.id);
  await endpoint.waitFor(1);
  const delivery = await eventually(
    async () => (await deliveriesOf(svc.url, key, sub.id)).find((d) => d.last_error !== null),
    'the timed-out attempt to be recorded',
    30_000,
  );
  assert.equal(delivery.status, 'pending');
  assert.equal(delivery.attempt, 1);
  assert.equal(delivery.last_status_code, null);
  assert.equal(delivery.delivered_at, null);
  assert.ok(Date.parse(delivery.next_attempt_at) > Date.parse(delivery.created_at) + 59 * SECOND, 'attempt 2 follows the backoff');

  // The next attempt (receiver answers now) delivers it.
  await runDeliveryJob(svc.url, new Date(Date.parse(delivery.next_attempt_at) + 1));
  const settled = (await deliveriesOf(svc.url, key, sub.id))[0];
  assert.equal(settled.status, 'delivered');
  assert.equal(settled.attempt, 2);
  assert.equal(endpoint.requests.length, 2);
});

test('response bodies are stored cut to 1000 characters', async (t) => {
  const endpoint = receiver.endpoint();
  endpoint.script([{ status: 500, body: 'e'.repeat(1500) }]);
  const { key, sub } = await setup(t, endpoint);
  const res = await http(svc.url, 'POST', `/api/v1/webhooks/${sub.id}/test`, { token: key });
  assert.equal(res.status, 200);
  assert.equal(res.body.data.response_body, 'e'.repeat(1000));
  assert.equal((await deliveriesOf(svc.url, key, sub.id))[0].response_body, 'e'.repeat(1000));
});

test('410: the delivery is dead, the subscription inactive, no email; an inactive subscription gets no new deliveries', async (t) => {
  const endpoint = receiver.endpoint();
  endpoint.script([{ status: 410, body: 'gone' }]);
  const { op, accountId, key, sub, order } = await setup(t, endpoint);
  await touchOrder(svc.url, key, order.id);
  await endpoint.waitFor(1);
  const delivery = await deliveryWhen(svc.url, key, sub.id, (d) => d.status === 'dead');
  assert.equal(delivery.attempt, 1);
  assert.equal(delivery.last_status_code, 410);
  const listed = await getWebhook(svc.url, key, sub.id);
  assert.equal(listed.active, false);
  assert.equal(listed.dead_notified_at, null);
  assert.deepEqual(await deadMails(op, accountId), [], 'a 410 sends no email');

  await touchOrder(svc.url, key, order.id);
  await runDeliveryJob(svc.url, new Date(Date.now() + 86_400 * SECOND));
  assert.equal((await deliveriesOf(svc.url, key, sub.id)).length, 1, 'no delivery for an inactive subscription');
  assert.equal(endpoint.requests.length, 1);

  // Re-activated, it gets the next event again.
  await patchWebhook(svc.url, key, sub.id, { active: true });
  await touchOrder(svc.url, key, order.id);
  await endpoint.waitFor(2);
  await deliveryWhen(svc.url, key, sub.id, (d) => d.status === 'delivered');
});

test('a 410 on a later attempt also kills the delivery and deactivates', async (t) => {
  const endpoint = receiver.endpoint();
  endpoint.script([{ status: 500 }, { status: 410 }]);
  const { op, accountId, key, sub, order } = await setup(t, endpoint);
  await touchOrder(svc.url, key, order.id);
  await endpoint.waitFor(1);
  const first = await deliveryWhen(svc.url, key, sub.id, (d) => d.attempt === 1 && d.last_status_code === 500);
  const settled = await driveUntilSettled(svc.url, key, sub.id, first.id);
  assert.equal(settled.status, 'dead');
  assert.equal(settled.attempt, 2);
  assert.equal((await getWebhook(svc.url, key, sub.id)).active, false);
  assert.deepEqual(await deadMails(op, accountId), []);
});

test('retry of a dead delivery: a failure keeps it dead without another email; a success delivers it and clears dead_notified_at', async (t) => {
  const endpoint = receiver.endpoint();
  endpoint.script([], { status: 500 });
  const { op, accountId, key, sub, order } = await setup(t, endpoint);
  await touchOrder(svc.url, key, order.id);
  await endpoint.waitFor(1);
  const first = await deliveryWhen(svc.url, key, sub.id, (d) => d.attempt === 1 && d.last_status_code === 500);
  assert.equal((await driveUntilSettled(svc.url, key, sub.id, first.id)).status, 'dead');
  assert.equal((await deadMails(op, accountId)).length, 1);

  const failedAgain = await http(svc.url, 'POST', `/api/v1/webhook-deliveries/${first.id}/retry`, { token: key });
  assert.equal(failedAgain.status, 200);
  assert.equal(failedAgain.body.ok, false);
  assert.equal(failedAgain.body.status, 500);
  assert.notEqual(failedAgain.body.data.status, 'delivered');
  assert.equal(failedAgain.body.data.attempt, 7);
  assert.equal((await deadMails(op, accountId)).length, 1, 'a failed manual retry sends no email');

  endpoint.script([], { status: 200 });
  const succeeded = await http(svc.url, 'POST', `/api/v1/webhook-deliveries/${first.id}/retry`, { token: key });
  assert.equal(succeeded.body.ok, true);
  assert.equal(succeeded.body.data.status, 'delivered');
  assert.notEqual(succeeded.body.data.delivered_at, null);
  assert.equal((await getWebhook(svc.url, key, sub.id)).dead_notified_at, null, 'a success clears dead_notified_at');
  assert.equal(endpoint.requests.length, 8);
});

test('retry of a 410-dead delivery of the now inactive subscription still sends it', async (t) => {
  const endpoint = receiver.endpoint();
  endpoint.script([{ status: 410 }], { status: 200 });
  const { key, sub, secret, order } = await setup(t, endpoint);
  await touchOrder(svc.url, key, order.id);
  await endpoint.waitFor(1);
  const dead = await deliveryWhen(svc.url, key, sub.id, (d) => d.status === 'dead');
  assert.equal((await getWebhook(svc.url, key, sub.id)).active, false);
  const retried = await http(svc.url, 'POST', `/api/v1/webhook-deliveries/${dead.id}/retry`, { token: key });
  assert.equal(retried.status, 200, retried.text);
  assert.equal(retried.body.ok, true);
  assert.equal(retried.body.data.status, 'delivered');
  assert.equal(endpoint.requests.length, 2);
  assertSignedDelivery(endpoint.requests[1], secret, 'order.updated');
});

test('deleting a subscription stops its pending deliveries at once', async (t) => {
  const endpoint = receiver.endpoint();
  endpoint.script([], { status: 500 });
  const { key, sub, order } = await setup(t, endpoint);
  await touchOrder(svc.url, key, order.id);
  await endpoint.waitFor(1);
  const pending = await deliveryWhen(svc.url, key, sub.id, (d) => d.attempt === 1 && d.last_status_code === 500);
  const res = await http(svc.url, 'DELETE', `/api/v1/webhooks/${sub.id}`, { token: key });
  assert.equal(res.status, 200);
  await runDeliveryJob(svc.url, new Date(Date.parse(pending.next_attempt_at) + 86_400 * SECOND));
  assert.equal(endpoint.requests.length, 1, 'no attempt after the delete');
  assert.equal((await http(svc.url, 'POST', `/api/v1/webhook-deliveries/${pending.id}/retry`, { token: key })).status, 404);
});

test('deactivated while waiting: the delivery becomes failed without an attempt; the retry endpoint still sends it', async (t) => {
  const endpoint = receiver.endpoint();
  endpoint.script([{ status: 500 }], { status: 200 });
  const { key, sub, secret, order } = await setup(t, endpoint);
  await touchOrder(svc.url, key, order.id);
  await endpoint.waitFor(1);
  const pending = await deliveryWhen(svc.url, key, sub.id, (d) => d.attempt === 1 && d.last_status_code === 500);
  await patchWebhook(svc.url, key, sub.id, { active: false });
  await runDeliveryJob(svc.url, new Date(Date.parse(pending.next_attempt_at) + 1));
  const failed = (await deliveriesOf(svc.url, key, sub.id))[0];
  assert.equal(failed.status, 'failed');
  assert.equal(endpoint.requests.length, 1, 'no attempt for an inactive subscription');
  await runDeliveryJob(svc.url, new Date(Date.now() + 86_400 * SECOND));
  assert.equal(endpoint.requests.length, 1, 'failed gets no automatic retries');

  const retried = await http(svc.url, 'POST', `/api/v1/webhook-deliveries/${pending.id}/retry`, { token: key });
  assert.equal(retried.status, 200, retried.text);
  assert.equal(retried.body.ok, true);
  assert.equal(retried.body.data.status, 'delivered');
  assert.equal(endpoint.requests.length, 2);
  assertSignedDelivery(endpoint.requests[1], secret, 'order.updated');
});

test('the URL is re-checked before every attempt: a target no longer allowed is not called', async (t) => {
  // The operator removes 127.0.0.1 from WEBHOOK_ALLOW_HOSTS and restarts on the same data.
  const data = await isolatedDatabase({ onDisk: true });
  t.after(() => data.drop());
  const first = await startTestService({ ...data.env, WEBHOOK_ALLOW_HOSTS: '127.0.0.1', WORKERS: '0' });
  const endpoint = receiver.endpoint();
  endpoint.script([{ status: 500 }], { status: 200 });
  const tenant = await freshTenant(first.url);
  let pending: any;
  try {
    const { data: sub } = await createWebhook(first.url, tenant.key, { url: endpoint.url, events: ['order.updated'] });
    const order = await tenant.op.checkout(tenant.accountId);
    await touchOrder(first.url, tenant.key, order.id);
    await endpoint.waitFor(1);
    pending = await deliveryWhen(first.url, tenant.key, sub.id, (d) => d.attempt === 1 && d.last_status_code === 500);
  } finally {
    await first.close();
  }
  const second = await startTestService({ ...data.env, WEBHOOK_ALLOW_HOSTS: '', WORKERS: '0' });
  try {
    await runDeliveryJob(second.url, new Date(Date.parse(pending.next_attempt_at) + 1));
    const [after] = await deliveriesOf(second.url, tenant.key, pending.webhook_id);
    assert.equal(after.status, 'failed', 'GAPS: a URL failing the re-check stops the delivery as failed');
    assert.notEqual(after.last_error, null);
    assert.equal(endpoint.requests.length, 1, 'the refused target was not called');
    const retried = await http(second.url, 'POST', `/api/v1/webhook-deliveries/${pending.id}/retry`, { token: tenant.key });
    assert.equal(retried.status, 200, retried.text);
    assert.equal(retried.body.ok, false);
    assert.equal(endpoint.requests.length, 1, 'the retry endpoint re-checks the URL too');
  } finally {
    await second.close();
  }
});

test('delivery ids, event ids and the X-Merx-Delivery header are distinct per attempt and per event', async (t) => {
  const endpoint = receiver.endpoint();
  const { key, sub, order } = await setup(t, endpoint);
  await touchOrder(svc.url, key, order.id, 'one');
  await touchOrder(svc.url, key, order.id, 'two');
  await endpoint.waitFor(2);
  const deliveries = await eventually(async () => {
    const list = await deliveriesOf(svc.url, key, sub.id);
    return list.length === 2 && list.every((d) => d.status === 'delivered') ? list : null;
  }, 'both deliveries');
  for (const d of deliveries) {
    assert.match(d.id, UUID_RE);
    assert.match(d.event_id, UUID_RE);
  }
  assert.notEqual(deliveries[0].event_id, deliveries[1].event_id);
  assert.deepEqual(new Set(endpoint.requests.map((r) => r.headers['x-merx-event-id'])), new Set(deliveries.map((d) => d.event_id)));
  assert.notEqual(endpoint.requests[0].headers['x-merx-delivery'], endpoint.requests[1].headers['x-merx-delivery']);
});
