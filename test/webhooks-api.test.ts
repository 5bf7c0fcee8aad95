// Webhook subscriptions, deliveries list, test and retry endpoints, their
// limits, the debug sink and the MCP webhook tools, as an integrator sees them
// (SPEC Webhook subscription / delivery, Endpoints > Webhooks, Debug sink,
// Limits; GAPS Webhooks).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { startTestService, http, freshTenant, type TestService } from './helpers/harness.ts';
import { startHttpsReceiver, type HttpsReceiver } from './helpers/https-receiver.ts';
import { callTool, rpc, request, assertRefusal } from './helpers/mcp.ts';
import {
  isolatedDatabase,
  createWebhook,
  patchWebhook,
  listWebhooks,
  getWebhook,
  deliveriesOf,
  deliveryWhen,
  touchOrder,
  driveUntilSettled,
  sinkCaptures,
  assertSignedDelivery,
  type IsolatedDatabase,
  UUID_RE,
  SUBSCRIPTION_FIELDS,
  DELIVERY_FIELDS,
  SUBSCRIBABLE_EVENTS,
} from './helpers/webhooks.ts';
import { verifyMerxSignature } from '../src/modules/webhooks/signing/signature.ts';

let svc: TestService;
let receiver: HttpsReceiver;
let database: IsolatedDatabase;

before(async () => {
  receiver = await startHttpsReceiver();
  // The sender reads NODE_EXTRA_CA_CERTS at send time (GAPS Webhooks: extra trusted CAs).
  process.env.NODE_EXTRA_CA_CERTS = receiver.caFile;
  database = await isolatedDatabase();
  svc = await startTestService({ ...database.env, WEBHOOK_ALLOW_HOSTS: '127.0.0.1', WORKERS: '0' });
});
after(async () => {
  await svc?.close();
  await receiver?.close();
  await database?.drop();
});

/** A subscription URL that passes the policy without DNS and is never called in these tests. */
const INERT_URL = 'https://93.184.216.34/hooks/merx';

test('create returns the 64-hex secret once; views are closed and never show it again', async () => {
  const { key } = await freshTenant(svc.url);
  const res = await http(svc.url, 'POST', '/api/v1/webhooks', {
    token: key,
    body: { url: INERT_URL, events: ['order.updated', 'order.created'], description: 'ERP' },
  });
  assert.equal(res.status, 201);
  assert.deepEqual(Object.keys(res.body).sort(), ['data', 'secret']);
  const { data: sub, secret } = res.body;
  assert.match(secret, /^[0-9a-f]{64}$/);
  assert.deepEqual(Object.keys(sub).sort(), SUBSCRIPTION_FIELDS);
  assert.match(sub.id, UUID_RE);
  assert.equal(sub.url, INERT_URL);
  assert.equal(sub.description, 'ERP');
  assert.deepEqual([...sub.events].sort(), ['order.created', 'order.updated']);
  assert.equal(sub.active, true);
  assert.equal(sub.secret_prefix, `${secret.slice(0, 8)}…`);
  assert.equal(sub.last_triggered_at, null);
  assert.equal(sub.last_status_code, null);
  assert.equal(sub.dead_notified_at, null);

  const list = await http(svc.url, 'GET', '/api/v1/webhooks', { token: key });
  assert.equal(list.status, 200);
  assert.deepEqual(Object.keys(list.body).sort(), ['data', 'events']);
  assert.deepEqual([...list.body.events].sort(), [...SUBSCRIBABLE_EVENTS].sort());
  assert.ok(!list.body.events.includes('test'), '`test` is not subscribable');
  assert.equal(list.body.data.length, 1);
  assert.deepEqual(Object.keys(list.body.data[0]).sort(), SUBSCRIPTION_FIELDS);
  assert.equal(list.body.data[0].secret_prefix, sub.secret_prefix);
  assert.ok(!list.text.includes(secret), 'the list never carries the secret');

  const patched = await http(svc.url, 'PATCH', `/api/v1/webhooks/${sub.id}`, { token: key, body: { description: 'BI' } });
  assert.equal(patched.status, 200);
  assert.deepEqual(Object.keys(patched.body), ['data']);
  assert.equal(patched.body.data.description, 'BI');
  assert.ok(!patched.text.includes(secret), 'PATCH never carries the secret');
});

