// EXTENSIONS 6 recoveries against a real HTTPS receiver, REST and MCP, both
// databases: dry run, Idempotency-Key, 202 + Location, progress, each
// delivery once and oldest first with a fresh signature, success marks
// delivered and clears dead_notified_at, a failure leaves the automatic
// schedule as it was, 10 failures in a row stop it, pacing, cancel, the 409s.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { http, freshTenant } from './helpers/harness.ts';
import { callTool, assertRefusal } from './helpers/mcp.ts';
import type { ReceiverEndpoint } from './helpers/https-receiver.ts';
import {
  startReceiverWorld,
  createWebhook,
  touchOrder,
  eventually,
  runDeliveryJob,
  assertSignedDelivery,
  getWebhook,
  type ReceiverWorld,
} from './helpers/webhooks.ts';

let world: ReceiverWorld;
before(async () => {
  // WORKERS=1: recoveries run where the worker runs.
  world = await startReceiverWorld({ WORKERS: '1' });
});
after(async () => {
  await world?.close();
});

const RECOVERY_FIELDS = [
  'attempted',
  'delivered',
  'failed',
  'finished_at',
  'id',
  'matched',
  'since',
  'started_at',
  'state',
  'statuses',
  'until',
  'webhook_id',
].sort();

async function listAll(key: string, webhookId: string) {
  const res = await http(world.svc.url, 'GET', `/api/v1/webhooks/${webhookId}/deliveries?limit=200`, { token: key });
  assert.equal(res.status, 200, res.text);
  return res.body.data as any[];
}

/** A tenant with a subscription at `endpoint` and `count` deliveries whose first attempt failed (pending); `dead` drives them to dead. */
async function failedDeliveries(endpoint: ReceiverEndpoint, count: number, options: { dead?: boolean } = {}) {
  endpoint.script([], { status: 500 });
  const tenant = await freshTenant(world.svc.url);
  const { data: sub, secret } = await createWebhook(world.svc.url, tenant.key, { url: endpoint.url, events: ['order.updated'] });
  const since = new Date(Date.now() - 1000).toISOString();
  const order = await tenant.op.checkout(tenant.accountId);
  for (let i = 0; i < count; i++) await touchOrder(world.svc.url, tenant.key, order.id, `change ${i}`);
  await eventually(
    async () => (await listAll(tenant.key, sub.id)).filter((d) => d.last_status_code === 500).length === count,
    'the failed first attempts',
    60_000,
  );
  if (options.dead) {
    for (let i = 0; i < 5; i++) await runDeliveryJob(world.svc.url, new Date(Date.now() + (i + 1) * 86_400_000));
    await eventually(async () => (await listAll(tenant.key, sub.id)).every((d) => d.status === 'dead'), 'dead deliveries', 60_000);
  }
  return { ...tenant, sub, secret, order, since };
}

async function recoveryWhen(key: string, location: string, ready: (r: any) => boolean, what: string) {
  return eventually(
    async () => {
      const res = await http(world.svc.url, 'GET', location, { token: key });
      assert.equal(res.status, 200, res.text);
      return ready(res.body.data) ? res.body.data : null;
    },
    what,
    60_000,
  );
}

async function recoveryAttempts(key: string, deliveries: any[]) {
  const all: any[] = [];
  for (const d of deliveries) {
    const res = await http(world.svc.url, 'GET', `/api/v1/webhook-deliveries/${d.id}/attempts`, { token: key });
    all.push(...res.body.data.filter((a: any) => a.trigger === 'recovery'));
  }
  return all;
}

