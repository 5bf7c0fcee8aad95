// npm run screenshots: the console's main screens, as the browser test walks
// them, into docs/screenshots/ (the README and docs/operator-console.md show
// them): the 1440 px walk, then the same account at 390 and 900 px and the
// debug sink's raw body. Needs /usr/bin/chromium.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { startTestService, http, ADMIN_TOKEN } from '../test/helpers/harness.ts';
import { chromiumMissing, launchChromium } from '../test/helpers/browser.ts';
import { runConsoleFlow } from '../test/browser/console-flow.ts';
import { runApprovalFlow } from '../test/browser/approval-flow.ts';
import { runConsentFlow } from '../test/browser/consent-flow.ts';
import { runBatchFlow } from '../test/browser/batch-flow.ts';
import { runFirstDayScreens } from '../test/browser/first-day-screens.ts';
import { startHttpsReceiver } from '../test/helpers/https-receiver.ts';
import { checkWidth, readSink, type FitOptions } from '../test/browser/console-fit.ts';
import { webhookOpsScreens } from './webhook-ops-screens.ts';
import { walkDocs } from '../test/browser/docs-walk.ts';
import { walkRoughEdges } from '../test/browser/rough-edges.ts';
import { startSlowCourier } from '../test/helpers/slow-courier.ts';

const missing = chromiumMissing();
if (missing) throw new Error(missing);
const dir = path.join(import.meta.dirname, '../docs/screenshots');
fs.mkdirSync(dir, { recursive: true });
// The pictures show the addresses a newcomer's npm start prints.
// An endpoint that answers 404, for the delivery the walk makes fail.
const receiver = await startHttpsReceiver();
process.env.NODE_EXTRA_CA_CERTS = receiver.caFile;
const failing = receiver.endpoint('console-404');
failing.script([], { status: 404, body: 'no such hook' });
const svc = await startTestService({ PORT: process.env.PORT ?? '31480', PUBLIC_BASE_URL: 'http://localhost:3000', WEBHOOK_ALLOW_HOSTS: '127.0.0.1' });
const browser = await launchChromium();
try {
  const baseUrl = svc.url.replace('127.0.0.1', 'localhost');
  const result = await runConsoleFlow({ browser, baseUrl, adminToken: ADMIN_TOKEN, shotsDir: dir, failingUrl: failing.url });
  fs.rmSync(path.join(dir, 'failure.png'), { force: true });
  const orders = await http(svc.url, 'GET', '/api/v1/orders?limit=1', { token: result.apiKey });
  const fit: FitOptions = {
    browser,
    baseUrl,
    adminToken: ADMIN_TOKEN,
    accountId: result.accountId,
    webhookId: result.webhookId,
    orderId: orders.body.data[0].id,
    shotsDir: dir,
  };
  const narrow = [
    ...(await checkWidth(fit, 390)).screenshots,
    ...(await checkWidth(fit, 900)).screenshots,
    ...(await readSink(fit)).screenshots,
    ...(await webhookOpsScreens({ svc, browser, baseUrl, endpoint: receiver.endpoint('console-ops'), shotsDir: dir })),
  ];
  // EXTENSIONS 7: an agent's write through the approvals inbox, and the request log.
  narrow.push(...(await runApprovalFlow({ browser, baseUrl, adminToken: ADMIN_TOKEN, shotsDir: dir })).screenshots);
  // Issue 41: the docs site, guides and reference, at 1440 and 390 px; the console's rough edges, courier_a answering 3 s late.
  narrow.push(...(await walkDocs({ browser, baseUrl, shotsDir: dir })));
  const slow = await startSlowCourier(3_000);
  const slowSvc = await startTestService({ PUBLIC_BASE_URL: 'http://localhost:3000', COURIER_A_URL: `${slow.url}/courier_a` });
  try {
    narrow.push(
      ...(await walkRoughEdges({ browser, baseUrl: slowSvc.url.replace('127.0.0.1', 'localhost'), adminToken: ADMIN_TOKEN, shotsDir: dir }))
        .screenshots,
    );
  } finally {
    await slowSvc.close();
    await slow.close();
  }
  // EXTENSIONS 10: the OAuth consent page and Connected apps, on a service whose PUBLIC_BASE_URL is its own address (the resource is checked).
  const consentPort = Number(process.env.PORT ?? '31480') + 1;
  const consentSvc = await startTestService({ PORT: String(consentPort), PUBLIC_BASE_URL: `http://127.0.0.1:${consentPort}` });
  try {
    for (const width of [1440, 390])
      narrow.push(...(await runConsentFlow({ browser, baseUrl: consentSvc.url, adminToken: ADMIN_TOKEN, width, shotsDir: dir })).screenshots);
  } finally {
    await consentSvc.close();
  }
  // EXTENSIONS 8: orders chosen, their waybills in one batch, the batch page, the failed retried.
  narrow.push(...(await runBatchFlow({ browser, baseUrl, adminToken: ADMIN_TOKEN, shotsDir: dir })).screenshots);
  // Issue 41: the request log's writes and errors filters, and key expiry.
  narrow.push(...(await runFirstDayScreens({ browser, baseUrl, adminToken: ADMIN_TOKEN, shotsDir: dir })).screenshots);
  for (const file of [...result.screenshots, ...narrow]) {
    // Smaller files for the repository, where Debian's pngquant is installed (apt-get install pngquant).
    if (fs.existsSync('/usr/bin/pngquant'))
      execFileSync('/usr/bin/pngquant', ['--force', '--skip-if-larger', '--quality=70-90', '--ext', '.png', file]);
    process.stdout.write(`${path.relative(process.cwd(), file)} (${Math.round(fs.statSync(file).size / 1024)} KB)\n`);
  }
} finally {
  await browser.close();
  await svc.close();
  await receiver.close();
}