test('unknown event names give 400 with details.allowed; `test` is not subscribable; bad bodies give 400', async () => {
  const { key } = await freshTenant(svc.url);
  for (const events of [['order.updated', 'order.exploded'], ['test']]) {
    const res = await http(svc.url, 'POST', '/api/v1/webhooks', { token: key, body: { url: INERT_URL, events } });
    assert.equal(res.status, 400, res.text);
    assert.equal(res.body.error.code, 'validation_failed');
    assert.deepEqual([...res.body.error.details.allowed].sort(), [...SUBSCRIBABLE_EVENTS].sort());
  }
  for (const body of [
    { url: INERT_URL, events: [] },
    { url: INERT_URL },
    { events: ['order.updated'] },
    { url: INERT_URL, events: ['order.updated'], secret: 'x' },
  ]) {
    const res = await http(svc.url, 'POST', '/api/v1/webhooks', { token: key, body });
    assert.equal(res.status, 400, `${JSON.stringify(body)} -> ${res.status}`);
    assert.equal(res.body.error.code, 'validation_failed');
  }
  const { data: sub } = await createWebhook(svc.url, key, { url: INERT_URL, events: ['order.updated'] });
  const res = await http(svc.url, 'PATCH', `/api/v1/webhooks/${sub.id}`, { token: key, body: { events: ['nope'] } });
  assert.equal(res.status, 400);
  assert.deepEqual([...res.body.error.details.allowed].sort(), [...SUBSCRIBABLE_EVENTS].sort());
  assert.deepEqual((await getWebhook(svc.url, key, sub.id)).events, ['order.updated'], 'a refused PATCH changes nothing');
});

test('an account has at most 20 subscriptions: the 21st gives 409', async () => {
  const { key } = await freshTenant(svc.url);
  for (let i = 0; i < 20; i++) await createWebhook(svc.url, key, { url: `${INERT_URL}/${i}`, events: ['order.updated'] });
  const res = await http(svc.url, 'POST', '/api/v1/webhooks', { token: key, body: { url: INERT_URL, events: ['order.updated'] } });
  assert.equal(res.status, 409, res.text);
  assert.equal(res.body.error.code, 'conflict');
  assert.equal((await listWebhooks(svc.url, key)).data.length, 20);
  // Another account is not affected.
  const other = await freshTenant(svc.url);
  await createWebhook(svc.url, other.key, { url: INERT_URL, events: ['order.updated'] });
});

test('PATCH active: false deactivates; active: true clears dead_notified_at so the next death emails again', async () => {
  const { op, accountId, account, key } = await freshTenant(svc.url);
  const endpoint = receiver.endpoint();
  endpoint.script([], { status: 500, body: 'down' });
  const { data: sub } = await createWebhook(svc.url, key, { url: endpoint.url, events: ['order.updated'] });
  const order = await op.checkout(accountId);

  const dieOnce = async (expectedRequests: number) => {
    await touchOrder(svc.url, key, order.id);
    await endpoint.waitFor(expectedRequests);
    const first = await deliveryWhen(svc.url, key, sub.id, (d) => d.status === 'pending' && d.attempt === 1 && d.last_status_code === 500);
    const settled = await driveUntilSettled(svc.url, key, sub.id, first.id);
    assert.equal(settled.status, 'dead');
    assert.equal(settled.attempt, 6);
  };
  const deadMails = async () => (await op.messages(accountId)).filter((m) => m.kind === 'webhook_dead');

  await dieOnce(1);
  assert.equal((await deadMails()).length, 1);
  const notified = await getWebhook(svc.url, key, sub.id);
  assert.notEqual(notified.dead_notified_at, null);
  assert.equal(notified.active, true, 'six failures do not deactivate the subscription');

  const off = await patchWebhook(svc.url, key, sub.id, { active: false });
  assert.equal(off.active, false);
  const on = await patchWebhook(svc.url, key, sub.id, { active: true });
  assert.equal(on.active, true);
  assert.equal(on.dead_notified_at, null, 'activating clears the dead-notification flag');

  await dieOnce(7);
  assert.equal((await deadMails()).length, 2, 'after re-activation the next death emails again');

  // active: true on a subscription that is already active clears the flag too.
  assert.notEqual((await getWebhook(svc.url, key, sub.id)).dead_notified_at, null);
  assert.equal((await patchWebhook(svc.url, key, sub.id, { active: true })).dead_notified_at, null);
  await dieOnce(13);
  const mails = await deadMails();
  assert.equal(mails.length, 3);
  for (const mail of mails) {
    assert.equal(mail.channel, 'email');
    assert.equal(mail.to, account.email);
  }
});

test('DELETE answers {data: {id, deleted: true}} and removes the deliveries', async () => {
  const { op, accountId, key } = await freshTenant(svc.url);
  const endpoint = receiver.endpoint();
  const { data: sub } = await createWebhook(svc.url, key, { url: endpoint.url, events: ['order.updated'] });
  const order = await op.checkout(accountId);
  await touchOrder(svc.url, key, order.id);
  const delivery = await deliveryWhen(svc.url, key, sub.id, (d) => d.status === 'delivered');

  const res = await http(svc.url, 'DELETE', `/api/v1/webhooks/${sub.id}`, { token: key });
  assert.equal(res.status, 200, res.text);
  assert.deepEqual(res.body, { data: { id: sub.id, deleted: true } });
  assert.equal((await listWebhooks(svc.url, key)).data.length, 0);
  const list = await http(svc.url, 'GET', `/api/v1/webhooks/${sub.id}/deliveries`, { token: key });
  assert.equal(list.status, 404);
  assert.equal(list.body.error.code, 'not_found');
  const retry = await http(svc.url, 'POST', `/api/v1/webhook-deliveries/${delivery.id}/retry`, { token: key });
  assert.equal(retry.status, 404, 'its deliveries are gone');
  const again = await http(svc.url, 'DELETE', `/api/v1/webhooks/${sub.id}`, { token: key });
  assert.equal(again.status, 404);
});

