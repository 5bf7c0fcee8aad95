// Issue 41 in the browser: the request log's "Writes only" and "Errors only"
// filters fold a poller's reads away, and the keys tab shows each key's
// expiry. Used by test/console-browser.test.ts and scripts/screenshots.ts.
import path from 'node:path';
import assert from 'node:assert/strict';
import type { Browser } from 'playwright-core';
import { http, operator } from '../helpers/harness.ts';
import { eventually } from '../helpers/webhooks.ts';

export interface FirstDayOptions {
  browser: Browser;
  baseUrl: string;
  adminToken: string;
  shotsDir: string;
}

const WAIT = { timeout: 20_000 };

export async function runFirstDayScreens(options: FirstDayOptions) {
  const op = operator(options.baseUrl);
  const account = await op.createAccount({ name: 'Listening Shop' });
  const order = await op.checkout(account.id);
  const issued = await op.call('POST', `/accounts/${account.id}/keys`, {
    name: 'merx listen',
    preset: 'fulfilment',
    expires_at: new Date(Date.now() + 7 * 86_400_000).toISOString(),
  });
  const key = issued.key as string;
  // What a poller and a person leave in the log: eight polls of the feed, a write, a refused write.
  for (let i = 0; i < 8; i++) await http(options.baseUrl, 'GET', '/api/v1/events?limit=200', { token: key });
  assert.equal((await http(options.baseUrl, 'PATCH', `/api/v1/orders/${order.id}`, { token: key, body: { admin_notes: 'gift wrap' } })).status, 200);
  assert.equal((await http(options.baseUrl, 'PATCH', `/api/v1/orders/${order.id}`, { token: key, body: { status: 'lost' } })).status, 400);
  await eventually(async () => (await op.call('GET', `/accounts/${account.id}/request-logs?limit=20`)).data.length >= 10, 'ten entries');

  const screenshots: string[] = [];
  const context = await options.browser.newContext({ viewport: { width: 1440, height: 900 }, baseURL: options.baseUrl });
  const page = await context.newPage();
  const shot = async (name: string) => {
    const file = path.join(options.shotsDir, `${name}.png`);
    await page.waitForLoadState('networkidle').catch(() => {});
    await page.screenshot({ path: file, fullPage: false });
    screenshots.push(file);
  };
  try {
    await page.goto('/admin');
    await page.getByLabel('Operator token').fill(options.adminToken);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Accounts', exact: true }).waitFor(WAIT);

    await page.goto(`/admin/accounts/${account.id}/requests`);
    const log = page.getByRole('table', { name: 'Request log' });
    await log.getByText('list_events').first().waitFor(WAIT);
    // The filter lives in the address: the box shows checked once the router has moved, a moment after the click.
    await page.getByLabel('Writes only').click();
    await page.getByLabel('Writes only').and(page.locator(':checked')).waitFor(WAIT);
    await log.getByText('update_order').first().waitFor(WAIT);
    await page.waitForFunction(
      () => !document.querySelector('table[aria-label="Request log"]')?.textContent?.includes('list_events'),
      undefined,
      WAIT,
    );
    assert.equal(await log.getByText('update_order').count(), 2, 'the write and the refused write');
    assert.match(page.url(), /writes=true/, 'the filter is in the address, to share');
    await shot('request-log-writes-only');
    await page.getByLabel('Errors only').click();
    await page.getByLabel('Errors only').and(page.locator(':checked')).waitFor(WAIT);
    // The filtered rows on screen, not a table between two answers (empty while the new page loads).
    await page.waitForFunction(
      () => {
        const text = document.querySelector('table[aria-label="Request log"]')?.textContent ?? '';
        return !text.includes(' 200') && text.includes('update_order');
      },
      undefined,
      WAIT,
    );
    assert.equal(await log.getByText('update_order').count(), 1, 'only the refused write');
    await log.getByText(/400 validation_failed/).waitFor(WAIT);

    await page.goto(`/admin/accounts/${account.id}/keys`);
    const row = page.getByRole('table', { name: 'API keys' }).getByRole('row', { name: /merx listen/ });
    await row.getByText('in 7 days').waitFor(WAIT);
    await shot('keys-expiry');
    return { accountId: account.id, screenshots };
  } catch (err) {
    await page.screenshot({ path: path.join(options.shotsDir, 'failure-first-day.png') }).catch(() => {});
    throw err;
  } finally {
    await context.close();
  }
}
