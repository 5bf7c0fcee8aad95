// Two service processes on one PostgreSQL share webhook delivery (issue 16):
// both send, no delivery attempt is sent by both, and a SIGKILL of one in the
// middle of a burst loses nothing: the other takes over the first attempts
// the dead one never made once their 60 s grace is over (woken by the dead
// one's NOTIFY, not by polling), and the attempts it had in flight when their
// lease runs out (here: the delivery job run with a `now` past it).
// PGlite is one process's database: these tests need DATABASE_URL.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { http, operator, ADMIN_TOKEN } from './helpers/harness.ts';
import { startHttpsReceiver, type HttpsReceiver, type ReceiverEndpoint, type ReceivedRequest } from './helpers/https-receiver.ts';
import {
  isolatedDatabase,
  createWebhook,
  deliveriesOf,
  eventually,
  runDeliveryJob,
  assertSignedDelivery,
  type IsolatedDatabase,
} from './helpers/webhooks.ts';
import { freePort, killHard, startServiceChild, stopGracefully, type ServiceChild } from './helpers/service-child.ts';

const POSTGRES = Boolean(process.env.DATABASE_URL);
const skip = POSTGRES ? false : 'two service processes need PostgreSQL (PGlite belongs to one process)';

let receiver: HttpsReceiver;
let data: IsolatedDatabase;
let a: ServiceChild | null = null;
let b: ServiceChild | null = null;

before(async () => {
  if (!POSTGRES) return;
  receiver = await startHttpsReceiver();
  data = await isolatedDatabase();
  // Both run the worker (WORKERS=1), as a production deployment of two instances would.
  const env = { ...data.env, WORKERS: '1', RATE_LIMIT_REST_PER_MINUTE: '100000', DEPLOY_SHA: 'instances00' };
  [a, b] = await Promise.all([startServiceChild(await freePort(), env, receiver.caFile), startServiceChild(await freePort(), env, receiver.caFile)]);
});
after(async () => {
  if (a) await killHard(a);
  if (b) await stopGracefully(b);
  await receiver?.close();
  await data?.drop();
});

/** The sum of a metric's samples (every label set matching `labels`) in this instance's /metrics. */
async function metricOf(child: ServiceChild, name: string, labels = '[^}]*'): Promise<number> {
  const res = await http(child.url, 'GET', '/metrics', { token: ADMIN_TOKEN });
  assert.equal(res.status, 200);
  return [...res.text.matchAll(new RegExp(`^${name}\\{${labels}\\} (\\d+)`, 'gm'))].reduce((sum, m) => sum + Number(m[1]), 0);
}

/** This instance's count of delivered attempts. */
const deliveredBy = (child: ServiceChild) => metricOf(child, 'merx_webhook_deliveries_total', 'outcome="delivered"');
/** Attempts this instance has sent and not yet recorded, over every origin. */
const inFlightIn = (child: ServiceChild) => metricOf(child, 'merx_webhook_in_flight');

/** PATCHes `count` order notes, `inFlight` at a time, each to the instance `via(i)` picks. */
async function burst(key: string, orders: string[], count: number, via: (i: number) => ServiceChild, tag: string) {
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < count; i = next++) {
      const res = await http(via(i).url, 'PATCH', `/api/v1/orders/${orders[i % orders.length]}`, {
        token: key,
        body: { admin_notes: `${tag} ${i}` },
      });
      assert.equal(res.status, 200, res.text);
    }
  };
  await Promise.all(Array.from({ length: 6 }, worker));
}

const eventIds = (requests: ReceivedRequest[]) => new Set(requests.map((r) => r.headers['x-merx-event-id']));

async function tenantWithSubscriptions(endpoints: ReceiverEndpoint[]) {
  const op = operator(a!.url);
  const account = await op.createAccount();
  const key = await op.issueKey(account.id);
  const subs = [];
  for (const endpoint of endpoints) subs.push(await createWebhook(a!.url, key, { url: endpoint.url, events: ['order.updated'] }));
  const orders: string[] = [];
  for (let i = 0; i < 6; i++) orders.push((await op.checkout(account.id)).id);
  return { key, subs, orders };
}