test('subscriptions and deliveries of another account are 404', async () => {
  const a = await freshTenant(svc.url);
  const b = await freshTenant(svc.url);
  const endpoint = receiver.endpoint();
  const { data: sub } = await createWebhook(svc.url, a.key, { url: endpoint.url, events: ['order.updated'] });
  const test1 = await http(svc.url, 'POST', `/api/v1/webhooks/${sub.id}/test`, { token: a.key });
  assert.equal(test1.status, 200);
  for (const [method, path, body] of [
    ['PATCH', `/api/v1/webhooks/${sub.id}`, { active: false }],
    ['DELETE', `/api/v1/webhooks/${sub.id}`, undefined],
    ['GET', `/api/v1/webhooks/${sub.id}/deliveries`, undefined],
    ['POST', `/api/v1/webhooks/${sub.id}/test`, undefined],
    ['POST', `/api/v1/webhook-deliveries/${test1.body.data.id}/retry`, undefined],
  ] as const) {
    const res = await http(svc.url, method, path, { token: b.key, body });
    assert.equal(res.status, 404, `${method} ${path} from another account: ${res.status}`);
    assert.equal(res.body.error.code, 'not_found');
  }
  assert.equal((await getWebhook(svc.url, a.key, sub.id)).active, true);
});

test('deliveries list: newest first, default 30, limit 1..200 (0, 201 and junk give 400)', async () => {
  const { op, accountId, key } = await freshTenant(svc.url);
  const endpoint = receiver.endpoint();
  const { data: sub } = await createWebhook(svc.url, key, { url: endpoint.url, events: ['order.updated'] });
  const order = await op.checkout(accountId);
  const notes: string[] = [];
  for (let i = 0; i < 31; i++) {
    notes.push(`note ${i}`);
    await touchOrder(svc.url, key, order.id, `note ${i}`);
  }
  await endpoint.waitFor(31);

  const all = await deliveriesOf(svc.url, key, sub.id, 200);
  assert.equal(all.length, 31);
  for (const d of all) assert.deepEqual(Object.keys(d).sort(), DELIVERY_FIELDS);
  for (let i = 1; i < all.length; i++) {
    assert.ok(Date.parse(all[i - 1].created_at) >= Date.parse(all[i].created_at), 'newest first');
  }
  const noteOf = new Map(endpoint.requests.map((r) => [r.headers['x-merx-event-id'], JSON.parse(r.body).data.order.admin_notes]));
  assert.deepEqual(
    all.map((d) => noteOf.get(d.event_id)),
    [...notes].reverse(),
    'ordered by the events, newest first',
  );

  const byDefault = await deliveriesOf(svc.url, key, sub.id);
  assert.equal(byDefault.length, 30);
  assert.deepEqual(
    byDefault.map((d) => d.id),
    all.slice(0, 30).map((d) => d.id),
  );
  assert.deepEqual(
    (await deliveriesOf(svc.url, key, sub.id, 1)).map((d) => d.id),
    [all[0].id],
  );
  for (const bad of ['0', '201', '-1', 'abc', '1.5', '']) {
    const res = await http(svc.url, 'GET', `/api/v1/webhooks/${sub.id}/deliveries?limit=${bad}`, { token: key });
    assert.equal(res.status, 400, `limit=${bad} -> ${res.status}`);
    assert.equal(res.body.error.code, 'validation_failed');
  }
  const unknownParam = await http(svc.url, 'GET', `/api/v1/webhooks/${sub.id}/deliveries?colour=dead`, { token: key });
  assert.equal(unknownParam.status, 400);
  const notUuid = await http(svc.url, 'GET', '/api/v1/webhooks/123/deliveries', { token: key });
  assert.equal(notUuid.status, 400);
  const unknown = await http(svc.url, 'GET', `/api/v1/webhooks/${crypto.randomUUID()}/deliveries`, { token: key });
  assert.equal(unknown.status, 404);
});

