// EXTENSIONS 8: a batch is durable work. Interrupted by a restart of the
// service it finishes, and no item runs twice (each order one waybill, one
// shipment.created, one courier waybill per item across both lives); two
// instances on one database share one batch the same way. The couriers are
// the built-in simulator, which every instance on one PostgreSQL shares (its
// call log counts the waybills made); each instance's /metrics counts the
// courier calls it made itself.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { PDFDocument } from 'pdf-lib';
import os from 'node:os';
import path from 'node:path';
import { ADMIN_TOKEN, http, startTestService, operator, type TestService } from './helpers/harness.ts';
import { events, shipTenant } from './helpers/shipments.ts';
import { allItems, ordersFor, simCalls, simMode, startBatch, waitFinished, waitFor } from './helpers/batches.ts';

const POSTGRES = Boolean(process.env.DATABASE_URL);
const ENV = { COURIER_TIMEOUT_MS: '1000', BATCH_LEASE_SEC: '2' };

/** Waybills a service's simulator made (create calls answered 2xx). */
async function waybillsMade(svc: TestService): Promise<number> {
  let made = 0;
  for (const slug of ['courier_a', 'courier_b', 'courier_c'] as const) {
    made += (await simCalls(svc.url, slug)).filter((c) => c.operation === 'create' && c.status !== null && c.status < 300).length;
  }
  return made;
}

/** Courier calls this instance made that were answered 2xx (its /metrics): in a batch, the waybills it created. */
async function callsAnswered2xx(svc: TestService): Promise<number> {
  const text = (await http(svc.url, 'GET', '/metrics', { token: ADMIN_TOKEN })).text;
  return [...text.matchAll(/^merx_courier_request_duration_seconds_count\{[^}]*status="2\d\d"[^}]*\} (\d+)/gm)].reduce(
    (sum, m) => sum + Number(m[1]),
    0,
  );
}

/** Each order of the account has exactly one shipment, and each batch item names its order's. */
async function assertOneWaybillPerItem(svc: TestService, accountId: string, key: string, batchId: string, total: number) {
  const { rows } = await svc.service.db.query<{ order_id: string; n: number }>(
    'SELECT order_id, count(*)::int AS n FROM shipments WHERE account_id = $1 GROUP BY order_id',
    [accountId],
  );
  assert.equal(rows.length, total, 'every order got a shipment');
  for (const row of rows) assert.equal(row.n, 1, `order ${row.order_id}: one shipment`);
  const items = await allItems(svc.url, key, batchId);
  assert.equal(items.length, total);
  const byOrder = new Map(rows.map((r) => [r.order_id, r]));
  for (const item of items) {
    assert.equal(item.status, 'succeeded', JSON.stringify(item));
    assert.ok(byOrder.has(item.order_id));
  }
  assert.equal((await events(svc, accountId, 'shipment.created')).length, total, 'one shipment.created per item');
}

test('a batch interrupted by a restart of the service finishes, and no item runs twice', async () => {
  const dir = POSTGRES ? null : fs.mkdtempSync(path.join(os.tmpdir(), 'merx-batch-restart-'));
  const env = { ...ENV, ...(dir ? { DATA_DIR: dir } : {}) };
  let first: TestService | null = await startTestService(env);
  let second: TestService | null = null;
  try {
    const t = await shipTenant(first);
    const c = await ordersFor(first, t.accountId, 'courier_c', 6);
    const a = await ordersFor(first, t.accountId, 'courier_a', 6);
    // courier_a throttles on the first life: its items are in flight (between retries) when the service stops.
    await simMode(first.url, 'courier_a', 'throttle');
    const batch = await startBatch(
      first.url,
      t.key,
      [...c, ...a].map((order_id) => ({ order_id })),
    );
    await waitFor(first.url, t.key, batch.id, (b) => b.succeeded === 6);
    const { rows } = await first.service.db.query(`SELECT count(*)::int AS n FROM shipment_batch_items WHERE batch_id = $1 AND status = 'running'`, [
      batch.id,
    ]);
    assert.equal(rows[0].n, 4, 'four courier_a items in flight when the service stops');
    const madeBefore = await waybillsMade(first);
    assert.equal(madeBefore, 6);
    await first.close();
    first = null;

    second = await startTestService(env);
    // The courier is back to normal by the time the service is (the simulator's mode outlives a restart on PostgreSQL).
    await simMode(second.url, 'courier_a', 'ok');
    const done = await waitFinished(second.url, t.key, batch.id);
    assert.deepEqual([done.state, done.succeeded, done.failed], ['done', 12, 0]);
    assert.equal(await callsAnswered2xx(second), 6, 'the second life made only the waybills still missing');
    // On PostgreSQL the courier (the shared simulator) saw both lives; on PGlite the second life's simulator is new.
    assert.equal(await waybillsMade(second), POSTGRES ? 12 : 6, 'one waybill per item at the courier');
    await assertOneWaybillPerItem(second, t.accountId, t.key, batch.id, 12);
  } finally {
    await first?.close();
    await second?.close();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  }
});