test('recovery (REST): dry run, Idempotency-Key, 202 + Location, each dead delivery once oldest first with a fresh signature; delivered, dead_notified_at cleared', async () => {
  const endpoint = world.receiver.endpoint();
  const t = await failedDeliveries(endpoint, 4, { dead: true });
  assert.ok((await getWebhook(world.svc.url, t.key, t.sub.id)).dead_notified_at, 'the dead email was sent');
  const dead = (await listAll(t.key, t.sub.id)).reverse();
  const path = `/api/v1/webhooks/${t.sub.id}/recover`;

  const dry = await http(world.svc.url, 'POST', path, { token: t.key, body: { since: t.since }, headers: { 'X-Merx-Dry-Run': '1' } });
  assert.equal(dry.status, 200, dry.text);
  assert.deepEqual(dry.body, { dry_run: true, matched: 4 });
  const none = await http(world.svc.url, 'POST', path, {
    token: t.key,
    body: { since: t.since, statuses: ['pending'] },
    headers: { 'X-Merx-Dry-Run': '1' },
  });
  assert.equal(none.body.matched, 0);

  endpoint.script([], { status: 200, delayMs: 300 });
  const before = endpoint.requests.length;
  const key = `recover-${Date.now()}`;
  const started = await http(world.svc.url, 'POST', path, { token: t.key, body: { since: t.since }, headers: { 'Idempotency-Key': key } });
  assert.equal(started.status, 202, started.text);
  const recovery = started.body.data;
  assert.deepEqual(Object.keys(recovery).sort(), RECOVERY_FIELDS);
  assert.equal(started.headers.get('location'), `/api/v1/webhooks/${t.sub.id}/recoveries/${recovery.id}`);
  assert.equal(recovery.state, 'running');
  assert.equal(recovery.matched, 4);
  assert.deepEqual(recovery.statuses, ['failed', 'dead']);
  assert.equal(recovery.finished_at, null);
  assert.ok(recovery.started_at);
  // The same key replays the first answer; another start while it runs is a conflict.
  const replay = await http(world.svc.url, 'POST', path, { token: t.key, body: { since: t.since }, headers: { 'Idempotency-Key': key } });
  assert.equal(replay.status, 202);
  assert.equal(replay.body.data.id, recovery.id);
  assert.equal(replay.headers.get('location'), started.headers.get('location'));
  const second = await http(world.svc.url, 'POST', path, { token: t.key, body: { since: t.since } });
  assert.equal(second.status, 409);
  assert.equal(second.body.error.details.reason, 'recovery_running');

  const done = await recoveryWhen(t.key, started.headers.get('location')!, (r) => r.state !== 'running', 'the recovery to end');
  assert.equal(done.state, 'done');
  assert.deepEqual([done.matched, done.attempted, done.delivered, done.failed], [4, 4, 4, 0]);
  assert.ok(done.finished_at >= done.started_at);

  const sent = endpoint.requests.slice(before);
  assert.deepEqual(
    sent.map((r) => r.headers['x-merx-event-id']),
    dead.map((d) => d.event_id),
    'each once, oldest first, with its event id',
  );
  for (const r of sent) assertSignedDelivery(r, t.secret, 'order.updated');
  const after = await listAll(t.key, t.sub.id);
  assert.ok(
    after.every((d) => d.status === 'delivered' && d.attempt === 6),
    'delivered; the schedule untouched',
  );
  assert.equal((await getWebhook(world.svc.url, t.key, t.sub.id)).dead_notified_at, null);
  const log = await http(world.svc.url, 'GET', `/api/v1/webhook-deliveries/${dead[0].id}/attempts`, { token: t.key });
  assert.deepEqual(
    log.body.data.map((a: any) => a.trigger),
    ['automatic', 'automatic', 'automatic', 'automatic', 'automatic', 'automatic', 'recovery'],
  );
  assert.equal(log.body.data[6].number, 7);

  // Another account: 404 on its recovery.
  const other = await freshTenant(world.svc.url);
  assert.equal((await http(world.svc.url, 'GET', started.headers.get('location')!, { token: other.key })).status, 404);
  assertRefusal(await callTool(world.svc.url, other.key, 'get_recovery', { id: t.sub.id, recovery_id: recovery.id }), 'NOT_FOUND');
});

test('recovery: a failure leaves status, attempt and next_attempt_at as they were; 10 failures in a row end it stopped', async () => {
  const endpoint = world.receiver.endpoint();
  const t = await failedDeliveries(endpoint, 12);
  const beforeRows = (await listAll(t.key, t.sub.id)).map((d) => [d.id, d.status, d.attempt, d.next_attempt_at]);
  const started = await http(world.svc.url, 'POST', `/api/v1/webhooks/${t.sub.id}/recover`, {
    token: t.key,
    body: { since: t.since, statuses: ['pending'] },
  });
  assert.equal(started.status, 202, started.text);
  assert.equal(started.body.data.matched, 12);
  const ended = await recoveryWhen(t.key, started.headers.get('location')!, (r) => r.state !== 'running', 'the recovery to stop');
  assert.equal(ended.state, 'stopped');
  assert.deepEqual([ended.attempted, ended.delivered, ended.failed], [10, 0, 10]);
  assert.ok(ended.finished_at);
  const afterRows = (await listAll(t.key, t.sub.id)).map((d) => [d.id, d.status, d.attempt, d.next_attempt_at]);
  assert.deepEqual(afterRows, beforeRows, 'no schedule spent');
  const attempts = await recoveryAttempts(t.key, await listAll(t.key, t.sub.id));
  assert.equal(attempts.length, 10);
  assert.ok(
    attempts.every((a) => a.response_status === 500),
    'the attempt log says why',
  );
});

