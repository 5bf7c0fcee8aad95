// EXTENSIONS 6 against a real HTTPS receiver, REST and MCP, both databases:
// the attempt log of a delivery (every attempt, whatever made it, with the
// request headers as sent and the bounded answer), the deliveries list paged
// by cursor and filtered, an endpoint's health, and X-Merx-Resource-Version.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import crypto from 'node:crypto';
import { http, freshTenant } from './helpers/harness.ts';
import { callTool, assertRefusal } from './helpers/mcp.ts';
import { shipTenant } from './helpers/shipments.ts';
import { startReceiverWorld, createWebhook, touchOrder, eventually, runDeliveryJob, type ReceiverWorld } from './helpers/webhooks.ts';

let world: ReceiverWorld;
before(async () => {
  world = await startReceiverWorld();
});
after(async () => {
  await world?.close();
});

const ATTEMPT_FIELDS = [
  'duration_ms',
  'error',
  'number',
  'request_headers',
  'response_body',
  'response_headers',
  'response_status',
  'started_at',
  'trigger',
  'url',
].sort();

async function attemptsOf(key: string, deliveryId: string) {
  const res = await http(world.svc.url, 'GET', `/api/v1/webhook-deliveries/${deliveryId}/attempts`, { token: key });
  assert.equal(res.status, 200, res.text);
  return res.body.data as any[];
}

async function deliveries(key: string, webhookId: string, query = '') {
  const res = await http(world.svc.url, 'GET', `/api/v1/webhooks/${webhookId}/deliveries${query}`, { token: key });
  assert.equal(res.status, 200, res.text);
  return { data: res.body.data as any[], link: res.headers.get('link') };
}

