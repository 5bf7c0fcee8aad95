// EXTENSIONS 10: the consent page walked in Chromium at 1440 and 390 px
// (test/browser/consent-flow.ts), and the console's Connected apps with Revoke.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { ADMIN_TOKEN, startTestService, type TestService } from './helpers/harness.ts';
import { freePort } from './helpers/service-child.ts';
import { chromiumMissing, launchChromium } from './helpers/browser.ts';
import { runConsentFlow } from './browser/consent-flow.ts';

const missing = chromiumMissing();
let svc: TestService;
let browser: Browser;
const shotsDir = fs.mkdtempSync(path.join(os.tmpdir(), 'merx-consent-'));

before(async () => {
  if (missing) return;
  const port = await freePort();
  svc = await startTestService({ PORT: String(port), PUBLIC_BASE_URL: `http://127.0.0.1:${port}` });
  browser = await launchChromium();
});
after(async () => {
  await browser?.close();
  await svc?.close();
  fs.rmSync(shotsDir, { recursive: true, force: true });
});

for (const width of [1440, 390]) {
  test(
    `the consent page at ${width} px: who asks, scopes, approval; a wrong key; approve; Connected apps and Revoke`,
    { skip: missing ?? false },
    async () => {
      const walked = await runConsentFlow({ browser, baseUrl: svc.url, adminToken: ADMIN_TOKEN, width, shotsDir });
      for (const file of walked.screenshots) assert.ok(fs.statSync(file).size > 5_000, `${path.basename(file)} was taken`);
    },
  );
}
