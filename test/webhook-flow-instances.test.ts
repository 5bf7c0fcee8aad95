// EXTENSIONS 9 across processes: a pause holds on every instance (the rule is
// in the database, asked by each instance's claims), a resume on one instance
// wakes the other's worker, held deliveries outlive a restart, a rate counts
// the starts of both instances (and an attempt that begins too late after its
// turn waits for another), and the circuit counts the failures of both
// (one email per opening). The service
// runs as child processes (node src/main.ts) with their workers (WORKERS=1).
// Two instances need PostgreSQL; the restart runs on both databases (PGlite
// in a temp DATA_DIR).
import { test, before, after } from 'node:test';
import pg from 'pg';
import assert from 'node:assert/strict';
import { http, operator } from './helpers/harness.ts';
import { busiestSecond, inBurstOrder, startHttpsReceiver, type HttpsReceiver, type ReceiverEndpoint } from './helpers/https-receiver.ts';
import { isolatedDatabase, createWebhook, deliveriesOf, eventually, runDeliveryJob, touchOrder, type IsolatedDatabase } from './helpers/webhooks.ts';
import { freePort, startServiceChild, stopGracefully, type ServiceChild } from './helpers/service-child.ts';

const POSTGRES = Boolean(process.env.DATABASE_URL);

let receiver: HttpsReceiver;
let data: IsolatedDatabase;
const children: ServiceChild[] = [];

const start = async (port?: number) => {
  const child = await startServiceChild(
    port ?? (await freePort()),
    { ...data.env, WORKERS: '1', RATE_LIMIT_REST_PER_MINUTE: '100000', DEPLOY_SHA: 'flowtest000' },
    receiver.caFile,
  );
  children.push(child);
  return child;
};

before(async () => {
  receiver = await startHttpsReceiver();
  data = await isolatedDatabase({ onDisk: true });
});
after(async () => {
  for (const child of children) await stopGracefully(child);
  await receiver?.close();
  await data?.drop();
});

async function subscribed(via: ServiceChild, endpoint: ReceiverEndpoint) {
  const op = operator(via.url);
  const account = await op.createAccount();
  const key = await op.issueKey(account.id);
  const { data: sub } = await createWebhook(via.url, key, { url: endpoint.url, events: ['order.updated'] });
  const order = await op.checkout(account.id);
  const patchFlow = async (on: ServiceChild, body: unknown) => {
    const res = await http(on.url, 'PATCH', `/api/v1/webhooks/${sub.id}/flow`, { token: key, body });
    assert.equal(res.status, 200, res.text);
    return res.body.data;
  };
  const held = async (on: ServiceChild) => (await http(on.url, 'GET', `/api/v1/webhooks/${sub.id}/flow`, { token: key })).body.data.held as number;
  return { key, sub, order, patchFlow, held, op, accountId: account.id as string };
}

const eventIdOf = (r: { body: string }) => JSON.parse(r.body).id as string;

/**
 * Resumed: every held event arrives once, each delivered on attempt 1, none
 * dead; oldest first when one worker sends them (two workers each keep the
 * order of what they claimed, not of each other's).
 */
async function assertDrained(
  via: ServiceChild,
  key: string,
  webhookId: string,
  endpoint: ReceiverEndpoint,
  count: number,
  ordered = true,
  timeoutMs?: number,
) {
  const received = await endpoint.waitFor(count, timeoutMs);
  const deliveries = await eventually(async () => {
    const all = await deliveriesOf(via.url, key, webhookId, 100);
    return all.length === count && all.every((d: any) => d.status === 'delivered') ? all : null;
  }, 'every delivery delivered');
  const oldestFirst = deliveries.map((d: any) => d.event_id).reverse();
  const ids = received.map(eventIdOf);
  if (ordered) assert.deepEqual(ids, oldestFirst, 'each event once, in the order of the events');
  else assert.deepEqual([...ids].sort(), [...oldestFirst].sort(), 'each event once');
  for (const d of deliveries) assert.equal(d.attempt, 1);
}

test('held deliveries outlive a restart: still pending on no attempt, sent once after the resume', async () => {
  const port = await freePort();
  let svc = await start(port);
  const endpoint = receiver.endpoint('restart');
  const { key, sub, order, patchFlow, held } = await subscribed(svc, endpoint);
  await patchFlow(svc, { paused: true });
  for (let i = 0; i < 5; i++) await touchOrder(svc.url, key, order.id, `held ${i}`);
  assert.equal(await held(svc), 5);

  await stopGracefully(svc);
  svc = await start(port);
  assert.equal(await held(svc), 5);
  // The restarted worker's passes, even a day ahead, leave them held.
  assert.equal(await runDeliveryJob(svc.url, new Date(Date.now() + 86_400_000)), 0);
  const pending = await deliveriesOf(svc.url, key, sub.id);
  assert.deepEqual(
    pending.map((d: any) => [d.status, d.attempt]),
    Array(5).fill(['pending', 0]),
  );
  assert.equal(endpoint.requests.length, 0);

  await patchFlow(svc, { paused: false });
  await assertDrained(svc, key, sub.id, endpoint, 5);
});