test('two instances on one PostgreSQL both send, and no attempt is sent by both', { skip }, async () => {
  const endpoints = [1, 2, 3].map((i) => receiver.endpoint(`pair-${i}`));
  const { key, subs, orders } = await tenantWithSubscriptions(endpoints);
  const N = 60;
  const before = [await deliveredBy(a!), await deliveredBy(b!)];
  await burst(key, orders, N, (i) => (i % 2 ? a! : b!), 'pair');

  for (const [i, endpoint] of endpoints.entries()) {
    await endpoint.waitFor(N, 60_000);
    assert.equal(eventIds(endpoint.requests).size, N, `subscriber ${i + 1} got every event`);
    assert.equal(endpoint.requests.length, N, `subscriber ${i + 1} got each event exactly once`);
    for (const r of endpoint.requests) assertSignedDelivery(r, subs[i].secret, 'order.updated');
  }
  const attemptIds = endpoints.flatMap((e) => e.requests.map((r) => r.headers['x-merx-delivery']));
  assert.equal(new Set(attemptIds).size, attemptIds.length, 'every attempt id arrived once');
  for (const [i, sub] of subs.entries()) {
    const list = await eventually(
      async () => {
        const rows = await deliveriesOf(a!.url, key, sub.data.id, 100);
        return rows.every((d) => d.status === 'delivered') && rows;
      },
      `subscriber ${i + 1} recorded as delivered`,
    );
    assert.equal(list.length, N);
    assert.ok(
      list.every((d) => d.attempt === 1),
      'one attempt each',
    );
  }
  // Each instance sent the first attempts of the events it committed: both took part, together exactly once each.
  const sent = [(await deliveredBy(a!)) - before[0], (await deliveredBy(b!)) - before[1]];
  assert.ok(sent[0] > 0 && sent[1] > 0, `both instances delivered (${sent.join(' + ')})`);
  assert.equal(sent[0] + sent[1], 3 * N);
});

test('SIGKILL of one instance in the middle of a burst loses nothing: the other finishes its work', { skip }, async () => {
  const endpoints = [1, 2, 3].map((i) => receiver.endpoint(`kill-${i}`));
  // Answers take a while, so that at the kill some attempts are in flight and more wait in their lanes, never claimed.
  for (const e of endpoints) e.script([], { status: 200, delayMs: 2_000 });
  const { key, subs, orders } = await tenantWithSubscriptions(endpoints);
  const M = 60;
  await burst(key, orders, M, () => a!, 'kill');
  await killHard(a!);
  a = null;
  for (const e of endpoints) e.script([], { status: 200 });

  const atKill = await Promise.all(subs.map((s) => deliveriesOf(b!.url, key, s.data.id, 100)));
  assert.ok(
    atKill.every((list) => list.length === M),
    'every committed event has its deliveries',
  );
  const unfinished = atKill.flat().filter((d) => d.status !== 'delivered').length;
  assert.ok(unfinished > 0, 'the kill came in the middle of the burst');

  // First attempts the dead instance never made (its rows say attempt 1) and those it was sending: the survivor's worker takes
  // them over once their grace is over, by itself. The job below then runs with a clock past every lease, so it would
  // take an attempt the survivor still had in flight: wait until nothing is due, nothing is in flight, and the rows
  // stay the same for a second.
  const deliveries = async () => (await Promise.all(subs.map((s) => deliveriesOf(b!.url, key, s.data.id, 100)))).flat();
  await eventually(
    async () => {
      const rows = await deliveries();
      const settled = rows.every((d) => d.attempt >= 1 && (d.status !== 'pending' || Date.parse(d.next_attempt_at) > Date.now()));
      if (!settled || (await inFlightIn(b!)) > 0) return false;
      await new Promise((r) => setTimeout(r, 1_000));
      return (await inFlightIn(b!)) === 0 && JSON.stringify(await deliveries()) === JSON.stringify(rows);
    },
    'the survivor took over every first attempt and finished',
    120_000,
  );
  // Attempts that were in flight in the dead instance come back when their lease ends (the job, run past it).
  await runDeliveryJob(b!.url, new Date(Date.now() + 180_000));

  for (const [i, sub] of subs.entries()) {
    const list = await eventually(
      async () => {
        const rows = await deliveriesOf(b!.url, key, sub.data.id, 100);
        return rows.every((d) => d.status === 'delivered') && rows;
      },
      `subscriber ${i + 1}: everything delivered`,
      30_000,
    );
    assert.equal(list.length, M);
    assert.ok(
      list.every((d) => d.attempt <= 2),
      'at most the dead attempt and one more',
    );
    assert.equal(eventIds(endpoints[i].requests).size, M, `subscriber ${i + 1} got every event at least once`);
    for (const r of endpoints[i].requests) assertSignedDelivery(r, sub.secret, 'order.updated');
  }
  const attemptIds = endpoints.flatMap((e) => e.requests.map((r) => r.headers['x-merx-delivery']));
  assert.equal(new Set(attemptIds).size, attemptIds.length, 'no attempt was sent twice (a resend after the crash is a new attempt)');
});
