// The operator console in a real browser (Debian's Chromium through
// playwright-core), end to end on this run's database: see
// test/browser/console-flow.ts for the walk. Afterwards the API agrees with
// what the console showed. Outside CI a machine without Chromium skips this
// file with the reason; in CI (.ci/run installs Chromium) a missing browser fails.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { startTestService, http, operator, ADMIN_TOKEN, type TestService } from './helpers/harness.ts';
import { chromiumMissing, launchChromium } from './helpers/browser.ts';
import { runConsoleFlow } from './browser/console-flow.ts';
import { runApprovalFlow } from './browser/approval-flow.ts';
import { runFirstDayScreens } from './browser/first-day-screens.ts';
import { checkWidth, readSink, useKeyboard, type FitOptions } from './browser/console-fit.ts';
import { walkWebhookOps } from './browser/console-webhook-ops.ts';
import { createWebhook, eventually, sinkCaptures, sinkSubscription, touchOrder } from './helpers/webhooks.ts';
import { startHttpsReceiver, type HttpsReceiver } from './helpers/https-receiver.ts';
// merx-client/webhooks, from its source (the package's dist/ is built by npm run build:client, not by npm ci).
import { verifyWebhook } from '../packages/client/src/webhooks.ts';
import { CONSOLE_DIST } from '../src/operator/console.ts';

const missing =
  chromiumMissing() ?? (fs.existsSync(path.join(CONSOLE_DIST, 'index.html')) ? null : 'console/dist is not built: npm run build:console');
const skip = missing && !process.env.CI ? missing : false;

let svc: TestService;
let browser: Browser;
let shots: string;
let receiver: HttpsReceiver;

before(async () => {
  if (skip) return;
  assert.equal(missing, null, missing ?? '');
  // An endpoint that answers 404, for the delivery the walk makes fail.
  receiver = await startHttpsReceiver();
  process.env.NODE_EXTRA_CA_CERTS = receiver.caFile;
  svc = await startTestService({ WEBHOOK_ALLOW_HOSTS: '127.0.0.1' });
  browser = await launchChromium();
  shots = fs.mkdtempSync(path.join(os.tmpdir(), 'merx-console-shots-'));
});

after(async () => {
  await browser?.close();
  await svc?.close();
  await receiver?.close();
  if (shots) fs.rmSync(shots, { recursive: true, force: true });
});

test(
  'the console, signed in with the operator token: key, sink subscription, test event, failed delivery retried, shipment moved by the courier',
  { skip },
  async () => {
    const failing = receiver.endpoint('console-404');
    failing.script([], { status: 404, body: 'no such hook' });
    const result = await runConsoleFlow({ browser, baseUrl: svc.url, adminToken: ADMIN_TOKEN, shotsDir: shots, failingUrl: failing.url });
    assert.deepEqual(result.foreignRequests, [], 'the console loads nothing from other origins (no CDN)');
    for (const file of result.screenshots) assert.ok(fs.statSync(file).size > 10_000, `${path.basename(file)} was taken`);

    // What the console did is real: the key works, the deliveries happened, the courier moved the shipment.
    const orders = await http(svc.url, 'GET', '/api/v1/orders?limit=1', { token: result.apiKey });
    assert.equal(orders.status, 200);
    // Issued "in 30 days" (issue 41): the operator API shows that expiry on the key.
    const keys = await http(svc.url, 'GET', `/admin/api/accounts/${result.accountId}/keys`, { token: ADMIN_TOKEN });
    const issued = keys.body.data.find((k: any) => k.prefix === result.apiKey.slice(0, 11));
    const days = (Date.parse(issued.expires_at) - Date.parse(issued.created_at)) / 86_400_000;
    assert.ok(days > 29.99 && days < 30.01, `expires 30 days after issue: ${issued.expires_at}`);
    const deliveries = await http(svc.url, 'GET', `/api/v1/webhooks/${result.webhookId}/deliveries`, { token: result.apiKey });
    const tests = deliveries.body.data.filter((d: any) => d.event === 'test');
    assert.deepEqual(
      tests.map((d: any) => [d.status, d.attempt, d.last_status_code]),
      [
        ['delivered', 2, 200],
        ['delivered', 1, 200],
      ],
      'the failed one was retried',
    );
    // The shipment's order.status_changed events reached the sink subscription too.
    assert.ok(deliveries.body.data.some((d: any) => d.event === 'order.status_changed' && d.status === 'delivered'));
    const shipment = await http(svc.url, 'GET', `/api/v1/shipments/${result.shipmentId}`, { token: result.apiKey });
    assert.equal(shipment.body.data.status, 'delivered');
    assert.deepEqual(
      shipment.body.data.status_events.map((e: any) => e.label),
      ['Waybill created', 'In transit', 'Delivered to recipient'],
    );
  },
);