test(
  'two instances: a pause made on one holds the other; a resume on the other wakes both',
  { skip: POSTGRES ? false : 'two service processes need PostgreSQL' },
  async () => {
    const [a, b] = await Promise.all([start(), start()]);
    const endpoint = receiver.endpoint('two');
    const { key, sub, order, patchFlow, held } = await subscribed(a, endpoint);
    await patchFlow(a, { paused: true });
    const N = 12;
    for (let i = 0; i < N; i++) await touchOrder((i % 2 ? a : b).url, key, order.id, `two ${i}`);
    assert.equal(await held(b), N);
    // Neither worker sends one, whatever its clock.
    assert.equal(await runDeliveryJob(a.url, new Date(Date.now() + 86_400_000)), 0);
    assert.equal(await runDeliveryJob(b.url, new Date(Date.now() + 86_400_000)), 0);
    assert.equal(endpoint.requests.length, 0);

    await patchFlow(b, { paused: false });
    await assertDrained(a, key, sub.id, endpoint, N, false);
  },
);

const twoInstances = { skip: POSTGRES ? false : 'two service processes need PostgreSQL' };

/** Arrival gaps in ms (to read when a window assertion fails). */
const gaps = (times: Array<{ receivedAt: number }>) => times.map((r, i) => (i ? Math.round(r.receivedAt - times[i - 1].receivedAt) : 0)).join(' ');

test('a rate of N: a granted attempt that cannot begin soon enough after its turn is not sent on it, and waits, unspent, for another (no second of the receiver sees more than N)', async () => {
  // One instance, the only one (PGlite's data directory takes one process).
  await Promise.all(children.splice(0).map(stopGracefully));
  const svc = await start();
  const endpoint = receiver.endpoint('late');
  const { key, sub, order, patchFlow, held, op } = await subscribed(svc, endpoint);
  const RATE = 4;
  await patchFlow(svc, { paused: true, rate_per_second: RATE });
  const N = 16;
  for (let i = 0; i < N; i++) await touchOrder(svc.url, key, order.id, `late ${i}`);
  assert.equal(await held(svc), N);
  const oldestFirst = (await deliveriesOf(svc.url, key, sub.id, 100)).map((d: any) => d.event_id).reverse();

  // Every other claim of the drain stalls half a second after its grant (the operator's fault, as a busy event loop
  // would): sent on that grant, its requests would arrive in the next window's second beside that window's own.
  const faults = async (body: unknown) => (await op.call('PUT', '/faults', body)).data.webhook_metered_start as string;
  let stalled = 0;
  let draining = true;
  const staller = (async () => {
    while (draining) {
      await faults({ webhook_metered_start: 'late_next' });
      while (draining && (await faults({})) === 'late_next') await new Promise((r) => setTimeout(r, 20));
      if (!draining) break;
      stalled++;
      await new Promise((r) => setTimeout(r, 1_500));
    }
    await faults({ webhook_metered_start: 'ok' });
  })();
  await patchFlow(svc, { paused: false });
  const received = await endpoint.waitFor(N, 60_000);
  draining = false;
  await staller;

  assert.ok(stalled >= 2, `the fault stalled ${stalled} claims`);
  const busiest = busiestSecond(received);
  assert.ok(busiest.count <= RATE, `the receiver saw ${busiest.count} begin within a second; gaps ${gaps(received)}`);
  // Each event once, on attempt 1 (the stalled grants spent nothing), none dead, oldest first window by window.
  await assertDrained(svc, key, sub.id, endpoint, N, false);
  assert.deepEqual(
    inBurstOrder(received, (r) => oldestFirst.indexOf(eventIdOf(r))).map(eventIdOf),
    oldestFirst,
    `in order of events; gaps ${gaps(received)}`,
  );
  assert.equal(await held(svc), 0);
  console.log(`rate ${RATE}/s, ${stalled} claims stalled: ${N} drained, busiest second at the receiver ${busiest.count}; gaps ${gaps(received)}`);
});