/** A port on loopback that nobody listens on. */
async function closedPort(): Promise<number> {
  const probe = net.createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as net.AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

test('attempt log: every attempt (automatic, retry, test), oldest first, headers as sent, the answer bounded; REST and MCP agree; 404 elsewhere', async () => {
  const endpoint = world.receiver.endpoint();
  const manyHeaders = Object.fromEntries(Array.from({ length: 25 }, (_, i) => [`x-extra-${String(i).padStart(2, '0')}`, 'v'.repeat(300)]));
  endpoint.script(
    [
      { status: 500, body: 'x'.repeat(5000), headers: manyHeaders },
      { status: 200, body: 'thanks' },
    ],
    { status: 200, body: 'ok' },
  );
  const tenant = await freshTenant(world.svc.url);
  const { data: sub } = await createWebhook(world.svc.url, tenant.key, { url: endpoint.url, events: ['order.updated'] });
  const order = await tenant.op.checkout(tenant.accountId);
  await touchOrder(world.svc.url, tenant.key, order.id);
  const [first] = await endpoint.waitFor(1);
  const delivery = await eventually(
    async () => (await deliveries(tenant.key, sub.id)).data.find((d) => d.last_status_code === 500),
    'the failed first attempt',
    60_000,
  );

  const retried = await http(world.svc.url, 'POST', `/api/v1/webhook-deliveries/${delivery.id}/retry`, { token: tenant.key });
  assert.equal(retried.status, 200, retried.text);
  const second = endpoint.requests[1];

  const log = await attemptsOf(tenant.key, delivery.id);
  assert.equal(log.length, 2);
  for (const a of log) assert.deepEqual(Object.keys(a).sort(), ATTEMPT_FIELDS);
  assert.deepEqual(
    log.map((a) => [a.number, a.trigger, a.response_status]),
    [
      [1, 'automatic', 500],
      [2, 'retry', 200],
    ],
  );
  assert.equal(log[0].url, endpoint.url);
  assert.ok(Date.parse(log[0].started_at) <= Date.parse(log[1].started_at));
  assert.ok(log.every((a) => Number.isInteger(a.duration_ms) && a.duration_ms >= 0));
  // The request headers as the receiver got them, signature included.
  for (const [a, received] of [
    [log[0], first],
    [log[1], second],
  ] as const) {
    for (const name of ['x-merx-signature', 'x-merx-delivery', 'x-merx-event-id', 'x-merx-resource-version', 'webhook-signature', 'content-type']) {
      assert.equal(a.request_headers[name], received.headers[name], name);
    }
  }
  // The answer, bounded: at most 20 headers of at most 200 characters, 1000 characters of body.
  assert.ok(Object.keys(log[0].response_headers).length <= 20);
  assert.ok(Object.values(log[0].response_headers as Record<string, string>).every((v) => v.length <= 200));
  assert.equal(log[0].response_headers['x-extra-00'], 'v'.repeat(200));
  assert.equal(log[0].response_body, 'x'.repeat(1000));
  assert.equal(log[0].error, null, 'an answer that came back says itself');
  assert.equal(log[1].response_body, 'thanks');

  // The test endpoint's attempt is a `test` one.
  const tested = await http(world.svc.url, 'POST', `/api/v1/webhooks/${sub.id}/test`, { token: tenant.key });
  assert.equal(tested.status, 200, tested.text);
  const testLog = await attemptsOf(tenant.key, tested.body.data.id);
  assert.deepEqual(
    testLog.map((a) => [a.number, a.trigger, a.response_status]),
    [[1, 'test', 200]],
  );
  assert.equal(testLog[0].request_headers['x-merx-resource-version'], undefined, 'test deliveries carry no resource version');

  // MCP answers the same attempts.
  const viaMcp = await callTool(world.svc.url, tenant.key, 'list_delivery_attempts', { id: delivery.id });
  assert.equal(viaMcp.isError, false);
  assert.deepEqual(viaMcp.structuredContent.data, log);

  // Another account's delivery: 404 (REST) and not_found (MCP).
  const other = await freshTenant(world.svc.url);
  const foreign = await http(world.svc.url, 'GET', `/api/v1/webhook-deliveries/${delivery.id}/attempts`, { token: other.key });
  assert.equal(foreign.status, 404);
  assertRefusal(await callTool(world.svc.url, other.key, 'list_delivery_attempts', { id: delivery.id }), 'NOT_FOUND');
  const unknown = await http(world.svc.url, 'GET', `/api/v1/webhook-deliveries/${crypto.randomUUID()}/attempts`, { token: tenant.key });
  assert.equal(unknown.status, 404);
});

test('attempt log: a failed attempt says why in one sentence (connection refused, redirect not followed, TLS)', async () => {
  const tenant = await freshTenant(world.svc.url);
  const order = await tenant.op.checkout(tenant.accountId);
  // Refused: nobody listens on the port.
  const refused = await createWebhook(world.svc.url, tenant.key, { url: `https://127.0.0.1:${await closedPort()}/hook`, events: ['order.updated'] });
  // A redirect.
  const redirecting = world.receiver.endpoint();
  redirecting.script([], { status: 302, headers: { location: 'https://example.com/' } });
  const redirect = await createWebhook(world.svc.url, tenant.key, { url: redirecting.url, events: ['order.updated'] });
  // TLS: a plain TCP server where HTTPS is expected.
  const plain = net.createServer((socket) => socket.end('HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n'));
  await new Promise<void>((resolve) => plain.listen(0, '127.0.0.1', resolve));
  const tls = await createWebhook(world.svc.url, tenant.key, {
    url: `https://127.0.0.1:${(plain.address() as net.AddressInfo).port}/hook`,
    events: ['order.updated'],
  });
  try {
    await touchOrder(world.svc.url, tenant.key, order.id);
    const firstAttempt = async (webhookId: string) => {
      const d = await eventually(async () => (await deliveries(tenant.key, webhookId)).data.find((x) => x.last_error !== null), 'an attempt', 60_000);
      return (await attemptsOf(tenant.key, d.id))[0];
    };
    const a = await firstAttempt(refused.data.id);
    assert.equal(a.response_status, null);
    assert.equal(a.response_headers, null);
    assert.equal(a.response_body, null);
    assert.match(a.error, /connection was refused/);
    assert.ok(a.request_headers['x-merx-signature'], 'the request was made: its headers are logged');
    const r = await firstAttempt(redirect.data.id);
    assert.equal(r.response_status, 302);
    assert.match(r.error, /redirect \(302\), which is not followed/);
    const t = await firstAttempt(tls.data.id);
    assert.equal(t.response_status, null);
    assert.match(t.error, /TLS/);

    const health = await http(world.svc.url, 'GET', `/api/v1/webhooks/${refused.data.id}/health`, { token: tenant.key });
    assert.equal(health.status, 200, health.text);
    assert.deepEqual(health.body.data.last_hour.outcomes, { connection_error: 1 });
    const tlsHealth = await http(world.svc.url, 'GET', `/api/v1/webhooks/${tls.data.id}/health`, { token: tenant.key });
    assert.deepEqual(tlsHealth.body.data.last_hour.outcomes, { tls_error: 1 });
  } finally {
    plain.close();
    for (const id of [refused.data.id, redirect.data.id, tls.data.id])
      await http(world.svc.url, 'DELETE', `/api/v1/webhooks/${id}`, { token: tenant.key });
  }
});

test('deliveries: paged by cursor with Link rel="next" (same filters and limit), filtered by status and event; MCP _meta.next_cursor', async () => {
  const endpoint = world.receiver.endpoint();
  const tenant = await freshTenant(world.svc.url);
  const { data: sub } = await createWebhook(world.svc.url, tenant.key, { url: endpoint.url, events: ['order.updated', 'order.status_changed'] });
  const order = await tenant.op.checkout(tenant.accountId);
  for (let i = 0; i < 5; i++) await touchOrder(world.svc.url, tenant.key, order.id);
  for (let i = 0; i < 2; i++) assert.equal((await http(world.svc.url, 'POST', `/api/v1/webhooks/${sub.id}/test`, { token: tenant.key })).status, 200);
  await endpoint.waitFor(7);
  await eventually(async () => (await deliveries(tenant.key, sub.id)).data.every((d) => d.status === 'delivered'), 'all delivered', 60_000);
  const all = (await deliveries(tenant.key, sub.id, '?limit=200')).data;
  assert.equal(all.length, 7);

  // Walk by Link.
  const walked: string[] = [];
  let next: string | null = `/api/v1/webhooks/${sub.id}/deliveries?limit=3`;
  let pages = 0;
  while (next) {
    const res: any = await http(world.svc.url, 'GET', next, { token: tenant.key });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(Object.keys(res.body), ['data'], 'the body stays {data}');
    walked.push(...res.body.data.map((d: any) => d.id));
    const link = res.headers.get('link');
    pages++;
    if (!link) break;
    const m = /^<([^>]+)>; rel="next"$/.exec(link);
    assert.ok(m, `Link is RFC 8288: ${link}`);
    assert.match(m[1], /[?&]limit=3(&|$)/, 'the same limit');
    next = m[1];
  }
  assert.equal(pages, 3);
  assert.deepEqual(
    walked,
    all.map((d) => d.id),
    'every delivery once, newest first',
  );

  // Filters, and the Link keeps them.
  const tests = await deliveries(tenant.key, sub.id, '?event=test&limit=1');
  assert.equal(tests.data.length, 1);
  assert.equal(tests.data[0].event, 'test');
  assert.match(tests.link!, /event=test/);
  assert.match(tests.link!, /limit=1/);
  const lastTest = await http(world.svc.url, 'GET', /^<([^>]+)>/.exec(tests.link!)![1], { token: tenant.key });
  assert.equal(lastTest.body.data.length, 1);
  assert.equal(lastTest.headers.get('link'), null, 'the last page has no Link');
  assert.equal((await deliveries(tenant.key, sub.id, '?event=order.updated')).data.length, 5);
  assert.equal((await deliveries(tenant.key, sub.id, '?event=order.status_changed')).data.length, 0);
  assert.equal((await deliveries(tenant.key, sub.id, '?status=delivered&event=order.updated')).data.length, 5);
  assert.equal((await deliveries(tenant.key, sub.id, '?status=dead')).data.length, 0);

  const badEvent = await http(world.svc.url, 'GET', `/api/v1/webhooks/${sub.id}/deliveries?event=order.exploded`, { token: tenant.key });
  assert.equal(badEvent.status, 400);
  assert.ok(badEvent.body.error.details.allowed.includes('test') && badEvent.body.error.details.allowed.includes('order.updated'));
  const badStatus = await http(world.svc.url, 'GET', `/api/v1/webhooks/${sub.id}/deliveries?status=lost`, { token: tenant.key });
  assert.equal(badStatus.status, 400);
  const badCursor = await http(world.svc.url, 'GET', `/api/v1/webhooks/${sub.id}/deliveries?cursor=nonsense`, { token: tenant.key });
  assert.equal(badCursor.status, 400);

  // MCP: the same pages, the cursor in _meta.next_cursor.
  const mcpWalked: string[] = [];
  let cursor: string | undefined;
  for (;;) {
    const result = (await callTool(world.svc.url, tenant.key, 'list_webhook_deliveries', {
      id: sub.id,
      limit: 3,
      ...(cursor ? { cursor } : {}),
    })) as any;
    assert.equal(result.isError, false);
    mcpWalked.push(...result.structuredContent.data.map((d: any) => d.id));
    cursor = result._meta?.next_cursor;
    if (!cursor) break;
  }
  assert.deepEqual(mcpWalked, walked);
  assertRefusal(await callTool(world.svc.url, tenant.key, 'list_webhook_deliveries', { id: sub.id, event: 'nope' }), 'VALIDATION_FAILED');
});

test('health: last hour and day from the attempt log (rate, latency, outcomes), consecutive failures, pending and dead; REST and MCP', async () => {
  const endpoint = world.receiver.endpoint();
  endpoint.script([{ status: 200 }, { status: 200 }, { status: 500 }, { status: 404 }, { status: 503 }], { status: 200 });
  const tenant = await freshTenant(world.svc.url);
  const { data: sub } = await createWebhook(world.svc.url, tenant.key, { url: endpoint.url, events: ['order.updated'] });
  const empty = await http(world.svc.url, 'GET', `/api/v1/webhooks/${sub.id}/health`, { token: tenant.key });
  assert.equal(empty.status, 200, empty.text);
  assert.deepEqual(empty.body.data.last_hour, { attempts: 0, succeeded: 0, failed: 0, success_rate: null, latency_ms: null, outcomes: {} });
  assert.equal(empty.body.data.consecutive_failures, 0);
  assert.equal(empty.body.data.last_success_at, null);

  const order = await tenant.op.checkout(tenant.accountId);
  for (let i = 0; i < 5; i++) {
    await touchOrder(world.svc.url, tenant.key, order.id);
    await endpoint.waitFor(i + 1);
  }
  const health = await eventually(
    async () => {
      const res = await http(world.svc.url, 'GET', `/api/v1/webhooks/${sub.id}/health`, { token: tenant.key });
      return res.body.data.last_hour.attempts === 5 ? res.body.data : null;
    },
    'five attempts in the log',
    60_000,
  );
  assert.equal(health.webhook_id, sub.id);
  for (const w of [health.last_hour, health.last_day]) {
    assert.equal(w.attempts, 5);
    assert.equal(w.succeeded, 2);
    assert.equal(w.failed, 3);
    assert.equal(w.success_rate, 0.4);
    assert.deepEqual(w.outcomes, { '200': 2, '500': 1, '404': 1, '503': 1 });
    assert.ok(w.latency_ms.p50 >= 0 && w.latency_ms.p99 >= w.latency_ms.p50);
  }
  assert.equal(health.consecutive_failures, 3);
  assert.ok(health.last_success_at && health.last_failure_at && health.last_failure_at >= health.last_success_at);
  assert.equal(health.pending, 3, 'three deliveries wait for their retry');
  assert.equal(health.dead, 0);

  // Drive the three to dead: the counts follow.
  endpoint.script([], { status: 500 });
  for (let i = 0; i < 5; i++) await runDeliveryJob(world.svc.url, new Date(Date.now() + (i + 1) * 86_400_000));
  const later = (await http(world.svc.url, 'GET', `/api/v1/webhooks/${sub.id}/health`, { token: tenant.key })).body.data;
  assert.equal(later.dead, 3);
  assert.equal(later.pending, 0);

  const viaMcp = await callTool(world.svc.url, tenant.key, 'get_webhook_health', { id: sub.id });
  assert.deepEqual(viaMcp.structuredContent.data, later);
  const other = await freshTenant(world.svc.url);
  assert.equal((await http(world.svc.url, 'GET', `/api/v1/webhooks/${sub.id}/health`, { token: other.key })).status, 404);
  assertRefusal(await callTool(world.svc.url, other.key, 'get_webhook_health', { id: sub.id }), 'NOT_FOUND');
});

test('X-Merx-Resource-Version: grows with every change of the order and of the shipment; a receiver keeps the highest', async () => {
  const endpoint = world.receiver.endpoint();
  const tenant = await shipTenant(world.svc);
  await createWebhook(world.svc.url, tenant.key, {
    url: endpoint.url,
    events: ['order.updated', 'order.status_changed', 'order.paid', 'shipment.created', 'shipment.cancelled'],
  });
  const order = await tenant.op.checkout(tenant.accountId);
  await touchOrder(world.svc.url, tenant.key, order.id, 'one');
  await touchOrder(world.svc.url, tenant.key, order.id, 'two');
  await tenant.op.pay(order.id);
  await touchOrder(world.svc.url, tenant.key, order.id, 'three');
  const shipment = await http(world.svc.url, 'POST', '/api/v1/shipments', { token: tenant.key, body: { order_id: order.id } });
  assert.equal(shipment.status, 201, shipment.text);
  const cancelled = await http(world.svc.url, 'POST', `/api/v1/shipments/${shipment.body.data.id}/cancel`, {
    token: tenant.key,
    body: { reason: 'test' },
  });
  assert.equal(cancelled.status, 200, cancelled.text);
  const received = await eventually(
    async () => {
      const got = endpoint.requests.filter((r) => r.headers['x-merx-event'] === 'shipment.cancelled');
      return got.length ? endpoint.requests : null;
    },
    'the shipment.cancelled delivery',
    60_000,
  );

  const versions = (prefix: string) =>
    received
      .filter((r) => String(r.headers['x-merx-event']).startsWith(prefix))
      .map((r) => ({ event: JSON.parse(r.body), version: Number(r.headers['x-merx-resource-version']) }));
  // In commit order (one subscription, sent right after each commit), each later change of the order carries a greater version.
  const orderVersions = versions('order.').sort((a, b) => a.event.created_at.localeCompare(b.event.created_at) || 0);
  assert.ok(orderVersions.length >= 4);
  for (const v of orderVersions) assert.ok(Number.isSafeInteger(v.version) && v.version > 0);
  const notes = orderVersions.filter((v) => v.event.event === 'order.updated' && v.event.data.changed.includes('admin_notes'));
  assert.deepEqual(
    notes.map((v) => v.event.data.order.admin_notes),
    ['one', 'two', 'three'],
  );
  assert.ok(notes[0].version < notes[1].version && notes[1].version < notes[2].version, JSON.stringify(notes.map((n) => n.version)));
  const shipmentVersions = versions('shipment.');
  const created = shipmentVersions.find((v) => v.event.event === 'shipment.created')!;
  const cancelledV = shipmentVersions.find((v) => v.event.event === 'shipment.cancelled')!;
  assert.ok(created.version < cancelledV.version);

  // The receiver rule: whatever the arrival order, keeping the highest version per resource id ends on the latest state.
  const shuffled = [...notes].reverse();
  const applied = new Map<string, { version: number; notes: string }>();
  for (const d of shuffled) {
    const id = d.event.data.order.id;
    if ((applied.get(id)?.version ?? 0) < d.version) applied.set(id, { version: d.version, notes: d.event.data.order.admin_notes });
  }
  assert.equal(applied.get(order.id)!.notes, 'three');
});
