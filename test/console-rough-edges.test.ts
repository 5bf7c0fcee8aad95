// Issue 41, item 8: the console's rough edges, in Chromium at 1440 and 390 px
// (test/browser/rough-edges.ts). courier_a is a real HTTP courier here (the
// simulator run standalone) behind a proxy that answers 3 s late, so the
// console's progress for a slow courier call is seen as a merchant sees it.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { startTestService, ADMIN_TOKEN, type TestService } from './helpers/harness.ts';
import { chromiumMissing, launchChromium } from './helpers/browser.ts';
import { startSlowCourier, type SlowCourier } from './helpers/slow-courier.ts';
import { walkRoughEdges } from './browser/rough-edges.ts';
import { CONSOLE_DIST } from '../src/operator/console.ts';

const missing =
  chromiumMissing() ?? (fs.existsSync(path.join(CONSOLE_DIST, 'index.html')) ? null : 'console/dist is not built: npm run build:console');
const skip = missing && !process.env.CI ? missing : false;

let courier: SlowCourier;
let svc: TestService;
let browser: Browser;
let shots: string;
before(async () => {
  if (skip) return;
  courier = await startSlowCourier(3_000);
  svc = await startTestService({ COURIER_A_URL: `${courier.url}/courier_a` });
  browser = await launchChromium();
  shots = fs.mkdtempSync(path.join(os.tmpdir(), 'merx-rough-edges-'));
});
after(async () => {
  await browser?.close();
  await svc?.close();
  await courier?.close();
  if (shots && !process.env.KEEP_SHOTS) fs.rmSync(shots, { recursive: true, force: true });
});

test(
  'the console says answers in words, shows a slow courier call, fits its keys and placeholders, credits the merchant, and says an unknown account once',
  { skip },
  async () => {
    const { screenshots } = await walkRoughEdges({ browser, baseUrl: svc.url, adminToken: ADMIN_TOKEN, shotsDir: shots });
    assert.ok(courier.calls() > 0, 'the waybill went to the slow courier');
    for (const file of screenshots) assert.ok(fs.statSync(file).size > 10_000, `${path.basename(file)} was taken`);
  },
);
