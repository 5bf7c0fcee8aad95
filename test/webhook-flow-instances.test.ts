// EXTENSIONS 9 across processes: a pause holds on every instance (the rule is
// in the database, asked by each instance's claims), a resume on one instance
// wakes the other's worker, and held deliveries outlive a restart. The service
// runs as child processes (node src/main.ts) with their workers (WORKERS=1).
// Two instances need PostgreSQL; the restart runs on both databases (PGlite
// in a temp DATA_DIR).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { http, operator } from './helpers/harness.ts';
import { startHttpsReceiver, type HttpsReceiver, type ReceiverEndpoint } from './helpers/https-receiver.ts';
import { isolatedDatabase, createWebhook, deliveriesOf, eventually, runDeliveryJob, touchOrder, type IsolatedDatabase } from './helpers/webhooks.ts';
import { freePort, startServiceChild, stopGracefully, type ServiceChild } from './helpers/service-child.ts';

const POSTGRES = Boolean(process.env.DATABASE_URL);

let receiver: HttpsReceiver;
let data: IsolatedDatabase;
const children: ServiceChild[] = [];

const start = async (port?: number) => {
  const child = await startServiceChild(port ?? (await freePort()), { ...data.env, WORKERS: '1', RATE_LIMIT_REST_PER_MINUTE: '100000', DEPLOY_SHA: 'flowtest000' }, receiver.caFile);
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
  return { key, sub, order, patchFlow, held };
}

const eventIdOf = (r: { body: string }) => JSON.parse(r.body).id as string;

/**
 * Resumed: every held event arrives once, each delivered on attempt 1, none
 * dead; oldest first when one worker sends them (two workers each keep the
 * order of what they claimed, not of each other's).
 */
async function assertDrained(via: ServiceChild, key: string, webhookId: string, endpoint: ReceiverEndpoint, count: number, ordered = true) {
  const received = await endpoint.waitFor(count);
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
  assert.deepEqual(pending.map((d: any) => [d.status, d.attempt]), Array(5).fill(['pending', 0]));
  assert.equal(endpoint.requests.length, 0);

  await patchFlow(svc, { paused: false });
  await assertDrained(svc, key, sub.id, endpoint, 5);
});

test('two instances: a pause made on one holds the other; a resume on the other wakes both', { skip: POSTGRES ? false : 'two service processes need PostgreSQL' }, async () => {
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
});
