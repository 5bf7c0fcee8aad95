// Issue 41: the docs site in Chromium at 1440 and 390 px (test/browser/docs-walk.ts),
// served somewhere else than npm start's address. Outside CI a machine without
// Chromium skips this file with the reason.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { startTestService, type TestService } from './helpers/harness.ts';
import { chromiumMissing, launchChromium } from './helpers/browser.ts';
import { walkDocs } from './browser/docs-walk.ts';

const missing = chromiumMissing();
const skip = missing && !process.env.CI ? missing : false;

let svc: TestService;
let browser: Browser;
let shots: string;
before(async () => {
  if (skip) return;
  svc = await startTestService();
  browser = await launchChromium();
  shots = fs.mkdtempSync(path.join(os.tmpdir(), 'merx-docs-shots-'));
});
after(async () => {
  await browser?.close();
  await svc?.close();
  if (shots) fs.rmSync(shots, { recursive: true, force: true });
});

test('the docs read as one site: guides as pages, one reference page per API, one bar that fits, one search over all', { skip }, async () => {
  const screenshots = await walkDocs({ browser, baseUrl: svc.url, shotsDir: shots });
  for (const file of screenshots) assert.ok(fs.statSync(file).size > 10_000, `${path.basename(file)} was taken`);
});