test(
  'two instances on one database share one batch: both run items, none runs twice',
  { skip: POSTGRES ? false : 'two instances need PostgreSQL' },
  async () => {
    const one = await startTestService(ENV);
    const two = await startTestService(ENV);
    try {
      const t = await shipTenant(one);
      const orders = [
        ...(await ordersFor(one, t.accountId, 'courier_a', 20)),
        ...(await ordersFor(one, t.accountId, 'courier_b', 20)),
        ...(await ordersFor(one, t.accountId, 'courier_c', 20)),
      ];
      const madeBefore = await waybillsMade(two);
      const batch = await startBatch(
        one.url,
        t.key,
        orders.map((order_id) => ({ order_id })),
      );
      const done = await waitFinished(two.url, t.key, batch.id);
      assert.deepEqual([done.state, done.succeeded], ['done', 60]);
      assert.equal((await waybillsMade(two)) - madeBefore, 60, 'one waybill per item at the courier both instances call');
      const made = [await callsAnswered2xx(one), await callsAnswered2xx(two)];
      assert.equal(made[0] + made[1], 60, `one waybill per item over both instances (${made})`);
      assert.ok(made[0] > 0 && made[1] > 0, `both instances ran items (${made})`);
      await assertOneWaybillPerItem(one, t.accountId, t.key, batch.id, 60);
      // Each instance fetches every label, also of the waybills the other one made: one courier for both.
      for (const svc of [one, two]) {
        const labels = await fetch(`${svc.url}/api/v1/shipment-batches/${batch.id}/labels`, { headers: { authorization: `Bearer ${t.key}` } });
        assert.equal(labels.status, 200, await labels.clone().text());
        assert.equal((await PDFDocument.load(Buffer.from(await labels.arrayBuffer()))).getPageCount(), 60);
      }
      // A courier mode set through one instance holds for calls through the other.
      await simMode(one.url, 'courier_b', 'refuse', 1);
      const [refused] = await ordersFor(two, t.accountId, 'courier_b', 1);
      const answer = await http(two.url, 'POST', '/api/v1/shipments', { token: t.key, body: { order_id: refused } });
      assert.equal(answer.status, 502, answer.text);
      assert.equal(answer.body.error.code, 'courier_error');
    } finally {
      await one.close();
      await two.close();
    }
  },
);

test('an instance without workers (WORKERS=0) runs no batch on its own; the operator job shipment-batches runs its items now', async () => {
  const svc = await startTestService({ ...ENV, WORKERS: '0' });
  try {
    const t = await shipTenant(svc);
    const orders = await ordersFor(svc, t.accountId, 'courier_b', 3);
    const batch = await startBatch(
      svc.url,
      t.key,
      orders.map((order_id) => ({ order_id })),
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
    const waiting = await waitFor(svc.url, t.key, batch.id, () => true);
    assert.deepEqual([waiting.state, waiting.pending], ['running', 3], 'nobody runs it');
    const ran = await operator(svc.url).call('POST', '/jobs/shipment-batches/run', {});
    assert.deepEqual(ran, { data: { job: 'shipment-batches', processed: 3 } });
    const done = await waitFinished(svc.url, t.key, batch.id);
    assert.deepEqual([done.state, done.succeeded], ['done', 3]);
    assert.deepEqual(await operator(svc.url).call('POST', '/jobs/shipment-batches/run', {}), { data: { job: 'shipment-batches', processed: 0 } });
  } finally {
    await svc.close();
  }
});
