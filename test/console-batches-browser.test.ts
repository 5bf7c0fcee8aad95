// EXTENSIONS 8, the console in a real browser (Chromium): choose orders,
// create their waybills in one batch, watch it, download the labels as one
// PDF, retry the failed (test/browser/batch-flow.ts walks it). Afterwards the
// API agrees with what the console showed.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { PDFDocument } from 'pdf-lib';
import { startTestService, http, operator, ADMIN_TOKEN, type TestService } from './helpers/harness.ts';
import { chromiumMissing, launchChromium } from './helpers/browser.ts';
import { runBatchFlow } from './browser/batch-flow.ts';
import { events } from './helpers/shipments.ts';
import { CONSOLE_DIST } from '../src/operator/console.ts';

const missing =
  chromiumMissing() ?? (fs.existsSync(path.join(CONSOLE_DIST, 'index.html')) ? null : 'console/dist is not built: npm run build:console');
const skip = missing && !process.env.CI ? missing : false;

let svc: TestService;
let browser: Browser;
let shots: string;

before(async () => {
  if (skip) return;
  svc = await startTestService();
  browser = await launchChromium();
  shots = fs.mkdtempSync(path.join(os.tmpdir(), 'merx-batch-shots-'));
});

after(async () => {
  await browser?.close();
  await svc?.close();
  if (shots) fs.rmSync(shots, { recursive: true, force: true });
});

test(
  'Orders page: choose orders, Create waybills; the batch page counts live, shows errors in words, downloads one PDF, retries the failed',
  { skip },
  async () => {
    const result = await runBatchFlow({ browser, baseUrl: svc.url, adminToken: ADMIN_TOKEN, shotsDir: shots });
    for (const file of result.screenshots) assert.ok(fs.statSync(file).size > 10_000, `${path.basename(file)} was taken`);
    const pdf = await PDFDocument.load(result.labels);
    assert.equal(pdf.getPageCount(), 6, 'one page per waybill made');
    // What the console did is real: the batches, their items and the orders' waybills.
    const key = await operator(svc.url).issueKey(result.accountId, { scopes: ['shipments:read', 'orders:read'] });
    const first = await http(svc.url, 'GET', `/api/v1/shipment-batches/${result.batchId}`, { token: key });
    assert.deepEqual([first.body.data.state, first.body.data.succeeded, first.body.data.failed], ['done', 6, 2]);
    const retry = await http(svc.url, 'GET', `/api/v1/shipment-batches/${result.retryId}/items`, { token: key });
    const failedBefore = await http(svc.url, 'GET', `/api/v1/shipment-batches/${result.batchId}/items?status=failed`, { token: key });
    assert.deepEqual(
      retry.body.data.map((i: any) => i.order_id),
      failedBefore.body.data.map((i: any) => i.order_id),
      'the retry is the failed items, in order',
    );
    const orders = await http(svc.url, 'GET', '/api/v1/orders?limit=50', { token: key });
    assert.equal(orders.body.data.filter((o: any) => o.shipment).length, 7);
    // The console acts as the merchant's admin: its batches' waybills are the merchant's, as a waybill it creates alone is.
    const shipped = await events(svc, result.accountId, 'shipment.created');
    assert.equal(shipped.length, 7);
    for (const event of shipped) assert.equal(event.data.source, 'merchant');
  },
);