test('issue 41: the request log folds polls away with "Writes only" and "Errors only"; the keys tab shows an expiry', { skip }, async () => {
  const result = await runFirstDayScreens({ browser, baseUrl: svc.url, adminToken: ADMIN_TOKEN, shotsDir: shots });
  for (const file of result.screenshots) assert.ok(fs.statSync(file).size > 10_000, `${path.basename(file)} was taken`);
});

test(
  "an agent's write: 202, the approvals inbox (count, the change in words, the diff, the order, the key by name, effects), approved with a reason, run once with Merx-Approval; a changed target warned; the request log",
  { skip },
  async () => {
    const result = await runApprovalFlow({ browser, baseUrl: svc.url, adminToken: ADMIN_TOKEN, shotsDir: shots });
    for (const file of result.screenshots) assert.ok(fs.statSync(file).size > 10_000, `${path.basename(file)} was taken`);
    const order = await http(svc.url, 'GET', `/api/v1/orders/${result.orderId}`, { token: result.agentKey });
    assert.equal(order.body.data.status, 'shipped');
    assert.equal(order.body.data.tracking_number, 'TRK-AGENT-1');
    const approval = await http(svc.url, 'GET', `/api/v1/approvals/${result.approvalId}`, { token: result.agentKey });
    assert.deepEqual(
      [approval.body.data.status, approval.body.data.reason, approval.body.data.result_status],
      ['executed', 'tracking number checked', 200],
    );
  },
);

test('/admin without the operator token shows the sign-in page, and a wrong token is refused there', { skip }, async () => {
  const context = await browser.newContext();
  const page = await context.newPage();
  try {
    await page.goto(`${svc.url}/admin/accounts`);
    await page.getByLabel('Operator token').fill('not-the-token');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page
      .getByRole('alert')
      .getByText(/unauthorized/)
      .waitFor({ timeout: 10_000 });
    assert.equal(await page.getByRole('heading', { name: 'Accounts', exact: true }).count(), 0);
  } finally {
    await context.close();
  }
});

// The docs in the browser: test/docs-browser.test.ts.

// An account with orders and stock, and a subscription on the debug sink that
// captured an order.created whose body holds non-ASCII text, for the tests below.
async function fitWorld() {
  const op = operator(svc.url);
  const account = await op.createAccount();
  await op.call('POST', `/accounts/${account.id}/seed`, { orders: 40, products: 4, seed: 7 });
  const key = await op.issueKey(account.id);
  const sink = await sinkSubscription(svc, key, ['order.created']);
  const order = await op.checkout(account.id, {
    customer: { name: 'Ана Петрова — «tést» ✓', email: 'ana@example.com', phone: '+359888000111' },
    notes: 'line one\nline two\t"quoted" \\ back',
  });
  const capture = await eventually(
    async () => (await sinkCaptures(svc.url, sink.id)).find((c: any) => c.headers['x-merx-event'] === 'order.created'),
    'the sink capture',
  );
  const options: FitOptions = {
    browser,
    baseUrl: svc.url,
    adminToken: ADMIN_TOKEN,
    accountId: account.id,
    webhookId: sink.id,
    orderId: order.id,
    shotsDir: shots,
  };
  return { options, capture, secret: sink.secret };
}

test('the debug sink shows and copies the raw body exactly as received, with its headers: it verifies as is', { skip }, async () => {
  const { options, capture, secret } = await fitWorld();
  const raw = await http(svc.url, 'GET', `/admin/api/webhooks/${options.webhookId}/sink`, { token: ADMIN_TOKEN });
  assert.equal(raw.body.data[0].body, capture.body);
  assert.notEqual(capture.body, JSON.stringify(JSON.parse(capture.body), null, 2), 'the delivery is compact JSON, so an indented copy differs');
  assert.equal(verifyWebhook(capture.body, capture.headers, secret).valid, true, 'what the sink stored verifies (merx-client/webhooks)');

  const seen = await readSink(options);
  assert.equal(seen.shownBody, capture.body, 'the page shows the raw body byte for byte');
  assert.equal(seen.copiedBody, capture.body, 'the copy button copies exactly those bytes');
  assert.deepEqual(verifyWebhook(seen.copiedBody, capture.headers, secret), { valid: true, scheme: 'merx', reason: 'ok' });
  assert.equal(
    verifyWebhook(JSON.stringify(JSON.parse(seen.copiedBody), null, 2), capture.headers, secret).valid,
    false,
    'a re-indented body would not verify',
  );

  // The copied headers, read back as a receiver would, carry both signature schemes that verify the copied body.
  assert.equal(seen.copiedHeaders, seen.shownHeaders);
  const headers = Object.fromEntries(
    seen.copiedHeaders.split('\n').map((line) => [line.slice(0, line.indexOf(': ')), line.slice(line.indexOf(': ') + 2)]),
  );
  assert.deepEqual(headers, Object.fromEntries(Object.entries(capture.headers).map(([k, v]) => [k, String(v)])));
  assert.equal(verifyWebhook(seen.copiedBody, headers, secret).valid, true);
  const { 'x-merx-signature': _merx, ...standardOnly } = headers;
  assert.deepEqual(verifyWebhook(seen.copiedBody, standardOnly, secret), { valid: true, scheme: 'standard', reason: 'ok' });
  for (const file of seen.screenshots) assert.ok(fs.statSync(file).size > 5_000, `${path.basename(file)} was taken`);
});

