// EXTENSIONS 8 in the browser: on an account's Orders page the operator
// chooses orders (one by one, then every order matching the filters) and
// creates their waybills in one batch; the batch page counts live, shows each
// item's result and the failed ones' errors in words, downloads one PDF of
// every label, and "Retry failed" makes a new batch of the failed items.
// Used by test/console-batches-browser.test.ts and scripts/screenshots.ts.
import path from 'node:path';
import fs from 'node:fs';
import assert from 'node:assert/strict';
import type { Browser } from 'playwright-core';
import { operator } from '../helpers/harness.ts';
import { shot, signedInPage } from './console-fit.ts';

export interface BatchFlowOptions {
  browser: Browser;
  baseUrl: string;
  adminToken: string;
  shotsDir: string;
}

const WAIT = { timeout: 20_000 };

export async function runBatchFlow(options: BatchFlowOptions) {
  const op = operator(options.baseUrl);
  const account = await op.createAccount({ name: 'Batch Shop' });
  for (const slug of ['courier_a', 'courier_b']) await op.call('PUT', `/accounts/${account.id}/couriers/${slug}`, { enabled: true });
  const shipping = (courier_slug: string | null) => ({
    address: 'ul. Vitosha 1',
    city: 'Sofia',
    zip: '1000',
    courier_slug,
    courier_delivery_mode: 'office',
    courier_office_id: 101,
  });
  // Six orders ready to ship, one with no courier chosen at checkout and one with a courier the account has not enabled.
  for (let i = 0; i < 6; i++) await op.checkout(account.id, { shipping: shipping(i % 2 ? 'courier_a' : 'courier_b') });
  await op.checkout(account.id, { shipping: shipping(null) });
  await op.checkout(account.id, { shipping: shipping('courier_c') });
  const screenshots: string[] = [];
  const { context, page } = await signedInPage(options.browser, options.baseUrl, options.adminToken, 1440, 900);
  try {
    // One by one: two orders chosen, then the choice cleared.
    await page.goto(`/admin/accounts/${account.id}/orders`);
    const table = page.getByRole('table', { name: 'Orders' });
    await table.getByRole('checkbox').first().waitFor(WAIT);
    await table.getByRole('checkbox').nth(0).check();
    await table.getByRole('checkbox').nth(1).check();
    await page.getByTestId('chosen-orders').filter({ hasText: '2 chosen' }).waitFor(WAIT);
    await page.getByRole('button', { name: 'Clear' }).click();
    // Every order matching the filters (status new: all eight).
    await page.getByLabel('Status').selectOption('new');
    await page.getByRole('button', { name: /Choose every order matching/ }).click();
    await page.getByTestId('chosen-orders').filter({ hasText: '8 chosen' }).waitFor(WAIT);
    await shot(page, options.shotsDir, 'batch-orders-chosen', screenshots);
    await page.getByRole('button', { name: 'Create waybills (8)' }).click();

    // The batch page: live counts until it finishes, then each item's result.
    await page.waitForURL(/\/batches\/[0-9a-f-]{36}$/, WAIT);
    const batchId = page.url().split('/').at(-1)!;
    await page.getByTestId('batch-pending').filter({ hasText: /^0$/ }).waitFor(WAIT);
    const counts = {
      succeeded: await page.getByTestId('batch-succeeded').textContent(),
      failed: await page.getByTestId('batch-failed').textContent(),
    };
    assert.deepEqual(counts, { succeeded: '6', failed: '2' });
    const items = page.getByRole('table', { name: 'Batch items' });
    await items.getByText('Something is missing or wrong: courier is required').waitFor(WAIT);
    await items.getByText(/Something is missing or wrong: the account has not enabled courier_c/).waitFor(WAIT);
    await shot(page, options.shotsDir, 'batch-done', screenshots);

    // One PDF of the six labels.
    const [download] = await Promise.all([page.waitForEvent('download', WAIT), page.getByRole('button', { name: 'Download labels' }).click()]);
    assert.equal(download.suggestedFilename(), `batch-${batchId}.pdf`);
    const pdf = path.join(options.shotsDir, 'labels.pdf');
    await download.saveAs(pdf);
    const labels = fs.readFileSync(pdf);
    fs.rmSync(pdf);

    // The failed items again, as a new batch, once the operator enabled courier_c.
    await op.call('PUT', `/accounts/${account.id}/couriers/courier_c`, { enabled: true });
    await page.getByLabel('Result').selectOption('failed');
    await page.getByRole('button', { name: 'Retry failed (2)' }).click();
    await page.waitForURL((url) => !url.pathname.endsWith(batchId) && /\/batches\/[0-9a-f-]{36}$/.test(url.pathname), WAIT);
    const retryId = page.url().split('/').at(-1)!;
    // The new batch on screen first: the URL changes before the page renders it, and the old batch also showed 0 pending.
    await page.getByTestId('batch-total').filter({ hasText: /^2$/ }).waitFor(WAIT);
    await page.getByTestId('batch-pending').filter({ hasText: /^0$/ }).waitFor(WAIT);
    assert.equal(await page.getByTestId('batch-succeeded').textContent(), '1', 'courier_c now ships; the order with no courier still fails');
    await shot(page, options.shotsDir, 'batch-retry', screenshots);
    return { accountId: account.id, batchId, retryId, labels, screenshots };
  } catch (err) {
    await page.screenshot({ path: path.join(options.shotsDir, 'failure.png'), fullPage: true }).catch(() => {});
    throw err;
  } finally {
    await context.close();
  }
}
