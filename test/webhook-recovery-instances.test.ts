// EXTENSIONS 6: a running recovery survives a restart of the service (both
// databases: PGlite on disk, PostgreSQL) and is shared safely by two
// instances on one PostgreSQL: every delivery of the window is sent once,
// whichever instance sends it and whatever stops in between.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { http, freshTenant, ADMIN_TOKEN } from './helpers/harness.ts';
import { startHttpsReceiver, type HttpsReceiver, type ReceiverEndpoint } from './helpers/https-receiver.ts';
import { isolatedDatabase, createWebhook, touchOrder, eventually, type IsolatedDatabase } from './helpers/webhooks.ts';
import { freePort, killHard, startServiceChild, stopGracefully, type ServiceChild } from './helpers/service-child.ts';

const POSTGRES = Boolean(process.env.DATABASE_URL);
const ENV = { WORKERS: '1', RATE_LIMIT_REST_PER_MINUTE: '100000' };

const children: ServiceChild[] = [];
const databases: IsolatedDatabase[] = [];
let receiver: HttpsReceiver | null = null;
after(async () => {
  for (const child of children) await killHard(child);
  await receiver?.close();
  for (const d of databases) await d.drop();
});

async function child(env: Record<string, string>): Promise<ServiceChild> {
  receiver ??= await startHttpsReceiver();
  const started = await startServiceChild(await freePort(), { ...env, ...ENV }, receiver.caFile);
  children.push(started);
  return started;
}

async function listAll(base: string, key: string, webhookId: string) {
  const res = await http(base, 'GET', `/api/v1/webhooks/${webhookId}/deliveries?limit=200`, { token: key });
  assert.equal(res.status, 200, res.text);
  return res.body.data as any[];
}

/** `count` dead deliveries, then a recovery of them started (the receiver now answers 200 after `delayMs`). */
async function startedRecovery(base: string, endpoint: ReceiverEndpoint, count: number, delayMs: number) {
  endpoint.script([], { status: 500 });
  const tenant = await freshTenant(base);
  const { data: sub } = await createWebhook(base, tenant.key, { url: endpoint.url, events: ['order.updated'] });
  const since = new Date(Date.now() - 1000).toISOString();
  const order = await tenant.op.checkout(tenant.accountId);
  for (let i = 0; i < count; i++) await touchOrder(base, tenant.key, order.id, `change ${i}`);
  await eventually(
    async () => (await listAll(base, tenant.key, sub.id)).filter((d) => d.last_status_code === 500).length === count,
    'failed first attempts',
    60_000,
  );
  // Dead (the delivery job run with a clock days ahead), so that no automatic retry delivers one meanwhile, however slow the machine.
  for (let i = 0; i < 5; i++) {
    const job = await http(base, 'POST', '/admin/api/jobs/webhook-deliveries/run', {
      token: ADMIN_TOKEN,
      body: { now: new Date(Date.now() + (i + 1) * 86_400_000).toISOString() },
    });
    assert.equal(job.status, 200, job.text);
  }
  await eventually(async () => (await listAll(base, tenant.key, sub.id)).every((d) => d.status === 'dead'), 'dead deliveries', 60_000);
  const eventIds = (await listAll(base, tenant.key, sub.id)).map((d) => d.event_id).sort();
  endpoint.script([], { status: 200, delayMs });
  const sentBefore = endpoint.requests.length;
  const res = await http(base, 'POST', `/api/v1/webhooks/${sub.id}/recover`, { token: tenant.key, body: { since } });
  assert.equal(res.status, 202, res.text);
  return { key: tenant.key, sub, eventIds, location: res.headers.get('location')!, sentBefore };
}

async function finished(base: string, key: string, location: string) {
  return eventually(
    async () => {
      const res = await http(base, 'GET', location, { token: key });
      return res.body.data?.state !== 'running' ? res.body.data : null;
    },
    'the recovery to end',
    120_000,
  );
}

test('a running recovery survives a restart of the service and sends each delivery once', async () => {
  const data = await isolatedDatabase({ onDisk: true });
  databases.push(data);
  const first = await child(data.env);
  const endpoint = receiver!.endpoint();
  const r = await startedRecovery(first.url, endpoint, 20, 150);
  await endpoint.waitFor(r.sentBefore + 4, 60_000);
  await stopGracefully(first);
  const sentWhileUp = endpoint.requests.length - r.sentBefore;
  assert.ok(sentWhileUp < 20, 'stopped in the middle');

  const second = await child(data.env);
  const done = await finished(second.url, r.key, r.location);
  assert.equal(done.state, 'done');
  assert.deepEqual([done.matched, done.attempted, done.delivered, done.failed], [20, 20, 20, 0]);
  const recovered = endpoint.requests
    .slice(r.sentBefore)
    .map((q) => String(q.headers['x-merx-event-id']))
    .sort();
  assert.deepEqual(recovered, r.eventIds, 'every delivery once, across the restart');
  assert.ok((await listAll(second.url, r.key, r.sub.id)).every((d) => d.status === 'delivered'));
  await stopGracefully(second);
});

test(
  'two instances on one PostgreSQL share a recovery: each delivery sent once, even when one of them stops in the middle',
  { skip: POSTGRES ? false : 'two service processes need PostgreSQL (PGlite belongs to one process)' },
  async () => {
    const data = await isolatedDatabase();
    databases.push(data);
    const [a, b] = await Promise.all([child(data.env), child(data.env)]);
    const endpoint = receiver!.endpoint();
    const r = await startedRecovery(a.url, endpoint, 30, 50);
    await endpoint.waitFor(r.sentBefore + 5, 60_000);
    // Whichever holds it: stopping A hands it back (if A had it), and B takes it on.
    await stopGracefully(a);
    const done = await finished(b.url, r.key, r.location);
    assert.equal(done.state, 'done');
    assert.deepEqual([done.attempted, done.delivered], [30, 30]);
    const recovered = endpoint.requests
      .slice(r.sentBefore)
      .map((q) => String(q.headers['x-merx-event-id']))
      .sort();
    assert.deepEqual(recovered, r.eventIds, 'every delivery once, by either instance');
    await stopGracefully(b);
  },
);
