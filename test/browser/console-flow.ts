// The operator console driven as a person would, end to end: sign in, create
// an account, issue a key, subscribe the debug sink, send a test event and see
// it in the deliveries timeline, make a delivery fail and retry it, create a
// shipment and watch the courier move it. Used by test/console-browser.test.ts
// and by scripts/screenshots.ts, which keeps the pictures in docs/screenshots.
import assert from 'node:assert/strict';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';

export interface FlowOptions {
  browser: Browser;
  baseUrl: string;
  adminToken: string;
  /** Where the screenshots go (one PNG per main screen). */
  shotsDir: string;
  /** An https endpoint the service may call that answers 404: the delivery that fails and is retried. */
  failingUrl: string;
}

export interface FlowResult {
  accountId: string;
  apiKey: string;
  webhookId: string;
  shipmentId: string;
  screenshots: string[];
  /** Requests the page made to any other origin (must be none: the console works offline). */
  foreignRequests: string[];
}

const WAIT = { timeout: 20_000 };

export async function runConsoleFlow(options: FlowOptions): Promise<FlowResult> {
  const context = await options.browser.newContext({ viewport: { width: 1440, height: 900 }, baseURL: options.baseUrl });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: options.baseUrl });
  const page = await context.newPage();
  const foreignRequests: string[] = [];
  const origin = new URL(options.baseUrl).origin;
  page.on('request', (request) => {
    const url = request.url();
    if (!url.startsWith(origin) && !url.startsWith('data:') && !url.startsWith('blob:')) foreignRequests.push(url);
  });
  const pageErrors: string[] = [];
  page.on('pageerror', (err) => pageErrors.push(err.message));
  page.on('console', (message) => {
    if (message.type() === 'error' && /Content Security Policy/.test(message.text())) pageErrors.push(message.text());
  });
  const screenshots: string[] = [];
  const shot = async (name: string) => {
    const file = path.join(options.shotsDir, `${name}.png`);
    await page.waitForLoadState('networkidle').catch(() => {});
    await page.screenshot({ path: file });
    screenshots.push(file);
  };

  try {
    // Sign in with the operator token.
    await page.goto('/admin');
    await page.getByRole('heading', { name: /operator console/ }).waitFor(WAIT);
    await page.getByLabel('Operator token').fill(options.adminToken);
    await shot('sign-in');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Accounts', exact: true }).waitFor(WAIT);

    // A new account, its couriers and some orders.
    const shop = `Browser Shop ${Math.random().toString(36).slice(2, 7)}`;
    await page.getByRole('button', { name: 'New account' }).click();
    await page.getByLabel('Shop name').fill(shop);
    await page.getByLabel('Owner email').fill(`owner-${Date.now()}@example.com`);
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.getByRole('heading', { name: shop }).waitFor(WAIT);
    const accountId = /\/accounts\/([0-9a-f-]{36})\//.exec(page.url())![1];
    for (const slug of ['courier_a', 'courier_c']) {
      const box = page.getByRole('group', { name: 'Courier integrations' }).getByLabel(slug);
      await box.check();
      await page.waitForFunction(
        (s) => {
          const label = [...document.querySelectorAll('fieldset[aria-label="Courier integrations"] label')].find((l) => l.textContent?.includes(s));
          return (label?.querySelector('input') as HTMLInputElement | null)?.checked === true;
        },
        slug,
        WAIT,
      );
    }
    await page.getByLabel('Orders to add').fill('120');
    await page.getByRole('button', { name: 'Load synthetic orders' }).click();
    await page.getByText('"orders": 120').waitFor(WAIT);
    await page.goto(`/admin/accounts/${accountId}/overview`);
    await page.getByRole('group', { name: 'Courier integrations' }).waitFor(WAIT);
    await shot('account-settings');

    // Issue an API key: shown once, with a copy button.
    await page.getByRole('link', { name: 'API keys' }).click();
    await page.getByLabel('Name').fill('warehouse ERP');
    await page.getByLabel('Expires').selectOption({ label: 'in 30 days' });
    await page.getByRole('button', { name: 'Issue key' }).click();
    const issued = page.getByTestId('issued-key');
    await issued.waitFor(WAIT);
    const apiKey = (await issued.textContent())!.trim();
    assert.match(apiKey, /^merx_[A-Za-z0-9]{40}$/);
    await page.getByRole('button', { name: 'Copy' }).click();
    await page.getByRole('button', { name: 'Copied' }).waitFor(WAIT);
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), apiKey, 'the copy button puts the key on the clipboard');
    await shot('key-issued');
    await page.getByRole('button', { name: 'I have stored it' }).click();
    await page
      .getByRole('table', { name: 'API keys' })
      .getByText(`${apiKey.slice(0, 11)}…`)
      .waitFor(WAIT);
    await page
      .getByRole('table', { name: 'API keys' })
      .getByRole('row', { name: /warehouse ERP/ })
      .getByText('in 30 days')
      .waitFor(WAIT);

    // A subscription on the debug sink, a test event, the timeline and the sink's capture.
    await page.getByRole('link', { name: 'Webhooks' }).click();
    await page.getByRole('button', { name: 'New subscription' }).click();
    await page.getByRole('button', { name: 'Create subscription' }).click();
    await page.getByRole('heading', { name: 'Signing secret' }).waitFor(WAIT);
    const secret = (await page.locator('dialog[open] .secret code').textContent())!.trim();
    assert.match(secret, /^[0-9a-f]{64}$/);
    await page.getByRole('button', { name: 'Done' }).click();
    const webhookId = /\/webhooks\/([0-9a-f-]{36})/.exec(page.url())![1];
    const timeline = page.getByRole('list', { name: 'Deliveries' });
    await page.getByRole('button', { name: 'Send test event' }).click();
    await timeline.locator('li[data-status="delivered"]').first().waitFor(WAIT);
    await page.getByRole('button', { name: 'Debug sink' }).click();
    const capture = page.getByRole('list', { name: 'Captured requests' }).locator('li').first();
    await capture.waitFor(WAIT);
    assert.match((await capture.textContent())!, /"event": "test"/);
    await shot('debug-sink');
    await page.getByRole('button', { name: 'Deliveries' }).click();

    // Make a delivery fail (an endpoint that answers 404), see it pending with the 404, then point it back at the sink and retry it.
    await page.getByRole('button', { name: 'Edit' }).click();
    const edit = page.getByRole('dialog', { name: 'Edit subscription' });
    await edit.getByLabel("Deliver to this service's debug sink").uncheck();
    await edit.getByLabel('Endpoint URL').fill(options.failingUrl);
    await edit.getByRole('button', { name: 'Save changes' }).click();
    await edit.waitFor({ state: 'hidden', ...WAIT });
    await page.getByRole('button', { name: 'Send test event' }).click();
    const failed = timeline.locator('li[data-status="pending"]').first();
    await failed.waitFor(WAIT);
    await failed.getByText('404', { exact: true }).waitFor(WAIT);
    await shot('deliveries-failed');
    await page.getByRole('button', { name: 'Edit' }).click();
    await edit.getByLabel("Deliver to this service's debug sink").check();
    await edit.getByRole('button', { name: 'Save changes' }).click();
    await edit.waitFor({ state: 'hidden', ...WAIT });
    await failed.getByRole('button', { name: 'Retry now' }).click();
    await page.waitForFunction(
      () => document.querySelectorAll('ol[aria-label="Deliveries"] li[data-status="delivered"]').length === 2,
      undefined,
      WAIT,
    );
    assert.equal(await timeline.locator('li[data-status="pending"]').count(), 0, 'the retried delivery is delivered');
    await shot('deliveries-timeline');

    // Orders: filter, open one, create its shipment with courier_c, and watch the courier move it.
    await page.getByRole('link', { name: 'Orders' }).click();
    await page.getByRole('table', { name: 'Orders' }).waitFor(WAIT);
    await page.getByLabel('Status').selectOption('new');
    await page.waitForFunction(
      () => {
        const rows = [...document.querySelectorAll('table[aria-label="Orders"] tbody tr')];
        return rows.length > 0 && rows.every((r) => r.textContent?.includes('new'));
      },
      undefined,
      WAIT,
    );
    await shot('orders');
    // The keyboard: "/" reaches the search, ↓ moves between rows, Enter opens one.
    await page.locator('body').click({ position: { x: 5, y: 5 } });
    await page.keyboard.press('/');
    assert.equal(await page.evaluate(() => document.activeElement?.getAttribute('aria-label')), 'Search orders');
    await page.getByRole('table', { name: 'Orders' }).locator('tbody tr').first().focus();
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('ArrowUp');
    await page.keyboard.press('Enter');
    await page.getByRole('region', { name: 'Shipment' }).waitFor(WAIT);
    await page.getByRole('region', { name: 'Shipment' }).getByLabel('Courier').selectOption('courier_c');
    await page.getByRole('button', { name: 'Create shipment' }).click();
    await page.getByRole('link', { name: 'Open shipment →' }).waitFor(WAIT);
    await page.getByRole('region', { name: 'Shipment' }).getByText('pending').waitFor(WAIT);
    await page.getByRole('link', { name: 'Open shipment →' }).click();
    const shipmentId = /\/shipments\/([0-9a-f-]{36})/.exec(page.url())![1];
    const heading = page.getByRole('heading', { level: 2 }).first();
    await heading.getByText('pending').waitFor(WAIT);
    for (const [status, shown] of [
      ['in_transit', 'in transit'],
      ['delivered', 'delivered'],
    ]) {
      await page.getByLabel('Courier status').selectOption(status);
      await page.getByRole('button', { name: 'Report event' }).click();
      await heading.getByText(shown, { exact: true }).waitFor(WAIT);
    }
    await shot('shipment');
    const [download] = await Promise.all([page.waitForEvent('download', WAIT), page.getByRole('button', { name: 'Download label (PDF)' }).click()]);
    assert.match(download.suggestedFilename(), /^label_.+\.pdf$/);
    const pdf = await download.createReadStream().then(async (stream) => {
      const chunks: Buffer[] = [];
      for await (const chunk of stream) chunks.push(chunk as Buffer);
      return Buffer.concat(chunks);
    });
    assert.equal(pdf.subarray(0, 5).toString('latin1'), '%PDF-', "the label link gives the courier's PDF");
    await page.getByRole('link', { name: 'Order', exact: true }).click();
    await page
      .getByRole('heading', { name: /Order #\d+/ })
      .getByText('delivered')
      .waitFor(WAIT);

    // The other screens: stock, the courier simulator, jobs.
    await page.getByRole('link', { name: 'Stock' }).click();
    await page.getByRole('table', { name: 'Stock' }).waitFor(WAIT);
    const movement = page.getByRole('form', { name: 'Record a movement' });
    await movement.getByLabel('Quantity').fill('25');
    await movement.getByRole('button', { name: 'Preview' }).click();
    // Said in words (issue 41): the first delivery starts tracking the product.
    await movement
      .getByRole('status')
      .getByText(/starts being tracked with 25 in stock\. Nothing was recorded\./)
      .waitFor(WAIT);
    await movement.getByRole('button', { name: 'Record' }).click();
    await page.getByRole('table', { name: 'Movements' }).getByText('+25').waitFor(WAIT);
    await page.getByRole('table', { name: 'Stock' }).locator('tr', { hasText: 'Product 1' }).first().getByText('25', { exact: true }).waitFor(WAIT);
    await shot('stock');
    await page.locator('body').click({ position: { x: 5, y: 5 } });
    await page.keyboard.press('g');
    await page.keyboard.press('c');
    await page.getByRole('heading', { name: 'Courier simulator' }).waitFor(WAIT);
    const courierB = page.getByRole('group', { name: 'courier_b' });
    await courierB.getByLabel('Down (does not answer)').check();
    await page.getByRole('link', { name: 'Jobs' }).click();
    await page.getByRole('link', { name: 'Courier simulator' }).click();
    assert.equal(await courierB.getByLabel('Down (does not answer)').isChecked(), true, 'the mode stuck');
    await shot('courier-simulator');
    await courierB.getByLabel('Accepts').check();
    await page.getByRole('link', { name: 'Jobs' }).click();
    await page.getByRole('button', { name: 'Run webhook-deliveries now' }).click();
    await page.getByRole('list', { name: 'Runs' }).getByText('webhook-deliveries').waitFor(WAIT);
    await page.getByRole('link', { name: 'Accounts' }).click();
    // Tests running beside this one create accounts too, so the shop may be past
    // the first page of newest accounts: find it the way an operator would.
    await page.getByLabel('Search accounts').fill(shop);
    await page.getByRole('table', { name: 'Accounts' }).getByText(shop).waitFor(WAIT);
    await shot('accounts');

    assert.deepEqual(pageErrors, [], 'no script errors in the page');
    return { accountId, apiKey, webhookId, shipmentId, screenshots, foreignRequests };
  } catch (err) {
    // What the page showed when a step failed.
    await page.screenshot({ path: path.join(options.shotsDir, 'failure.png') }).catch(() => {});
    throw err;
  } finally {
    await context.close();
  }
}

export type { Page };