test('test endpoint: {data: delivery, event_id}; a `test` envelope to this subscription only; 409 when inactive', async () => {
  const { key, accountId } = await freshTenant(svc.url);
  const endpoint = receiver.endpoint();
  const bystander = receiver.endpoint();
  const { data: sub, secret } = await createWebhook(svc.url, key, { url: endpoint.url, events: ['order.updated'] });
  await createWebhook(svc.url, key, { url: bystander.url, events: SUBSCRIBABLE_EVENTS });

  const res = await http(svc.url, 'POST', `/api/v1/webhooks/${sub.id}/test`, { token: key });
  assert.equal(res.status, 200, res.text);
  assert.deepEqual(Object.keys(res.body).sort(), ['data', 'event_id']);
  const delivery = res.body.data;
  assert.deepEqual(Object.keys(delivery).sort(), DELIVERY_FIELDS);
  assert.equal(delivery.event, 'test');
  assert.equal(delivery.event_id, res.body.event_id);
  assert.equal(delivery.webhook_id, sub.id);
  // The answer comes after the first attempt (SPEC: waits up to 10 s for it).
  assert.equal(delivery.status, 'delivered');
  assert.equal(delivery.attempt, 1);
  assert.equal(delivery.last_status_code, 200);
  assert.equal(delivery.response_body, 'ok');
  assert.notEqual(delivery.delivered_at, null);

  assert.equal(endpoint.requests.length, 1);
  const envelope = assertSignedDelivery(endpoint.requests[0], secret, 'test');
  assert.equal(envelope.id, res.body.event_id);
  assert.equal(envelope.account_id, accountId);
  assert.equal(typeof envelope.data.message, 'string');
  assert.equal(envelope.data.webhook_id, sub.id);
  assert.deepEqual(Object.keys(envelope.data).sort(), ['message', 'webhook_id']);
  assert.equal(bystander.requests.length, 0, 'a test event goes to that subscription only');

  const listed = await getWebhook(svc.url, key, sub.id);
  assert.equal(listed.last_status_code, 200);
  assert.notEqual(listed.last_triggered_at, null);

  await patchWebhook(svc.url, key, sub.id, { active: false });
  const inactive = await http(svc.url, 'POST', `/api/v1/webhooks/${sub.id}/test`, { token: key });
  assert.equal(inactive.status, 409);
  assert.equal(inactive.body.error.code, 'conflict');
  assert.equal(endpoint.requests.length, 1);
  assert.equal((await http(svc.url, 'POST', `/api/v1/webhooks/${crypto.randomUUID()}/test`, { token: key })).status, 404);
  assert.equal((await http(svc.url, 'POST', '/api/v1/webhooks/nope/test', { token: key })).status, 400);
});

test('retry endpoint: same event id, fresh X-Merx-Delivery, timestamp and signature; 409 once delivered', async () => {
  const { key } = await freshTenant(svc.url);
  const endpoint = receiver.endpoint();
  endpoint.script([{ status: 503, body: 'busy' }], { status: 200, body: 'ok' });
  const { data: sub, secret } = await createWebhook(svc.url, key, { url: endpoint.url, events: ['order.updated'] });

  const first = await http(svc.url, 'POST', `/api/v1/webhooks/${sub.id}/test`, { token: key });
  assert.equal(first.status, 200);
  assert.equal(first.body.data.status, 'pending');
  assert.equal(first.body.data.last_status_code, 503);
  assert.equal(first.body.data.response_body, 'busy');
  // Timestamps are Unix seconds: let the clock move on so "fresh" is visible.
  await new Promise((r) => setTimeout(r, 1100));

  const retry = await http(svc.url, 'POST', `/api/v1/webhook-deliveries/${first.body.data.id}/retry`, { token: key });
  assert.equal(retry.status, 200, retry.text);
  assert.deepEqual(Object.keys(retry.body).sort(), ['data', 'ok', 'status']);
  assert.equal(retry.body.ok, true);
  assert.equal(retry.body.status, 200);
  assert.deepEqual(Object.keys(retry.body.data).sort(), DELIVERY_FIELDS);
  assert.equal(retry.body.data.id, first.body.data.id);
  assert.equal(retry.body.data.status, 'delivered');
  assert.equal(retry.body.data.attempt, 2);
  assert.equal(retry.body.data.last_status_code, 200);

  assert.equal(endpoint.requests.length, 2);
  const [a, b] = endpoint.requests;
  const envA = assertSignedDelivery(a, secret, 'test');
  const envB = assertSignedDelivery(b, secret, 'test');
  assert.equal(envA.id, envB.id, 'same event id');
  assert.equal(a.body, b.body, 'same envelope');
  assert.notEqual(a.headers['x-merx-delivery'], b.headers['x-merx-delivery']);
  assert.ok(Number(b.headers['x-merx-timestamp']) > Number(a.headers['x-merx-timestamp']), 'fresh timestamp');
  assert.notEqual(a.headers['x-merx-signature'], b.headers['x-merx-signature']);
  assert.ok(verifyMerxSignature(b.rawBody, String(b.headers['x-merx-signature']), secret));

  const again = await http(svc.url, 'POST', `/api/v1/webhook-deliveries/${first.body.data.id}/retry`, { token: key });
  assert.equal(again.status, 409);
  assert.equal(again.body.error.code, 'conflict');
  assert.equal(endpoint.requests.length, 2);
  assert.equal((await http(svc.url, 'POST', `/api/v1/webhook-deliveries/${crypto.randomUUID()}/retry`, { token: key })).status, 404);
  assert.equal((await http(svc.url, 'POST', '/api/v1/webhook-deliveries/42/retry', { token: key })).status, 400);
});