test('recovery (MCP): dry run, start, progress; never more than 10 starts within a second; cancelling a finished one answers it unchanged', async () => {
  const endpoint = world.receiver.endpoint();
  const t = await failedDeliveries(endpoint, 15);
  endpoint.script([], { status: 200 });
  const args = { id: t.sub.id, since: t.since, statuses: ['pending'] };
  const dry = await callTool(world.svc.url, t.key, 'recover_webhook_deliveries', { ...args, dry_run: true });
  assert.deepEqual(dry.structuredContent, { dry_run: true, matched: 15 });
  const started = await callTool(world.svc.url, t.key, 'recover_webhook_deliveries', args);
  assert.equal(started.isError, false);
  const id = started.structuredContent.data.id;
  const done = await eventually(
    async () => {
      const got = await callTool(world.svc.url, t.key, 'get_recovery', { id: t.sub.id, recovery_id: id });
      return got.structuredContent.data.state === 'done' ? got.structuredContent.data : null;
    },
    'the recovery to end',
    60_000,
  );
  assert.deepEqual([done.attempted, done.delivered, done.failed], [15, 15, 0]);
  const starts = (await recoveryAttempts(t.key, await listAll(t.key, t.sub.id))).map((a) => Date.parse(a.started_at)).sort((a, b) => a - b);
  assert.equal(starts.length, 15);
  for (let i = 0; i + 10 < starts.length; i++)
    assert.ok(starts[i + 10] - starts[i] >= 1000, `starts ${i}..${i + 10} within ${starts[i + 10] - starts[i]} ms`);
  const cancelled = await callTool(world.svc.url, t.key, 'cancel_recovery', { id: t.sub.id, recovery_id: id });
  assert.deepEqual(cancelled.structuredContent.data, done);
});

test('recovery: cancel stops a running one (the attempt in flight finishes); inactive subscription 409; a 410 stops it and deactivates; bad input 400', async () => {
  const endpoint = world.receiver.endpoint();
  const t = await failedDeliveries(endpoint, 8);
  endpoint.script([], { status: 200, delayMs: 400 });
  const started = await http(world.svc.url, 'POST', `/api/v1/webhooks/${t.sub.id}/recover`, {
    token: t.key,
    body: { since: t.since, statuses: ['pending'] },
  });
  const location = started.headers.get('location')!;
  await recoveryWhen(t.key, location, (r) => r.attempted >= 1, 'a first attempt');
  const cancel = await http(world.svc.url, 'POST', `${location}/cancel`, { token: t.key });
  assert.equal(cancel.status, 200, cancel.text);
  assert.equal(cancel.body.data.state, 'cancelled');
  assert.ok(cancel.body.data.finished_at);
  const atCancel = cancel.body.data.attempted;
  // The attempt in flight finishes and is counted; nothing further is taken.
  await recoveryWhen(t.key, location, (r) => r.delivered + r.failed === r.attempted, 'the attempt in flight to be counted');
  const later = (await http(world.svc.url, 'GET', location, { token: t.key })).body.data;
  assert.equal(later.state, 'cancelled');
  assert.equal(later.attempted, atCancel);
  const again = await http(world.svc.url, 'POST', `${location}/cancel`, { token: t.key });
  assert.deepEqual(again.body.data, later);

  // Bad input.
  const path = `/api/v1/webhooks/${t.sub.id}/recover`;
  for (const body of [
    {},
    { since: 'yesterday' },
    { since: t.since, statuses: [] },
    { since: t.since, statuses: ['delivered'] },
    { since: new Date().toISOString(), until: t.since },
    // Date-times the format admits that are no instant here: a leap second (a 500 the fuzzer found), year 0.
    { since: t.since, until: '2026-01-01T23:59:60Z' },
    { since: '0000-01-01T00:00:00Z' },
  ]) {
    const res = await http(world.svc.url, 'POST', path, { token: t.key, body });
    assert.equal(res.status, 400, `${JSON.stringify(body)} -> ${res.status}`);
  }

  // A 410 deactivates the subscription and stops the recovery.
  endpoint.script([], { status: 410 });
  const gone = await http(world.svc.url, 'POST', path, { token: t.key, body: { since: t.since, statuses: ['pending'] } });
  assert.equal(gone.status, 202, gone.text);
  const stopped = await recoveryWhen(t.key, gone.headers.get('location')!, (r) => r.state !== 'running', 'the 410 stop');
  assert.equal(stopped.state, 'stopped');
  assert.equal(stopped.attempted, 1);
  assert.equal((await getWebhook(world.svc.url, t.key, t.sub.id)).active, false);
  // Inactive: 409 on REST and MCP (dry run too).
  const inactive = await http(world.svc.url, 'POST', path, { token: t.key, body: { since: t.since } });
  assert.equal(inactive.status, 409);
  assertRefusal(await callTool(world.svc.url, t.key, 'recover_webhook_deliveries', { id: t.sub.id, since: t.since }), 'CONFLICT');
});
