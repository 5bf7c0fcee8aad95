// EXTENSIONS 8 in the operator console (Chromium): the export button of the
// orders list downloads every order matching the list's current filters, as
// CSV or JSON Lines. docs/screenshots/orders-export.png was taken by it (SCREENSHOTS_DIR=docs/screenshots).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { startTestService, ADMIN_TOKEN, type TestService } from './helpers/harness.ts';
import { chromiumMissing, launchChromium } from './helpers/browser.ts';
import { checkoutWith, shipTenant } from './helpers/shipments.ts';
import { parseCsv } from './helpers/exports.ts';
import { CONSOLE_DIST } from '../src/operator/console.ts';

const missing =
  chromiumMissing() ?? (fs.existsSync(path.join(CONSOLE_DIST, 'index.html')) ? null : 'console/dist is not built: npm run build:console');
const skip = missing && !process.env.CI ? missing : false;
const WAIT = { timeout: 15_000 };

let svc: TestService;
let browser: Browser;
before(async () => {
  if (skip) return;
  svc = await startTestService();
  browser = await launchChromium();
});
after(async () => {
  await browser?.close();
  await svc?.close();
});

test("the orders list's Export downloads every order matching its filters, as CSV or JSON Lines", { skip }, async () => {
  const t = await shipTenant(svc, { scopes: ['orders:read'] });
  const orders = [];
  for (let i = 0; i < 3; i++) orders.push(await checkoutWith(svc, t.accountId, 'courier_a'));
  for (const order of orders.slice(0, 2)) await t.op.setStatus(order.id, 'confirmed');
  const context = await browser.newContext({ viewport: { width: 1440, height: 900 }, baseURL: svc.url, acceptDownloads: true });
  try {
    const page = await context.newPage();
    await page.goto('/admin');
    await page.getByLabel('Operator token').fill(ADMIN_TOKEN);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Accounts', exact: true }).waitFor(WAIT);
    await page.goto(`/admin/accounts/${t.accountId}/orders?status=confirmed`);
    await page.getByRole('button', { name: 'Export' }).waitFor(WAIT);
    await page.getByLabel('Export as').selectOption('csv');
    // SCREENSHOTS_DIR=docs/screenshots keeps the picture for the docs; otherwise it is taken and thrown away.
    const shot = path.join(process.env.SCREENSHOTS_DIR ?? os.tmpdir(), 'orders-export.png');
    await page.screenshot({ path: shot });
    assert.ok(fs.statSync(shot).size > 10_000, 'the screenshot was taken');
    const [csv] = await Promise.all([page.waitForEvent('download', WAIT), page.getByRole('button', { name: 'Export' }).click()]);
    assert.equal(csv.suggestedFilename(), 'orders.csv');
    const rows = parseCsv(fs.readFileSync(await csv.path(), 'utf8'));
    assert.equal(rows.length, 3, 'a header and the two confirmed orders');
    assert.deepEqual(
      rows
        .slice(1)
        .map((r) => r[rows[0].indexOf('id')])
        .sort(),
      orders
        .slice(0, 2)
        .map((o) => o.id)
        .sort(),
    );
    await page.getByLabel('Export as').selectOption('jsonl');
    const [jsonl] = await Promise.all([page.waitForEvent('download', WAIT), page.getByRole('button', { name: 'Export' }).click()]);
    assert.equal(jsonl.suggestedFilename(), 'orders.jsonl');
    const lines = fs
      .readFileSync(await jsonl.path(), 'utf8')
      .trimEnd()
      .split('\n');
    assert.deepEqual(
      lines.map((l) => JSON.parse(l).status),
      ['confirmed', 'confirmed'],
    );
  } finally {
    await context.close();
  }
});