test('test and retry: 30 per minute each per account (429 rate_limited, retry_after_sec, Retry-After); both count toward the key', async () => {
  const { op, accountId, key } = await freshTenant(svc.url);
  const ok = receiver.endpoint();
  const failing = receiver.endpoint();
  failing.script([], { status: 500 });
  const { data: sub } = await createWebhook(svc.url, key, { url: ok.url, events: ['order.created'] });

  const remainingOf = (res: { headers: Headers }) => Number(res.headers.get('x-ratelimit-remaining'));
  let last = remainingOf(await http(svc.url, 'GET', '/api/v1/webhooks', { token: key }));
  for (let i = 0; i < 30; i++) {
    const res = await http(svc.url, 'POST', `/api/v1/webhooks/${sub.id}/test`, { token: key });
    assert.equal(res.status, 200, `test #${i + 1}: ${res.status} ${res.text}`);
    assert.equal(remainingOf(res), last - 1, 'a test call counts toward the key');
    last = remainingOf(res);
  }
  const limited = await http(svc.url, 'POST', `/api/v1/webhooks/${sub.id}/test`, { token: key });
  assert.equal(limited.status, 429, limited.text);
  assert.equal(limited.body.error.code, 'rate_limited');
  const after = limited.body.error.details.retry_after_sec;
  assert.ok(Number.isInteger(after) && after >= 1 && after <= 60, `retry_after_sec ${after}`);
  assert.equal(limited.headers.get('retry-after'), String(after));
  assert.equal(limited.headers.get('x-ratelimit-limit'), '300');
  assert.equal(ok.requests.length, 30, 'the 31st test sent nothing');

  // The retry limit is separate: a failing delivery can still be retried 30 times.
  await createWebhook(svc.url, key, { url: failing.url, events: ['order.updated'] });
  const order = await op.checkout(accountId);
  await touchOrder(svc.url, key, order.id);
  await failing.waitFor(1);
  const failingSub = (await listWebhooks(svc.url, key)).data.find((s) => s.url === failing.url);
  const delivery = await deliveryWhen(svc.url, key, failingSub.id, (d) => d.attempt === 1 && d.last_status_code === 500);
  last = remainingOf(await http(svc.url, 'GET', '/api/v1/webhooks', { token: key }));
  for (let i = 0; i < 30; i++) {
    const res = await http(svc.url, 'POST', `/api/v1/webhook-deliveries/${delivery.id}/retry`, { token: key });
    assert.equal(res.status, 200, `retry #${i + 1}: ${res.status} ${res.text}`);
    assert.equal(res.body.ok, false);
    assert.equal(res.body.status, 500);
    assert.equal(remainingOf(res), last - 1, 'a retry counts toward the key');
    last = remainingOf(res);
  }
  const retryLimited = await http(svc.url, 'POST', `/api/v1/webhook-deliveries/${delivery.id}/retry`, { token: key });
  assert.equal(retryLimited.status, 429);
  assert.equal(retryLimited.body.error.code, 'rate_limited');
  assert.ok(Number.isInteger(retryLimited.body.error.details.retry_after_sec));
  assert.equal(retryLimited.headers.get('retry-after'), String(retryLimited.body.error.details.retry_after_sec));
  assert.equal(failing.requests.length, 31, 'one first attempt and 30 retries; the 31st retry sent nothing');

  // The limit is per account: another account of the same service is unaffected.
  const other = await freshTenant(svc.url);
  const { data: otherSub } = await createWebhook(svc.url, other.key, { url: ok.url, events: ['order.created'] });
  assert.equal((await http(svc.url, 'POST', `/api/v1/webhooks/${otherSub.id}/test`, { token: other.key })).status, 200);
});