// 390 and 900 are the widths the issue measured; 360 is the narrowest the console promises.
for (const width of [360, 390, 900]) {
  test(`at ${width} px every main page fits the window, the orders table keeps its last column, the menu is reachable`, { skip }, async () => {
    const { options } = await fitWorld();
    const report = await checkWidth(options, width);
    assert.deepEqual(report.tooWide, [], 'no page is wider than the window');
    assert.deepEqual(
      report.lastOrderColumn,
      { header: 'Shipment', visible: true },
      "the orders table's last column can be scrolled into view inside its box",
    );
    if (width >= 900) assert.equal(report.lastColumnWhole, true, 'from 900 px the orders table fits whole, no sideways scrolling');
    assert.equal(report.sinkShown, true, "the subscription's Debug sink tab shows its raw capture");
    assert.equal(report.menuButtonShown, width < 760, 'the sidebar folds into a Menu button on narrow screens only');
    assert.equal(report.menuReached, true, 'the navigation reaches the Jobs page');
    for (const file of report.screenshots) assert.ok(fs.statSync(file).size > 5_000, `${path.basename(file)} was taken`);
  });
}

test('j and k move through a list as soon as it is shown, and leave typing in a search box alone', { skip }, async () => {
  const { options } = await fitWorld();
  const report = await useKeyboard(options);
  assert.deepEqual(report.rowsAfter, [0, 1, 2, 1], 'the first j selects the first row, then j/k move down and up');
  assert.match(report.openedPath, new RegExp(`^/admin/accounts/${options.accountId}/orders/[0-9a-f-]{36}$`), 'Enter opens the row');
  assert.deepEqual(report.searchKept, { focused: true, value: 'jk' });
});

test(
  "webhook operations in the console: health panel, the flow's pause/resume switch, rate field and circuit breaker, deliveries filtered, a delivery's attempts, and a recovery from the Recover... dialog",
  { skip },
  async () => {
    const op = operator(svc.url);
    const account = await op.createAccount();
    const key = await op.issueKey(account.id);
    const endpoint = receiver.endpoint('console-ops');
    endpoint.script([], { status: 500, body: 'down for maintenance' });
    const { data: sub } = await createWebhook(svc.url, key, { url: endpoint.url, events: ['order.updated'] });
    const order = await op.checkout(account.id);
    for (let i = 0; i < 3; i++) await touchOrder(svc.url, key, order.id, `console ${i}`);
    await eventually(async () => {
      const res = await http(svc.url, 'GET', `/api/v1/webhooks/${sub.id}/deliveries`, { token: key });
      return res.body.data.filter((d: any) => d.last_status_code === 500).length === 3;
    }, 'three failed first attempts');
    endpoint.script([], { status: 200, body: 'ok' });
    const walked = await walkWebhookOps({
      browser,
      baseUrl: svc.url,
      adminToken: ADMIN_TOKEN,
      accountId: account.id,
      webhookId: sub.id,
      failed: 3,
      shotsDir: shots,
    });
    assert.equal(walked.recovered, 3);
    for (const file of walked.screenshots) assert.ok(fs.statSync(file).size > 5_000, `${path.basename(file)} was taken`);
    // What the console showed is what the API says.
    const after = await http(svc.url, 'GET', `/api/v1/webhooks/${sub.id}/deliveries`, { token: key });
    assert.ok(after.body.data.every((d: any) => d.status === 'delivered'));
    assert.equal(endpoint.requests.length, 6, 'three failed first attempts, three recovered');
    // The walk paused and resumed the flow from its switch: resumed, as the API says.
    const flow = await http(svc.url, 'GET', `/api/v1/webhooks/${sub.id}/flow`, { token: key });
    assert.equal(flow.body.data.paused, false);
    assert.equal(flow.body.data.rate_per_second, 25, 'the rate set in the console');
    assert.deepEqual([flow.body.data.circuit_breaker, flow.body.data.circuit], [true, 'closed'], 'the breaker switched on in the console');
  },
);
