// merx-client's createShipmentBatch() and waitForBatch() (EXTENSIONS 8)
// against a running service: the typed client as built into
// packages/client/dist (test/client-package.test.ts installs the packed package).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { startTestService, type TestService } from './helpers/harness.ts';
import { shipTenant } from './helpers/shipments.ts';
import { ordersFor } from './helpers/batches.ts';
import { createMerxClient, createShipmentBatch, waitForBatch, MerxError } from '../packages/client/dist/index.js';

let svc: TestService;
before(async () => {
  svc = await startTestService();
});
after(async () => {
  await svc.close();
});

test('createShipmentBatch() answers the running batch; waitForBatch() reports progress and answers it finished', async () => {
  const t = await shipTenant(svc);
  const merx = createMerxClient({ baseUrl: svc.url, apiKey: t.key });
  const orders = await ordersFor(svc, t.accountId, 'courier_a', 3);
  const items = [...orders.map((order_id) => ({ order_id })), { order_id: crypto.randomUUID() }];
  const key = `day-${crypto.randomUUID()}`;
  const batch = await createShipmentBatch(merx, items, { idempotencyKey: key });
  assert.equal(batch.total, 4);
  const again = await createShipmentBatch(merx, items, { idempotencyKey: key });
  assert.equal(again.id, batch.id, 'the same key answers the same batch');
  const seen: number[] = [];
  const done = await waitForBatch(merx, batch.id, { intervalMs: 20, onProgress: (b) => seen.push(b.pending) });
  assert.deepEqual([done.state, done.succeeded, done.failed, done.pending], ['done', 3, 1, 0]);
  assert.ok(done.finished_at);
  for (const pending of seen) assert.ok(pending > 0, 'progress is reported only while items are pending');
});

test('a refused batch and an unknown batch are thrown as MerxError with the status and the error body', async () => {
  const t = await shipTenant(svc);
  const merx = createMerxClient({ baseUrl: svc.url, apiKey: t.key });
  const id = crypto.randomUUID();
  await assert.rejects(createShipmentBatch(merx, [{ order_id: id }, { order_id: id }]), (err: unknown) => {
    assert.ok(err instanceof MerxError);
    assert.equal(err.status, 400);
    assert.equal((err.body as any).error.details.detail, 'items[1].order_id repeats items[0]');
    return true;
  });
  await assert.rejects(waitForBatch(merx, crypto.randomUUID(), { intervalMs: 10 }), (err: unknown) => err instanceof MerxError && err.status === 404);
});

test("docs/shipping-a-day.md's TypeScript sample runs as written: ships, saves the labels, lists and retries the failed", async () => {
  const root = path.join(import.meta.dirname, '..');
  const guide = fs.readFileSync(path.join(root, 'docs/shipping-a-day.md'), 'utf8');
  const samples = [...guide.matchAll(/^```ts\n([\s\S]*?)^```/gm)].map((m) => m[1]);
  assert.equal(samples.length, 1, 'one TypeScript sample');
  const t = await shipTenant(svc);
  await ordersFor(svc, t.accountId, 'courier_b', 3);
  await ordersFor(svc, t.accountId, null, 1); // no courier chosen: fails, and fails again when retried
  // Inside the repository, where `merx-client` resolves to packages/client (the npm workspace), as in a reader's project.
  const dir = fs.mkdtempSync(path.join(root, '.sample-'));
  try {
    fs.writeFileSync(path.join(dir, 'ship.ts'), samples[0]);
    // Not spawnSync: the service answering the sample runs in this very process.
    const ran = await promisify(execFile)(process.execPath, ['ship.ts'], {
      cwd: dir,
      env: { ...process.env, MERX_URL: svc.url, MERX_KEY: t.key },
      encoding: 'utf8',
      timeout: 60_000,
    });
    assert.match(ran.stdout, /^3 shipped, 1 failed$/m);
    assert.match(ran.stdout, /^item \d: courier is required/m);
    assert.match(ran.stdout, /^retrying in batch [0-9a-f-]{36}$/m);
    const pdf = fs.readFileSync(path.join(dir, 'labels.pdf'));
    assert.equal(pdf.subarray(0, 5).toString('latin1'), '%PDF-');
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