test('debug sink: stores headers and raw body for active subscriptions only; 404 unknown or inactive; 413 past 64 KB', async () => {
  const { key } = await freshTenant(svc.url);
  const { data: sub } = await createWebhook(svc.url, key, { url: INERT_URL, events: ['order.updated'] });
  const raw = '{ "hello" :  "world",\n "n": [1, 2 ,3] }\n';
  const res = await http(svc.url, 'POST', `/api/webhooks/sink?id=${sub.id}`, {
    rawBody: raw,
    headers: { 'content-type': 'application/json', 'x-probe': 'abc' },
  });
  assert.equal(res.status, 200, res.text);
  const text = await http(svc.url, 'POST', `/api/webhooks/sink?id=${sub.id}`, { rawBody: 'plain words', headers: { 'content-type': 'text/plain' } });
  assert.equal(text.status, 200, 'any content type is stored as is');

  const captures = await sinkCaptures(svc.url, sub.id);
  assert.equal(captures.length, 2);
  assert.deepEqual(Object.keys(captures[0]).sort(), ['body', 'headers', 'id', 'received_at']);
  assert.equal(captures[0].body, 'plain words', 'newest first');
  assert.equal(captures[1].body, raw, 'the exact raw bytes');
  assert.equal(captures[1].headers['x-probe'], 'abc');
  assert.equal(captures[1].headers['content-type'], 'application/json');

  const exactly64k = 'x'.repeat(64 * 1024);
  assert.equal(
    (await http(svc.url, 'POST', `/api/webhooks/sink?id=${sub.id}`, { rawBody: exactly64k, headers: { 'content-type': 'text/plain' } })).status,
    200,
  );
  const tooBig = await http(svc.url, 'POST', `/api/webhooks/sink?id=${sub.id}`, {
    rawBody: `${exactly64k}x`,
    headers: { 'content-type': 'text/plain' },
  });
  assert.equal(tooBig.status, 413);
  assert.equal((await sinkCaptures(svc.url, sub.id)).length, 3, 'the oversized body was not stored');

  const unknown = await http(svc.url, 'POST', `/api/webhooks/sink?id=${crypto.randomUUID()}`, {
    rawBody: '{}',
    headers: { 'content-type': 'application/json' },
  });
  assert.equal(unknown.status, 404);
  assert.equal(unknown.body.error.code, 'not_found');
  await patchWebhook(svc.url, key, sub.id, { active: false });
  const inactive = await http(svc.url, 'POST', `/api/webhooks/sink?id=${sub.id}`, { rawBody: '{}', headers: { 'content-type': 'application/json' } });
  assert.equal(inactive.status, 404);
  assert.equal(inactive.body.error.code, 'not_found');
  assert.equal((await sinkCaptures(svc.url, sub.id)).length, 3);
});

test('the debug sink is a known route: other methods 405 with Allow, OPTIONS 204, and it is in the public OpenAPI document', async () => {
  // GAPS General: a wrong method on a known route is 405 with Allow; OPTIONS answers 204. SPEC Versioning 4: every route is documented.
  const path = `/api/webhooks/sink?id=${crypto.randomUUID()}`;
  const get = await http(svc.url, 'GET', path);
  assert.equal(get.status, 405, `GET ${path}: ${get.status} ${get.text}`);
  assert.equal(get.body.error.code, 'method_not_allowed');
  assert.match(get.headers.get('allow') ?? '', /\bPOST\b/);
  const options = await http(svc.url, 'OPTIONS', path);
  assert.equal(options.status, 204, `OPTIONS ${path}: ${options.status}`);
  assert.match(options.headers.get('allow') ?? '', /\bPOST\b/);
  const doc = await http(svc.url, 'GET', '/api/v1/openapi.json');
  assert.equal(doc.status, 200);
  assert.ok(
    doc.body.paths['/api/webhooks/sink']?.post,
    `the sink is documented (paths: ${Object.keys(doc.body.paths)
      .filter((p) => p.includes('webhook'))
      .join(', ')})`,
  );
});

test('webhook error answers are JSON with Content-Type application/json', async () => {
  const { key } = await freshTenant(svc.url);
  const { data: sub } = await createWebhook(svc.url, key, { url: INERT_URL, events: ['order.updated'] });
  await patchWebhook(svc.url, key, sub.id, { active: false });
  const answers = [
    await http(svc.url, 'POST', '/api/v1/webhooks', { token: key, body: { url: 'http://93.184.216.34/', events: ['order.updated'] } }),
    await http(svc.url, 'POST', `/api/v1/webhooks/${sub.id}/test`, { token: key }),
    await http(svc.url, 'GET', `/api/v1/webhooks/${crypto.randomUUID()}/deliveries`, { token: key }),
    await http(svc.url, 'POST', `/api/webhooks/sink?id=${sub.id}`, { rawBody: '{}', headers: { 'content-type': 'application/json' } }),
  ];
  const missing = answers
    .filter((res) => !/^application\/json\b/.test(res.headers.get('content-type') ?? ''))
    .map((res) => `${res.status} ${res.body?.error?.code}: Content-Type ${res.headers.get('content-type')}`);
  assert.deepEqual(missing, [], 'every error body is JSON and says so');
});