test(
  'two instances: a rate of N counts the starts of both (no second sees more than N begin), in due order, none spent while waiting',
  twoInstances,
  async () => {
    const [a, b] = await Promise.all([start(), start()]);
    const endpoint = receiver.endpoint('rate');
    const { key, sub, order, patchFlow, held } = await subscribed(a, endpoint);
    const RATE = 4;
    await patchFlow(a, { paused: true, rate_per_second: RATE });
    const N = 32;
    for (let i = 0; i < N; i++) await touchOrder((i % 2 ? a : b).url, key, order.id, `rated ${i}`);
    assert.equal(await held(b), N);
    const resumed = performance.now();
    // Resumed on b: both workers wake and drain, each claim counting the other's starts.
    await patchFlow(b, { paused: false });
    // Waiting for the rate is not waiting for a worker's pass (minutes); on a busy machine a start that came too late
    // after its turn waits for another, so the bound is generous (how long it took is printed, not asserted).
    await assertDrained(a, key, sub.id, endpoint, N, false, 60_000);
    const took = performance.now() - resumed;
    // "Begin" on the receiver's clock (when each request arrived), and in each instance's attempt log.
    const starts = await attemptStarts(sub.id);
    const busiest = busiestSecond(starts);
    assert.equal(starts.length, N);
    assert.ok(busiest.count <= RATE, `at most ${RATE} begin within any second, saw ${busiest.count}; gaps ${gaps(starts)}`);
    assert.ok(
      busiestSecond(endpoint.requests).count <= RATE,
      `the receiver saw ${busiestSecond(endpoint.requests).count}; gaps ${gaps(endpoint.requests)}`,
    );
    // A burst of new events on both instances: their first attempts take their turn too.
    for (let i = 0; i < 12; i++) await touchOrder((i % 2 ? a : b).url, key, order.id, `burst ${i}`);
    await endpoint.waitFor(N + 12, 30_000);
    assert.ok(busiestSecond(endpoint.requests).count <= RATE, `burst: the receiver saw ${busiestSecond(endpoint.requests).count}`);
    assert.ok(
      busiestSecond(await attemptStarts(sub.id)).count <= RATE,
      `burst: saw ${busiestSecond(await attemptStarts(sub.id)).count} within a second`,
    );
    console.log(
      `rate ${RATE}/s, two instances: ${N} held drained in ${Math.round(took)} ms (${((N / took) * 1000).toFixed(2)}/s), busiest second ${busiest.count}`,
    );
  },
);

test(
  'two instances: the circuit counts the failures of both; it opens once (one email) and a success on either closes it',
  twoInstances,
  async () => {
    // Only these two instances send (the earlier tests' would each have an attempt in flight as well).
    await Promise.all(children.splice(0).map(stopGracefully));
    const [a, b] = await Promise.all([start(), start()]);
    const endpoint = receiver.endpoint('circuit');
    const { key, sub, order, patchFlow, held, op, accountId } = await subscribed(a, endpoint);
    await patchFlow(a, { circuit_breaker: true });
    endpoint.script([], { status: 500 });
    for (let i = 0; i < 14; i++) await touchOrder((i % 2 ? a : b).url, key, order.id, `failing ${i}`);
    const flowOf = async (on: ServiceChild) => (await http(on.url, 'GET', `/api/v1/webhooks/${sub.id}/flow`, { token: key })).body.data;
    await eventually(async () => (await flowOf(b)).circuit === 'open', 'the circuit open');
    // At most the attempts in flight when it opened went past the 10th; the rest wait, held.
    await new Promise((r) => setTimeout(r, 1_000));
    const sent = endpoint.requests.length;
    // Each instance sends one attempt of the subscription at a time: at most the other's was in flight past the 10th.
    assert.ok(sent >= 10 && sent <= 11, `sent ${sent}`);
    assert.equal(await held(a), 14 - sent);
    const mails = (await op.messages(accountId)).filter((m: any) => m.kind === 'webhook_circuit_open');
    assert.equal(mails.length, 1);
    // The receiver is back and the probe falls due ("time passes" in the database): one worker sends it, the circuit
    // closes, and the held deliveries drain; each event once.
    endpoint.script([], { status: 200 });
    const client = new pg.Client({ connectionString: data.env.DATABASE_URL });
    await client.connect();
    try {
      await client.query(`UPDATE webhook_flows SET next_probe_at = now() - interval '1 second' WHERE webhook_id = $1`, [sub.id]);
    } finally {
      await client.end();
    }
    await Promise.all([runDeliveryJob(a.url), runDeliveryJob(b.url)]);
    const received = await endpoint.waitFor(14, 30_000);
    await eventually(async () => (await flowOf(a)).circuit === 'closed', 'the circuit closed');
    await new Promise((r) => setTimeout(r, 1_000));
    assert.equal(endpoint.requests.length, 14, 'one probe, then each held event once');
    assert.equal(new Set(received.map(eventIdOf)).size, 14);
    assert.equal(await held(b), 0);
    assert.equal((await op.messages(accountId)).filter((m: any) => m.kind === 'webhook_circuit_open').length, 1);
  },
);

/** When each attempt of the subscription began, on whichever instance (webhook_attempts.started_at), oldest first. */
async function attemptStarts(subscriptionId: string): Promise<Array<{ receivedAt: number }>> {
  const client = new pg.Client({ connectionString: data.env.DATABASE_URL });
  await client.connect();
  try {
    const { rows } = await client.query('SELECT started_at FROM webhook_attempts WHERE webhook_id = $1 ORDER BY started_at', [subscriptionId]);
    return rows.map((r) => ({ receivedAt: new Date(r.started_at).getTime() }));
  } finally {
    await client.end();
  }
}
