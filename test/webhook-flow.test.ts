// EXTENSIONS 9, webhook flow: the Flow resource (REST and MCP, dry run,
// refusals) and the pause: held deliveries spend no attempt and are never
// marked dead, the retry and test endpoints still send, and a resume sends
// every held event once, oldest first, at once (the worker woken, not polled).
// The service runs its worker (WORKERS=1), against a real HTTPS receiver.
import { test, before, after, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { ADMIN_TOKEN, http, freshTenant, startTestService, type TestService } from './helpers/harness.ts';
import { busiestSecond, inBurstOrder, startHttpsReceiver, type HttpsReceiver, type ReceiverEndpoint } from './helpers/https-receiver.ts';
import { callTool, callToolError } from './helpers/mcp.ts';
import { backPressureUntil } from '../src/modules/webhooks/delivery/flow.ts';
import { createWebhook, deliveriesOf, eventually, isolatedDatabase, runDeliveryJob, touchOrder, type IsolatedDatabase } from './helpers/webhooks.ts';

let svc: TestService;
let receiver: HttpsReceiver;
let database: IsolatedDatabase;

before(async () => {
  receiver = await startHttpsReceiver();
  process.env.NODE_EXTRA_CA_CERTS = receiver.caFile;
  database = await isolatedDatabase();
  svc = await startTestService({ ...database.env, WEBHOOK_ALLOW_HOSTS: '127.0.0.1', WORKERS: '1', RATE_LIMIT_REST_PER_MINUTE: '100000' });
});
after(async () => {
  await svc?.close();
  await receiver?.close();
  await database?.drop();
});

const FLOW_FIELDS = [
  'circuit',
  'circuit_breaker',
  'circuit_opened_at',
  'held',
  'next_probe_at',
  'paused',
  'paused_at',
  'rate_per_second',
  'retry_after_until',
  'webhook_id',
];

async function setup(t: TestContext, endpoint: ReceiverEndpoint) {
  const tenant = await freshTenant(svc.url);
  const { data: sub } = await createWebhook(svc.url, tenant.key, { url: endpoint.url, events: ['order.updated'] });
  const order = await tenant.op.checkout(tenant.accountId);
  t.after(async () => {
    await http(svc.url, 'DELETE', `/api/v1/webhooks/${sub.id}`, { token: tenant.key });
  });
  const flow = async () => {
    const res = await http(svc.url, 'GET', `/api/v1/webhooks/${sub.id}/flow`, { token: tenant.key });
    assert.equal(res.status, 200, res.text);
    return res.body.data;
  };
  const patchFlow = (body: unknown, headers: Record<string, string> = {}) =>
    http(svc.url, 'PATCH', `/api/v1/webhooks/${sub.id}/flow`, { token: tenant.key, body, headers });
  return { ...tenant, sub, order, flow, patchFlow };
}

const eventIdOf = (r: { body: string }) => JSON.parse(r.body).id as string;

test('the flow: defaults, a pause, its dry run, and the refusals', async (t) => {
  const endpoint = receiver.endpoint();
  const { key, sub, flow, patchFlow } = await setup(t, endpoint);

  const initial = await flow();
  assert.deepEqual(Object.keys(initial).sort(), FLOW_FIELDS);
  assert.deepEqual(initial, {
    webhook_id: sub.id,
    paused: false,
    paused_at: null,
    rate_per_second: null,
    circuit_breaker: false,
    circuit: 'closed',
    circuit_opened_at: null,
    next_probe_at: null,
    retry_after_until: null,
    held: 0,
  });

  // Dry run: the current flow and the changes, nothing changed.
  const dry = await patchFlow({ paused: true }, { 'x-merx-dry-run': '1' });
  assert.equal(dry.status, 200, dry.text);
  assert.deepEqual(dry.body, { dry_run: true, data: initial, changes: { paused: true } });
  assert.deepEqual(await flow(), initial);

  const paused = await patchFlow({ paused: true });
  assert.equal(paused.status, 200, paused.text);
  assert.equal(paused.body.data.paused, true);
  assert.ok(Date.parse(paused.body.data.paused_at) <= Date.now());
  assert.deepEqual(await flow(), paused.body.data);
  // Pausing again keeps the time the pause began.
  assert.equal((await patchFlow({ paused: true })).body.data.paused_at, paused.body.data.paused_at);
  // An empty PATCH changes nothing.
  assert.deepEqual((await patchFlow({})).body.data, paused.body.data);

  const resumed = await patchFlow({ paused: false });
  assert.equal(resumed.status, 200);
  assert.equal(resumed.body.data.paused, false);
  assert.equal(resumed.body.data.paused_at, null);

  // A rate and the circuit breaker, each kept while another field changes; null clears the rate.
  const rated = await patchFlow({ rate_per_second: 7, circuit_breaker: true });
  assert.equal(rated.status, 200, rated.text);
  assert.deepEqual([rated.body.data.rate_per_second, rated.body.data.circuit_breaker, rated.body.data.circuit], [7, true, 'closed']);
  const pausedRated = (await patchFlow({ paused: true })).body.data;
  assert.deepEqual([pausedRated.rate_per_second, pausedRated.circuit_breaker], [7, true]);
  const cleared = (await patchFlow({ rate_per_second: null, circuit_breaker: false, paused: false })).body.data;
  assert.deepEqual([cleared.rate_per_second, cleared.circuit_breaker, cleared.paused], [null, false, false]);
  assert.equal((await patchFlow({ rate_per_second: 1000 })).body.data.rate_per_second, 1000);
  assert.equal((await patchFlow({ rate_per_second: 1 })).body.data.rate_per_second, 1);
  assert.equal((await patchFlow({ rate_per_second: null })).body.data.rate_per_second, null);

  // Other fields: 400 with details.allowed; bad values: 400.
  for (const body of [{ color: 'red' }, { circuit: 'open' }]) {
    const res = await patchFlow(body);
    assert.equal(res.status, 400, JSON.stringify(body));
    assert.equal(res.body.error.code, 'validation_failed');
    assert.deepEqual(res.body.error.details.allowed, ['paused', 'rate_per_second', 'circuit_breaker']);
  }
  for (const body of [
    { paused: 'yes' },
    { paused: null },
    { rate_per_second: 0 },
    { rate_per_second: 1001 },
    { rate_per_second: 2.5 },
    { rate_per_second: '5' },
    { circuit_breaker: null },
    { circuit_breaker: 'on' },
  ]) {
    const res = await patchFlow(body);
    assert.equal(res.status, 400, JSON.stringify(body));
    assert.equal(res.body.error.code, 'validation_failed');
  }

  // Another account's subscription, an unknown one, a bad id.
  const other = await freshTenant(svc.url);
  for (const [path, status] of [
    [`/api/v1/webhooks/${sub.id}/flow`, 404],
    [`/api/v1/webhooks/${crypto.randomUUID()}/flow`, 404],
    ['/api/v1/webhooks/nope/flow', 400],
  ] as const) {
    assert.equal((await http(svc.url, 'GET', path, { token: other.key })).status, status, path);
    assert.equal((await http(svc.url, 'PATCH', path, { token: other.key, body: { paused: true } })).status, status, path);
  }
  // Scopes: reading needs webhooks:read, changing webhooks:write.
  const reader = await other.op.issueKey(other.accountId, { scopes: ['webhooks:read'] });
  const mine = await http(svc.url, 'POST', '/api/v1/webhooks', { token: other.key, body: { url: endpoint.url, events: ['order.paid'] } });
  assert.equal(mine.status, 201, mine.text);
  assert.equal((await http(svc.url, 'GET', `/api/v1/webhooks/${mine.body.data.id}/flow`, { token: reader })).status, 200);
  const refused = await http(svc.url, 'PATCH', `/api/v1/webhooks/${mine.body.data.id}/flow`, { token: reader, body: { paused: true } });
  assert.equal(refused.status, 403);
  await http(svc.url, 'DELETE', `/api/v1/webhooks/${mine.body.data.id}`, { token: other.key });

  // MCP: the same resource and the same change.
  const got = await callTool(svc.url, key, 'get_webhook_flow', { id: sub.id });
  assert.equal(got.isError, false);
  assert.deepEqual(got.structuredContent.data, await flow());
  const changed = await callTool(svc.url, key, 'update_webhook_flow', { id: sub.id, paused: true });
  assert.equal(changed.isError, false, JSON.stringify(changed.structuredContent));
  assert.equal(changed.structuredContent.data.paused, true);
  const dryMcp = await callTool(svc.url, key, 'update_webhook_flow', { id: sub.id, paused: false, dry_run: true });
  assert.deepEqual(dryMcp.structuredContent, { dry_run: true, data: changed.structuredContent.data, changes: { paused: false } });
  // MCP refuses an unknown argument as invalid params (-32602), as for every tool.
  const bad = await callToolError(svc.url, key, 'update_webhook_flow', { id: sub.id, circuit: 'open' });
  assert.equal(bad.code, -32602);
  assert.match(bad.message, /circuit/);
  const ratedMcp = await callTool(svc.url, key, 'update_webhook_flow', { id: sub.id, paused: false, rate_per_second: 3, circuit_breaker: true });
  assert.equal(ratedMcp.isError, false, JSON.stringify(ratedMcp.structuredContent));
  assert.deepEqual([ratedMcp.structuredContent.data.rate_per_second, ratedMcp.structuredContent.data.circuit_breaker], [3, true]);
  assert.deepEqual(await flow(), ratedMcp.structuredContent.data);
});

test('paused: events wait as pending (no attempt spent, none dead), retry and test still send, a resume sends each held event once, oldest first', async (t) => {
  const endpoint = receiver.endpoint();
  const { key, sub, order, flow, patchFlow } = await setup(t, endpoint);
  // One delivery before the pause, so the subscription is known to work.
  await touchOrder(svc.url, key, order.id, 'before');
  await endpoint.waitFor(1);
  // Its outcome is recorded in the background: wait for it, so that only the held ones are pending below.
  await eventually(async () => (await deliveriesOf(svc.url, key, sub.id)).every((d: any) => d.status === 'delivered'), 'the first delivery recorded');
  assert.equal((await patchFlow({ paused: true })).status, 200);

  const N = 8;
  const eventIds: string[] = [];
  for (let i = 0; i < N; i++) {
    await touchOrder(svc.url, key, order.id, `held ${i}`);
  }
  // Every event made its delivery, pending, on no attempt; the flow counts them held.
  const held = await eventually(async () => {
    const f = await flow();
    return f.held === N ? f : null;
  }, 'all deliveries held');
  assert.equal(held.paused, true);
  const pending = (await deliveriesOf(svc.url, key, sub.id, 50)).filter((d: any) => d.status === 'pending');
  assert.equal(pending.length, N);
  for (const d of pending) assert.equal(d.attempt, 0, 'a held delivery spends no attempt');
  // Several worker passes, even with a clock a day ahead (past every backoff and lease), send nothing and kill nothing.
  for (let i = 0; i < 2; i++) {
    assert.equal(await runDeliveryJob(svc.url, new Date(Date.now() + 86_400_000)), 0);
  }
  assert.equal(endpoint.requests.length, 1, 'nothing sent while paused');
  eventIds.push(...pending.map((d: any) => d.event_id).reverse());

  // The test endpoint still sends (a person asked), and so does a retry, of a held delivery.
  const tested = await http(svc.url, 'POST', `/api/v1/webhooks/${sub.id}/test`, { token: key });
  assert.equal(tested.status, 200, tested.text);
  assert.equal(tested.body.data.status, 'delivered');
  const retried = await http(svc.url, 'POST', `/api/v1/webhook-deliveries/${pending[0].id}/retry`, { token: key });
  assert.equal(retried.status, 200, retried.text);
  assert.equal(retried.body.ok, true);
  assert.equal(endpoint.requests.length, 3);
  assert.equal(JSON.parse(endpoint.requests[1].body).event, 'test');
  assert.equal(eventIdOf(endpoint.requests[2]), pending[0].event_id);
  assert.equal((await flow()).held, N - 1);
  // /metrics counts them (every subscription's; this file holds no others now).
  const metrics = await http(svc.url, 'GET', '/metrics', { token: ADMIN_TOKEN });
  assert.equal(metrics.status, 200);
  assert.equal(Number(/^merx_webhook_held_deliveries (\d+)$/m.exec(metrics.text)?.[1]), N - 1);

  // Resume: the held ones go out at once (the worker is woken; its next timed pass would be minutes away), oldest event first.
  const resumed = await patchFlow({ paused: false });
  assert.equal(resumed.status, 200);
  await endpoint.waitFor(3 + N - 1);
  const drained = endpoint.requests.slice(3).map(eventIdOf);
  assert.deepEqual(
    drained,
    eventIds.filter((id) => id !== pending[0].event_id),
    'each held event once, in the order of the events',
  );
  const settled = await eventually(async () => {
    const all = await deliveriesOf(svc.url, key, sub.id, 50);
    return all.every((d: any) => d.status === 'delivered') ? all : null;
  }, 'every delivery delivered');
  assert.equal(settled.length, N + 2);
  for (const d of settled.filter((x: any) => x.event === 'order.updated' && x.id !== pending[0].id)) {
    assert.equal(d.attempt, 1, 'sent as the first attempt it was due for');
  }
  assert.equal((await flow()).held, 0);
  // Nothing more arrives: each event exactly once.
  const ids = endpoint.requests.map(eventIdOf);
  assert.equal(new Set(ids).size, ids.length);
});

test('Retry-After: seconds or an HTTP date, capped at an hour, only on 429 and 503', () => {
  const now = Date.parse('2026-11-28T12:00:00.000Z');
  const at = (code: number | null, value?: string) =>
    backPressureUntil(code, value === undefined ? {} : { 'retry-after': value }, now)?.toISOString() ?? null;
  assert.equal(at(429, '30'), '2026-11-28T12:00:30.000Z');
  assert.equal(at(503, ' 5 '), '2026-11-28T12:00:05.000Z');
  assert.equal(at(429, 'Sat, 28 Nov 2026 12:02:00 GMT'), '2026-11-28T12:02:00.000Z');
  assert.equal(at(429, '86400'), '2026-11-28T13:00:00.000Z', 'capped at 3600 s');
  assert.equal(at(503, 'Sun, 29 Nov 2026 12:00:00 GMT'), '2026-11-28T13:00:00.000Z', 'a date capped too');
  for (const [code, value] of [
    [429, '0'],
    [429, 'Sat, 28 Nov 2026 11:00:00 GMT'],
    [429, 'soon'],
    [429, '-5'],
    [429, '1.5'],
    [429, undefined],
    [500, '30'],
    [200, '30'],
    [null, '30'],
  ] as const) {
    assert.equal(at(code, value), null, `${code} ${value}`);
  }
});

for (const [label, header] of [
  ['in seconds', () => '2'],
  ['as an HTTP date', () => new Date(Date.now() + 3_000).toUTCString()],
] as const) {
  test(`back-pressure (${label}): a 429 holds the next delivery until Retry-After, spending nothing; it then goes at once`, async (t) => {
    const endpoint = receiver.endpoint();
    const { key, sub, order, flow } = await setup(t, endpoint);
    const value = header();
    endpoint.script([{ status: 429, body: 'slow down', headers: { 'retry-after': value } }], { status: 200 });
    await touchOrder(svc.url, key, order.id, 'answered 429');
    await endpoint.waitFor(1);
    const pressed = await eventually(async () => {
      const f = await flow();
      return f.retry_after_until ? f : null;
    }, 'retry_after_until set');
    const until = Date.parse(pressed.retry_after_until);
    if (/GMT/.test(value)) assert.equal(until, Date.parse(value));
    else assert.ok(until > Date.now() - 1000 && until <= Date.now() + 2_000);

    // A second event's delivery is due, and held: no attempt spent.
    await touchOrder(svc.url, key, order.id, 'held by back-pressure');
    const all = await deliveriesOf(svc.url, key, sub.id);
    const [second, first] = all;
    assert.equal(first.last_status_code, 429);
    assert.equal(first.status, 'pending');
    assert.equal(first.attempt, 1, 'the 429 was a failed attempt, retried on its schedule');
    if (Date.now() < until - 300) {
      assert.equal(second.attempt, 0);
      assert.equal((await flow()).held, 1);
    }
    // It goes once the time has passed (the worker wakes for it), as attempt 1, not before.
    const received = await endpoint.waitFor(2);
    assert.equal(received.length, 2);
    const delivered = await eventually(async () => {
      const d = (await deliveriesOf(svc.url, key, sub.id)).find((x: any) => x.id === second.id);
      return d.status === 'delivered' ? d : null;
    }, 'the held delivery delivered');
    assert.equal(delivered.attempt, 1);
    const attempts = await http(svc.url, 'GET', `/api/v1/webhook-deliveries/${second.id}/attempts`, { token: key });
    assert.equal(attempts.status, 200, attempts.text);
    assert.equal(attempts.body.data.length, 1);
    assert.ok(Date.parse(attempts.body.data[0].started_at) >= until, 'not before retry_after_until');
    assert.equal((await flow()).retry_after_until, null, 'null once passed');
    // The 429'd delivery still waits for its backoff: not held, not counted.
    assert.equal((await flow()).held, 0);
  });
}

test('back-pressure is capped at an hour: a 503 with Retry-After: 86400 holds until an hour after the answer', async (t) => {
  const endpoint = receiver.endpoint();
  const { key, order, flow } = await setup(t, endpoint);
  endpoint.script([{ status: 503, headers: { 'retry-after': '86400' } }], { status: 200 });
  const before = Date.now();
  await touchOrder(svc.url, key, order.id, 'answered 503');
  await endpoint.waitFor(1);
  const f = await eventually(async () => {
    const f = await flow();
    return f.retry_after_until ? f : null;
  }, 'retry_after_until set');
  const until = Date.parse(f.retry_after_until);
  assert.ok(until >= before + 3_600_000 && until <= Date.now() + 3_600_000, f.retry_after_until);
});

/**
 * When the service began each attempt of the subscription (webhook_attempts.started_at), as arrivals: the rate's
 * "no more than N attempts begin in any second" is read here; the receiver's clock adds each request's own travel,
 * which on a loaded machine varies by more than the window's margin.
 */
async function attemptStarts(subscriptionId: string): Promise<Array<{ receivedAt: number }>> {
  const { rows } = await svc.service.db.query<{ started_at: string | Date }>(
    'SELECT started_at FROM webhook_attempts WHERE webhook_id = $1 ORDER BY started_at',
    [subscriptionId],
  );
  return rows.map((r) => ({ receivedAt: new Date(r.started_at).getTime() }));
}

/** Arrival gaps in ms (to read when a window assertion fails). */
const gaps = (requests: Array<{ receivedAt: number }>) =>
  requests.map((r, i) => (i ? Math.round(r.receivedAt - requests[i - 1].receivedAt) : 0)).join(' ');

test("rate: held deliveries drain at no more than rate_per_second starts in any second (the service's attempt log; the receiver's clock within travel), in order of their events, spending nothing while they wait", async (t) => {
  const endpoint = receiver.endpoint();
  const { key, sub, order, flow, patchFlow } = await setup(t, endpoint);
  const RATE = 3;
  assert.equal((await patchFlow({ paused: true, rate_per_second: RATE })).status, 200);
  const N = 10;
  for (let i = 0; i < N; i++) await touchOrder(svc.url, key, order.id, `rated ${i}`);
  assert.equal((await flow()).held, N);
  const inOrder = (await deliveriesOf(svc.url, key, sub.id, 50)).map((d: any) => d.event_id).reverse();

  const resumed = Date.now();
  await patchFlow({ paused: false });
  // Midway: those still waiting for the rate are held, on no attempt.
  await endpoint.waitFor(RATE + 1);
  const midway = (await deliveriesOf(svc.url, key, sub.id, 50)).filter((d: any) => d.status === 'pending' && d.attempt === 0);
  assert.ok(midway.length >= 1, 'some still wait');
  assert.ok((await flow()).held >= 1);

  const received = await endpoint.waitFor(N, 30_000);
  const took = Date.now() - resumed;
  const busiest = busiestSecond(await attemptStarts(sub.id));
  assert.ok(busiest.count <= RATE, `at most ${RATE} attempts began within a second, saw ${busiest.count}; gaps ${gaps(await attemptStarts(sub.id))}`);
  // On the receiver's clock too: a start that could not begin within its turn's budget was not sent on it.
  assert.ok(busiestSecond(received).count <= RATE, `the receiver saw ${busiestSecond(received).count} within a second; gaps ${gaps(received)}`);
  // Waiting for the rate is not waiting for a pass: ~1.2 s a window of RATE, not minutes.
  assert.ok(took < (Math.ceil(N / RATE) + 2) * 1_500, `drained in ${took} ms`);
  // Each event once, oldest first: the starts of one window go together, a start given back goes first in a later one.
  assert.deepEqual(
    inBurstOrder(received, (r) => inOrder.indexOf(eventIdOf(r))).map(eventIdOf),
    inOrder,
    `in order of events; gaps ${gaps(received)}`,
  );
  const settled = await eventually(async () => {
    const all = await deliveriesOf(svc.url, key, sub.id, 50);
    return all.every((d: any) => d.status === 'delivered') ? all : null;
  }, 'every delivery delivered');
  for (const d of settled) assert.equal(d.attempt, 1, 'sent as the attempt it was due for');
  assert.equal((await flow()).held, 0);

  // New events' first attempts take their turn too: a burst of 7 at a rate of 3.
  for (let i = 0; i < 7; i++) await touchOrder(svc.url, key, order.id, `rated later ${i}`);
  await endpoint.waitFor(N + 7, 30_000);
  const started = await attemptStarts(sub.id);
  assert.ok(busiestSecond(started).count <= RATE, `at most ${RATE} within a second, saw ${busiestSecond(started).count}; gaps ${gaps(started)}`);
  // The test endpoint takes its turn in the rate, and sends.
  const tested = await http(svc.url, 'POST', `/api/v1/webhooks/${sub.id}/test`, { token: key });
  assert.equal(tested.status, 200, tested.text);
  await endpoint.waitFor(N + 8);
  const withTest = await attemptStarts(sub.id);
  assert.equal(withTest.length, N + 8);
  assert.ok(busiestSecond(withTest).count <= RATE, `at most ${RATE} within a second, saw ${busiestSecond(withTest).count}; gaps ${gaps(withTest)}`);
});

test('rate: a test and a retry sent while a backlog drains at the full rate reserve the next turn, ahead of the backlog; no second sees more than the rate', async (t) => {
  const endpoint = receiver.endpoint();
  const { key, sub, order, patchFlow } = await setup(t, endpoint);
  const RATE = 2;
  assert.equal((await patchFlow({ paused: true, rate_per_second: RATE })).status, 200);
  const N = 12;
  for (let i = 0; i < N; i++) await touchOrder(svc.url, key, order.id, `backlog ${i}`);
  assert.equal((await patchFlow({ paused: false })).status, 200);
  await endpoint.waitFor(RATE);

  // The worker takes every turn it can; the test, and a retry of the newest held delivery, each reserve the next one.
  const newest = (await deliveriesOf(svc.url, key, sub.id, 50)).find((d: any) => d.status === 'pending' && d.attempt === 0);
  assert.ok(newest, 'a held delivery to retry');
  const [tested, retried] = await Promise.all([
    http(svc.url, 'POST', `/api/v1/webhooks/${sub.id}/test`, { token: key }),
    http(svc.url, 'POST', `/api/v1/webhook-deliveries/${newest.id}/retry`, { token: key }),
  ]);
  assert.equal(tested.status, 200, tested.text);
  assert.equal(retried.status, 200, retried.text);
  // Each event once: the retried delivery is not sent again by the worker.
  const received = await endpoint.waitFor(N + 1, 30_000);
  const arrived = received.map((r) => JSON.parse(r.body) as { id: string; event: string });
  assert.equal(new Set(arrived.map((e) => e.id)).size, N + 1);
  for (const [what, at] of [
    ['the test', arrived.findIndex((e) => e.event === 'test')],
    ['the retry', arrived.findIndex((e) => e.id === newest.event_id)],
  ] as const) {
    assert.ok(at >= 0 && at < N + 1 - RATE, `${what} went ahead of the backlog's end (arrived ${at + 1} of ${N + 1})`);
  }
  // The attempt log is written in batches: the last answers' rows follow them.
  const started = await eventually(async () => {
    const rows = await attemptStarts(sub.id);
    return rows.length === N + 1 ? rows : null;
  }, 'every attempt logged');
  assert.ok(
    busiestSecond(started).count <= RATE,
    `at most ${RATE} attempts began within a second, saw ${busiestSecond(started).count}; gaps ${gaps(started)}`,
  );
  assert.ok(busiestSecond(received).count <= RATE, `the receiver saw ${busiestSecond(received).count} within a second; gaps ${gaps(received)}`);

  // More waiting than ten seconds of turns (10 tests at once at a rate of 1): each waits for its own, none goes without.
  assert.equal((await patchFlow({ rate_per_second: 1 })).status, 200);
  const many = await Promise.all(Array.from({ length: 10 }, () => http(svc.url, 'POST', `/api/v1/webhooks/${sub.id}/test`, { token: key })));
  for (const res of many) assert.equal(res.status, 200, res.text);
  const tests = (await endpoint.waitFor(N + 11, 30_000)).slice(N + 1);
  assert.ok(busiestSecond(tests).count <= 1, `the receiver saw ${busiestSecond(tests).count} tests within a second; gaps ${gaps(tests)}`);
});

test('circuit breaker: 10 failures in a row open it (one email), held deliveries spend nothing, a probe at next_probe_at (backing off), a success closes it and the held drain; retry and test still send', async (t) => {
  const endpoint = receiver.endpoint();
  const { key, sub, order, flow, patchFlow, op, accountId } = await setup(t, endpoint);
  const db = svc.service.db;
  const circuitMails = async () => (await op.messages(accountId)).filter((m: any) => m.kind === 'webhook_circuit_open');
  // "Time passes": the probe falls due now (the engine's long intervals are the database's).
  const probeNow = async () => {
    await db.query(`UPDATE webhook_flows SET next_probe_at = now() - interval '1 second' WHERE webhook_id = $1`, [sub.id]);
    await runDeliveryJob(svc.url);
  };
  assert.equal((await patchFlow({ circuit_breaker: true })).status, 200);
  endpoint.script([], { status: 500, body: 'down' });

  // 10 events, each first attempt failing: the 10th opens the circuit.
  for (let i = 0; i < 10; i++) await touchOrder(svc.url, key, order.id, `failing ${i}`);
  await endpoint.waitFor(10);
  const opened = await eventually(async () => {
    const f = await flow();
    return f.circuit === 'open' ? f : null;
  }, 'the circuit open');
  const openedAt = Date.parse(opened.circuit_opened_at);
  assert.equal(Date.parse(opened.next_probe_at) - openedAt, 60_000, 'first probe 60 s after opening');
  assert.equal((await circuitMails()).length, 1, 'one email for the opening');
  const mail = (await circuitMails())[0];
  assert.match(mail.body, new RegExp(endpoint.url.replace(/[.?]/g, '\\$&')));

  // New events are held: pending on no attempt, counted in held; worker passes (even a day ahead) send nothing.
  for (let i = 0; i < 8; i++) await touchOrder(svc.url, key, order.id, `held ${i}`);
  const heldOnes = async () => (await deliveriesOf(svc.url, key, sub.id, 50)).filter((d: any) => d.status === 'pending' && d.attempt === 0);
  assert.equal((await heldOnes()).length, 8);
  assert.equal((await flow()).held, 8);
  await runDeliveryJob(svc.url, new Date(Date.now() + 30_000));
  assert.equal(endpoint.requests.length, 10, 'nothing starts while open before the probe');

  // The retry and test endpoints still send (a person asked); failing, they keep it open, and no second email.
  const [oldestHeld] = (await heldOnes()).reverse();
  const retried = await http(svc.url, 'POST', `/api/v1/webhook-deliveries/${oldestHeld.id}/retry`, { token: key });
  assert.equal(retried.status, 200, retried.text);
  assert.equal(retried.body.ok, false);
  const tested = await http(svc.url, 'POST', `/api/v1/webhooks/${sub.id}/test`, { token: key });
  assert.equal(tested.status, 200, tested.text);
  assert.equal(endpoint.requests.length, 12);
  assert.equal((await flow()).circuit, 'open');

  // The probe: one delivery, the oldest held; it fails, the next waits 120 s after it.
  const oldest = (await heldOnes()).reverse()[0].event_id;
  await probeNow();
  const [probe] = await endpoint.waitFor(13).then((r) => r.slice(12));
  assert.equal(eventIdOf(probe), oldest, 'the probe is the oldest held delivery');
  await new Promise((r) => setTimeout(r, 500));
  assert.equal(endpoint.requests.length, 13, 'one probe only');
  const afterProbe = await flow();
  assert.equal(afterProbe.circuit, 'open');
  const wait = Date.parse(afterProbe.next_probe_at) - Date.now();
  assert.ok(wait > 110_000 && wait <= 120_000, `next probe in ${wait} ms`);
  // The next failed probe doubles the wait (240 s).
  await probeNow();
  await endpoint.waitFor(14);
  const wait2 = Date.parse((await flow()).next_probe_at) - Date.now();
  assert.ok(wait2 > 230_000 && wait2 <= 240_000, `next probe in ${wait2} ms`);
  assert.equal((await circuitMails()).length, 1, 'still one email');

  // The receiver is back: the next probe succeeds, the circuit closes and the held deliveries drain at once, at the rate.
  endpoint.script([], { status: 200 });
  assert.equal((await patchFlow({ rate_per_second: 2 })).body.data.circuit, 'open');
  const pendingBefore = (await heldOnes()).length;
  assert.equal(pendingBefore, 5);
  await probeNow();
  const drained = (await endpoint.waitFor(14 + pendingBefore)).slice(14);
  assert.ok(busiestSecond(drained).count <= 2, `at the rate: ${gaps(drained)}`);
  assert.equal((await patchFlow({ rate_per_second: null })).status, 200);
  const closed = await eventually(async () => {
    const f = await flow();
    return f.circuit === 'closed' ? f : null;
  }, 'the circuit closed');
  assert.deepEqual([closed.circuit_opened_at, closed.next_probe_at], [null, null]);
  await eventually(async () => (await heldOnes()).length === 0 && (await flow()).held === 0, 'nothing held');
  // Nothing dead for being held: the 10 failures wait for their backoff, the rest are delivered.
  const all = await deliveriesOf(svc.url, key, sub.id, 50);
  assert.equal(all.filter((d: any) => d.status === 'dead').length, 0);

  // A second opening sends a second email.
  endpoint.script([], { status: 503, body: 'down again' });
  for (let i = 0; i < 10; i++) await touchOrder(svc.url, key, order.id, `failing again ${i}`);
  await eventually(async () => (await flow()).circuit === 'open', 'open again');
  assert.equal((await circuitMails()).length, 2);
  // Switching the breaker off closes the circuit and lets the held go.
  endpoint.script([], { status: 200 });
  await touchOrder(svc.url, key, order.id, 'held while open again');
  const count = endpoint.requests.length;
  const off = await patchFlow({ circuit_breaker: false });
  assert.deepEqual([off.body.data.circuit_breaker, off.body.data.circuit], [false, 'closed']);
  await endpoint.waitFor(count + 1);
});

test('a recovery waits while paused, then takes its turn in the rate beside the automatic attempts (no second with more than the rate)', async (t) => {
  const endpoint = receiver.endpoint();
  const { key, sub, order, flow, patchFlow } = await setup(t, endpoint);
  assert.equal((await patchFlow({ paused: true })).status, 200);
  const N = 8;
  for (let i = 0; i < N; i++) await touchOrder(svc.url, key, order.id, `recovered ${i}`);
  const started = await http(svc.url, 'POST', `/api/v1/webhooks/${sub.id}/recover`, {
    token: key,
    body: { since: new Date(Date.now() - 60_000).toISOString(), statuses: ['pending'] },
  });
  assert.equal(started.status, 202, started.text);
  await new Promise((r) => setTimeout(r, 1_500));
  assert.equal(endpoint.requests.length, 0, 'the recovery waits while paused');

  const RATE = 2;
  await patchFlow({ paused: false, rate_per_second: RATE });
  await eventually(
    async () => (await deliveriesOf(svc.url, key, sub.id, 50)).every((d: any) => d.status === 'delivered'),
    'every delivery delivered',
    30_000,
  );
  const recovery = await eventually(
    async () => {
      const res = await http(svc.url, 'GET', started.headers.get('location')!, { token: key });
      return res.body.data.state === 'running' ? null : res.body.data;
    },
    'the recovery finished',
    30_000,
  );
  assert.equal(recovery.state, 'done');
  assert.ok(recovery.attempted >= 1, 'the recovery sent some of them');
  await new Promise((r) => setTimeout(r, 500));
  // A recovered success is delivered: the worker does not send it again (and the recovery skips what the worker delivered).
  assert.ok(endpoint.requests.length >= N);
  // A recovery's attempt must begin within its turn's budget as the worker's do, so the two together keep the rate.
  const begun = await attemptStarts(sub.id);
  const busiest = busiestSecond(begun);
  assert.ok(busiest.count <= RATE, `recovery and worker together: ${busiest.count} began within a second; gaps ${gaps(begun)}`);
  assert.ok(
    busiestSecond(endpoint.requests).count <= RATE,
    `the receiver saw ${busiestSecond(endpoint.requests).count}; gaps ${gaps(endpoint.requests)}`,
  );
  assert.equal((await flow()).held, 0);
});