test("a subscription whose url is the service's own debug sink receives real, signed deliveries", async () => {
  const { op, accountId, key } = await freshTenant(svc.url);
  // PUBLIC_BASE_URL defaults to http://localhost:<port>; its sink path is the one self_target exception.
  const { data: created, secret } = await createWebhook(svc.url, key, { url: INERT_URL, events: ['order.updated'] });
  const sinkUrl = `http://localhost/api/webhooks/sink?id=${created.id}`;
  const sub = await patchWebhook(svc.url, key, created.id, { url: sinkUrl });
  assert.equal(sub.url, sinkUrl);

  const tested = await http(svc.url, 'POST', `/api/v1/webhooks/${sub.id}/test`, { token: key });
  assert.equal(tested.status, 200, tested.text);
  assert.equal(tested.body.data.status, 'delivered');
  assert.equal(tested.body.data.last_status_code, 200);

  const order = await op.checkout(accountId);
  await touchOrder(svc.url, key, order.id, 'via the sink');
  await deliveryWhen(svc.url, key, sub.id, (d) => d.event === 'order.updated' && d.status === 'delivered');

  const captures = await sinkCaptures(svc.url, sub.id);
  assert.equal(captures.length, 2);
  const updated = assertSignedDelivery(captures[0], secret, 'order.updated');
  assert.equal(updated.data.order.admin_notes, 'via the sink');
  assert.equal(updated.data.source, 'api');
  const testEnvelope = assertSignedDelivery(captures[1], secret, 'test');
  assert.equal(testEnvelope.id, tested.body.event_id);
  assert.ok(verifyMerxSignature(captures[0].body, captures[0].headers['x-merx-signature'], secret));
});

test('MCP webhook tools mirror REST; there is no retry tool', async () => {
  const { key } = await freshTenant(svc.url);
  const endpoint = receiver.endpoint();
  const listed = await rpc(svc.url, key, request('tools/list'));
  assert.equal(listed.status, 200);
  const names = listed.body.result.tools.map((t: { name: string }) => t.name);
  for (const name of ['list_webhooks', 'create_webhook', 'update_webhook', 'delete_webhook', 'test_webhook', 'list_webhook_deliveries']) {
    assert.ok(names.includes(name), `tools/list has ${name}`);
  }
  assert.ok(!names.some((n: string) => n.includes('retry')), 'no MCP tool retries a delivery');

  const created = await callTool(svc.url, key, 'create_webhook', { url: endpoint.url, events: ['order.updated'], description: 'via MCP' });
  assert.equal(created.isError, false);
  assert.match(created.structuredContent.secret, /^[0-9a-f]{64}$/);
  const sub = created.structuredContent.data;
  assert.deepEqual(Object.keys(sub).sort(), SUBSCRIPTION_FIELDS);
  assert.equal(sub.secret_prefix, `${created.structuredContent.secret.slice(0, 8)}…`);

  const hostile = await callTool(svc.url, key, 'create_webhook', { url: 'http://169.254.169.254/latest', events: ['order.updated'] });
  assertRefusal(hostile, 'VALIDATION_FAILED');
  const unknownEvent = await callTool(svc.url, key, 'create_webhook', { url: endpoint.url, events: ['order.vanished'] });
  assertRefusal(unknownEvent, 'VALIDATION_FAILED');

  const list = await callTool(svc.url, key, 'list_webhooks');
  assert.equal(list.isError, false);
  assert.deepEqual(
    list.structuredContent.data.map((s: any) => s.id),
    [sub.id],
  );
  assert.deepEqual([...list.structuredContent.events].sort(), [...SUBSCRIBABLE_EVENTS].sort());
  assert.ok(!JSON.stringify(list.structuredContent).includes(created.structuredContent.secret));

  const off = await callTool(svc.url, key, 'update_webhook', { id: sub.id, active: false });
  assert.equal(off.isError, false);
  assert.equal(off.structuredContent.data.active, false);
  assertRefusal(await callTool(svc.url, key, 'test_webhook', { id: sub.id }), 'CONFLICT');
  await callTool(svc.url, key, 'update_webhook', { id: sub.id, active: true });

  const tested = await callTool(svc.url, key, 'test_webhook', { id: sub.id });
  assert.equal(tested.isError, false);
  assert.deepEqual(Object.keys(tested.structuredContent).sort(), ['data', 'event_id']);
  assert.equal(tested.structuredContent.data.status, 'delivered');
  assert.equal(endpoint.requests.length, 1);
  assert.equal(endpoint.requests[0].headers['x-merx-event-id'], tested.structuredContent.event_id);

  const deliveries = await callTool(svc.url, key, 'list_webhook_deliveries', { id: sub.id, limit: 5 });
  assert.equal(deliveries.isError, false);
  assert.deepEqual(
    deliveries.structuredContent.data.map((d: any) => d.id),
    [tested.structuredContent.data.id],
  );

  const deleted = await callTool(svc.url, key, 'delete_webhook', { id: sub.id });
  assert.equal(deleted.isError, false);
  assert.deepEqual(deleted.structuredContent, { data: { id: sub.id, deleted: true } });
  assertRefusal(await callTool(svc.url, key, 'list_webhook_deliveries', { id: sub.id }), 'NOT_FOUND');
});

