// The console's webhook operations in a real browser (EXTENSIONS 6): a
// subscription whose endpoint failed, its health panel, the deliveries
// filtered and paged, a delivery's timeline of attempts, and a recovery from
// the "Recover..." dialog (window, statuses, dry-run count, start, progress),
// and the flow's pause/resume switch, rate field and circuit breaker (EXTENSIONS 9).
// Used by test/console-browser.test.ts (which asserts on what it returns) and
// by scripts/screenshots.ts (which keeps the pictures in docs/screenshots).
import assert from 'node:assert/strict';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { signedInPage } from './console-fit.ts';

const WAIT = { timeout: 30_000 };

export interface WebhookOpsOptions {
  browser: Browser;
  baseUrl: string;
  adminToken: string;
  accountId: string;
  /** A subscription with `failed` deliveries whose first attempt failed, whose endpoint answers 200 now. */
  webhookId: string;
  failed: number;
  shotsDir?: string;
}

export async function walkWebhookOps(o: WebhookOpsOptions): Promise<{ screenshots: string[]; recovered: number }> {
  const { context, page } = await signedInPage(o.browser, o.baseUrl, o.adminToken, 1440, 1000);
  const screenshots: string[] = [];
  const shot = async (name: string) => {
    if (!o.shotsDir) return;
    const file = path.join(o.shotsDir, `${name}.png`);
    await page.waitForLoadState('networkidle').catch(() => {});
    await page.screenshot({ path: file, fullPage: false });
    screenshots.push(file);
  };
  try {
    await page.goto(`/admin/accounts/${o.accountId}/webhooks/${o.webhookId}`);
    // The health panel: failures in a row and the outcomes chart.
    const health = page.getByRole('region', { name: 'Endpoint health' });
    await health.getByText(`${o.failed} failures in a row`).waitFor(WAIT);
    await health.getByRole('img', { name: 'Outcome chart' }).first().waitFor(WAIT);
    await shot('webhook-health');
    assert.match((await health.textContent())!, /0% success, \d+ attempts/);

    // EXTENSIONS 9, the flow: a pause/resume switch beside what is held.
    const flow = page.getByRole('region', { name: 'Flow' });
    const paused = flow.getByRole('switch', { name: 'Deliveries paused' });
    await flow.getByText('sending', { exact: true }).waitFor(WAIT);
    assert.equal(await paused.isChecked(), false);
    assert.match((await flow.textContent())!, /0 held.*circuit off/);
    const rate = flow.getByLabel('Rate per second');
    assert.equal(await rate.inputValue(), '');
    await rate.fill('25');
    await flow.getByRole('button', { name: 'Set rate' }).click();
    // Saved: the field shows the service's rate and the button waits for the next change.
    await page.waitForFunction(
      () => document.querySelector<HTMLButtonElement>('section[aria-label="Flow"] button[type="submit"]')?.disabled === true,
      null,
      WAIT,
    );
    assert.equal(await rate.inputValue(), '25');
    // The circuit breaker's switch: on, the circuit shows closed (nothing has failed since).
    const breaker = flow.getByRole('switch', { name: 'Circuit breaker' });
    assert.equal(await breaker.isChecked(), false);
    await breaker.click();
    await flow.getByText('circuit closed', { exact: true }).waitFor(WAIT);
    assert.equal(await breaker.isChecked(), true);
    await paused.click();
    await flow.getByText('paused', { exact: true }).waitFor(WAIT);
    await shot('webhook-flow-paused');
    await paused.click();
    await flow.getByText('sending', { exact: true }).waitFor(WAIT);

    // Filters and pages: pending only, 2 a page... the page size is the console's; the filter narrows to order.updated.
    const timeline = page.getByRole('list', { name: 'Deliveries' });
    await page.getByLabel('Delivery status').selectOption('pending');
    await page.getByLabel('Delivery event').selectOption('order.updated');
    await page.waitForFunction(
      (n) => document.querySelectorAll('ol[aria-label="Deliveries"] > li[data-status="pending"]').length === n,
      o.failed,
      WAIT,
    );

    // A delivery's timeline of attempts.
    const first = timeline.locator(':scope > li').first();
    // Out of the attempts the server's retry schedule gives (service info), not a number of the console's own.
    assert.match((await first.textContent())!, /attempt 1 of 6/);
    await first.getByText('Attempts', { exact: true }).click();
    const attempts = first.getByRole('list', { name: 'Attempts' });
    await attempts.locator('[data-testid="attempt"]').first().waitFor(WAIT);
    assert.match((await attempts.textContent())!, /#1\s*automatic/);
    await attempts.getByText('Request headers', { exact: false }).first().click();
    assert.match((await attempts.textContent())!, /x-merx-signature: t=\d+,v1=/);
    await shot('webhook-attempts');

    // Recover...: window and statuses, the dry-run count, start, progress to done.
    await page.getByRole('button', { name: 'Recover...' }).click();
    const dialog = page.getByRole('dialog', { name: 'Recover deliveries' });
    await dialog.getByLabel('pending').check();
    await dialog.getByTestId('recover-matched').getByText(`${o.failed}`, { exact: true }).waitFor(WAIT);
    await shot('webhook-recover-dry-run');
    await dialog.getByRole('button', { name: 'Start recovery' }).click();
    const progress = dialog.getByTestId('recovery-progress');
    await progress.getByText('done', { exact: true }).waitFor(WAIT);
    const text = (await progress.textContent())!;
    const recovered = Number(/(\d+) delivered/.exec(text)?.[1]);
    assert.match(text, new RegExp(`${o.failed} of ${o.failed} sent`));
    await shot('webhook-recovery-done');
    await dialog.getByRole('button', { name: 'Close' }).first().click();
    // The timeline shows the recovery's attempt.
    await page.getByLabel('Delivery status').selectOption('delivered');
    await page.waitForFunction(
      (n) => document.querySelectorAll('ol[aria-label="Deliveries"] > li[data-status="delivered"]').length === n,
      o.failed,
      WAIT,
    );
    const recoveredOne = timeline.locator(':scope > li').first();
    await recoveredOne.getByText('Attempts', { exact: true }).click();
    await recoveredOne.getByRole('list', { name: 'Attempts' }).getByText('recovery', { exact: true }).waitFor(WAIT);
    await shot('webhook-timeline-recovered');
    return { screenshots, recovered };
  } catch (err) {
    if (o.shotsDir) await page.screenshot({ path: path.join(o.shotsDir, 'webhook-ops-failure.png') }).catch(() => {});
    throw err;
  } finally {
    await context.close();
  }
}