// Issue 28: a sink url without an id used to be stored as given, and every delivery then failed (the sink needs ?id=).
test("a debug-sink url without an id becomes the subscription's own (create, update, MCP); another id is refused 400 up front", async () => {
  const { op, accountId, key } = await freshTenant(svc.url);
  const sink = 'http://localhost/api/webhooks/sink';
  const created = await http(svc.url, 'POST', '/api/v1/webhooks', { token: key, body: { url: sink, events: ['order.updated'] } });
  assert.equal(created.status, 201, created.text);
  const own = `${sink}?id=${created.body.data.id}`;
  assert.equal(created.body.data.url, own, 'the answer shows the url stored');
  assert.equal((await getWebhook(svc.url, key, created.body.data.id)).url, own);

  // Its deliveries succeed, signed with its secret.
  const order = await op.checkout(accountId);
  await touchOrder(svc.url, key, order.id, 'sink without id');
  const delivered = await deliveryWhen(svc.url, key, created.body.data.id, (d) => d.event === 'order.updated' && d.status !== 'pending');
  assert.equal(delivered.status, 'delivered', JSON.stringify(delivered));
  assert.equal(delivered.last_status_code, 200);
  const [capture] = await sinkCaptures(svc.url, created.body.data.id);
  assertSignedDelivery(capture, created.body.secret, 'order.updated');

  // Refused on create: any id (the new subscription's is not known yet), a malformed one, other parameters.
  const other = (await createWebhook(svc.url, key, { url: INERT_URL, events: ['order.updated'] })).data;
  for (const [url, reason] of [
    [`${sink}?id=${other.id}`, 'sink_foreign_id'],
    [`${sink}?id=${crypto.randomUUID()}`, 'sink_foreign_id'],
    [`${sink}?id=not-a-uuid`, 'sink_malformed_id'],
    [`${sink}?id=`, 'sink_malformed_id'],
    [`${sink}?id=${other.id}&id=${other.id}`, 'sink_malformed_id'],
    [`${sink}?foo=1`, 'sink_query'],
  ] as const) {
    const res = await http(svc.url, 'POST', '/api/v1/webhooks', { token: key, body: { url, events: ['order.updated'] } });
    assert.equal(res.status, 400, `${url}: ${res.text}`);
    assert.equal(res.body.error.code, 'validation_failed');
    assert.equal(res.body.error.details.reason, reason, url);
    assert.match(res.body.error.message, /sink/);
  }
  const dry = await http(svc.url, 'POST', '/api/v1/webhooks', {
    token: key,
    body: { url: `${sink}?id=${other.id}`, events: ['order.updated'] },
    headers: { 'X-Merx-Dry-Run': '1' },
  });
  assert.equal(dry.status, 400, 'a dry run refuses what the create would');

  // Update: no id -> this subscription's own; its own id is kept; another's is refused and nothing changes.
  assert.equal((await patchWebhook(svc.url, key, other.id, { url: sink })).url, `${sink}?id=${other.id}`);
  assert.equal((await patchWebhook(svc.url, key, other.id, { url: `${sink}?id=${other.id}` })).url, `${sink}?id=${other.id}`);
  const foreign = await http(svc.url, 'PATCH', `/api/v1/webhooks/${other.id}`, { token: key, body: { url: own } });
  assert.equal(foreign.status, 400, foreign.text);
  assert.equal(foreign.body.error.details.reason, 'sink_foreign_id');
  assert.equal((await getWebhook(svc.url, key, other.id)).url, `${sink}?id=${other.id}`);

  // MCP: the same rules through the tools.
  const viaMcp = await callTool(svc.url, key, 'create_webhook', { url: sink, events: ['order.updated'] });
  assert.equal(viaMcp.isError, false, JSON.stringify(viaMcp.structuredContent));
  assert.equal(viaMcp.structuredContent.data.url, `${sink}?id=${viaMcp.structuredContent.data.id}`);
  const mcpTest = await callTool(svc.url, key, 'test_webhook', { id: viaMcp.structuredContent.data.id });
  assert.equal(mcpTest.structuredContent.data.status, 'delivered', JSON.stringify(mcpTest.structuredContent));
  const mcpForeign = await callTool(svc.url, key, 'create_webhook', { url: own, events: ['order.updated'] });
  assertRefusal(mcpForeign, 'VALIDATION_FAILED');
  assert.match(mcpForeign.structuredContent.reason, /another subscription/);
  const mcpUpdate = await callTool(svc.url, key, 'update_webhook', { id: viaMcp.structuredContent.data.id, url: `${sink}?id=oops` });
  assertRefusal(mcpUpdate, 'VALIDATION_FAILED');
});
