// The console on narrow screens, its debug sink's raw body and its keyboard,
// driven in a real browser. Used by test/console-browser.test.ts (which
// asserts on what these return) and by scripts/screenshots.ts (which keeps
// the pictures in docs/screenshots).
import assert from 'node:assert/strict';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';

const WAIT = { timeout: 20_000 };

export interface FitOptions {
  browser: Browser;
  baseUrl: string;
  adminToken: string;
  /** An account with orders, shipments' tab, stock and a subscription on the debug sink that has captured something. */
  accountId: string;
  webhookId: string;
  orderId: string;
  /** Where the screenshots go; none are taken without it. */
  shotsDir?: string;
}

export async function signedInPage(
  browser: Browser,
  baseUrl: string,
  adminToken: string,
  width: number,
  height = 844,
): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ viewport: { width, height }, baseURL: baseUrl });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: new URL(baseUrl).origin });
  const page = await context.newPage();
  await page.goto('/admin');
  await page.getByLabel('Operator token').fill(adminToken);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Accounts', exact: true }).waitFor(WAIT);
  return { context, page };
}

/** A screenshot of the page once the network is quiet, kept in `files` (none without a `dir`). */
export async function shot(page: Page, dir: string | undefined, name: string, files: string[]) {
  if (!dir) return;
  const file = path.join(dir, `${name}.png`);
  await page.waitForLoadState('networkidle').catch(() => {});
  await page.screenshot({ path: file });
  files.push(file);
}

/** The main pages of the console, as paths under /admin, with a heading or table each shows once loaded. */
export function mainPages(o: Pick<FitOptions, 'accountId' | 'webhookId' | 'orderId'>): Array<{ path: string; ready: string }> {
  const a = `/admin/accounts/${o.accountId}`;
  return [
    { path: '/admin/accounts', ready: 'table[aria-label="Accounts"]' },
    { path: `${a}/orders`, ready: 'table[aria-label="Orders"]' },
    { path: `${a}/orders/${o.orderId}`, ready: 'table[aria-label="Items"]' },
    { path: `${a}/shipments`, ready: 'form, .empty, table' },
    { path: `${a}/stock`, ready: 'table[aria-label="Stock"]' },
    { path: `${a}/webhooks`, ready: 'table' },
    { path: `${a}/webhooks/${o.webhookId}`, ready: 'ol[aria-label="Deliveries"], .empty' },
    { path: `${a}/keys`, ready: 'table[aria-label="API keys"]' },
    { path: `${a}/messages`, ready: 'h1' },
    { path: `${a}/overview`, ready: 'fieldset' },
    { path: '/admin/couriers', ready: 'fieldset' },
    { path: '/admin/jobs', ready: 'button' },
  ];
}

export interface WidthReport {
  width: number;
  /** Pages whose document is wider than the window, with both widths. */
  tooWide: Array<{ path: string; scrollWidth: number; innerWidth: number }>;
  /** The orders table's last header cell, once scrolled into view inside its box: on screen and not covered. */
  lastOrderColumn: { header: string; visible: boolean };
  /** The orders table's last column is on screen without scrolling its box sideways. */
  lastColumnWhole: boolean;
  /** The Jobs page reached from the navigation (through the Menu button where the sidebar is folded). */
  /** The subscription's Debug sink tab opened and showed a raw body. */
  sinkShown: boolean;
  menuReached: boolean;
  menuButtonShown: boolean;
  screenshots: string[];
}

/** Every main page at one window width: nothing wider than the window, the orders table whole, the menu usable. */
export async function checkWidth(options: FitOptions, width: number): Promise<WidthReport> {
  const { context, page } = await signedInPage(options.browser, options.baseUrl, options.adminToken, width);
  const screenshots: string[] = [];
  try {
    const tooWide: WidthReport['tooWide'] = [];
    for (const { path: at, ready } of mainPages(options)) {
      await page.goto(at);
      await page.locator(`main ${ready}`.replace(/, /g, ', main ')).first().waitFor(WAIT);
      await page.waitForLoadState('networkidle').catch(() => {});
      const sizes = await page.evaluate(() => ({ scrollWidth: document.documentElement.scrollWidth, innerWidth: window.innerWidth }));
      if (sizes.scrollWidth > sizes.innerWidth) tooWide.push({ path: at, ...sizes });
    }

    await page.goto(`/admin/accounts/${options.accountId}/orders`);
    const lastHeader = page.locator('table[aria-label="Orders"] thead th').last();
    await lastHeader.waitFor(WAIT);
    await shot(page, options.shotsDir, `orders-${width}px`, screenshots);
    const lastColumnWhole = await lastHeader.evaluate((th) => {
      const box = th.closest('.table-scroll') ?? th.closest('table')!;
      return th.getBoundingClientRect().right <= Math.min(box.getBoundingClientRect().right, window.innerWidth) + 0.5;
    });
    await lastHeader.scrollIntoViewIfNeeded();
    const lastOrderColumn = await lastHeader.evaluate((th) => {
      const box = th.getBoundingClientRect();
      const x = Math.min(box.right - 2, box.left + box.width / 2);
      const y = box.top + box.height / 2;
      const onScreen = box.width > 0 && box.left >= 0 && box.right <= window.innerWidth + 0.5 && y >= 0 && y <= window.innerHeight;
      const hit = document.elementFromPoint(x, y);
      return { header: th.textContent ?? '', visible: onScreen && !!hit && th.contains(hit) };
    });

    // The Debug sink tab of the subscription (a view inside its page, not a route of its own).
    await page.goto(`/admin/accounts/${options.accountId}/webhooks/${options.webhookId}`);
    const sinkTab = page.getByRole('button', { name: 'Debug sink' });
    await sinkTab.waitFor(WAIT);
    const sinkShown =
      (await sinkTab.isEnabled()) &&
      (await sinkTab
        .click()
        .then(() => page.getByTestId('sink-raw-body').first().waitFor(WAIT))
        .then(
          () => true,
          () => false,
        ));
    if (sinkShown) {
      const sink = await page.evaluate(() => ({ scrollWidth: document.documentElement.scrollWidth, innerWidth: window.innerWidth }));
      if (sink.scrollWidth > sink.innerWidth)
        tooWide.push({ path: `/admin/accounts/${options.accountId}/webhooks/${options.webhookId} (Debug sink)`, ...sink });
      // The picture starts at the capture (below the sticky top bar where there is one).
      await page
        .locator('li.capture')
        .first()
        .evaluate((li) => window.scrollTo(0, li.getBoundingClientRect().top + window.scrollY - 64));
      await shot(page, options.shotsDir, `debug-sink-${width}px`, screenshots);
    }

    await page.goto(`/admin/accounts/${options.accountId}/orders`);
    await page.locator('table[aria-label="Orders"]').waitFor(WAIT);
    const toggle = page.getByRole('button', { name: 'Menu' });
    const menuButtonShown = await toggle.isVisible();
    if (menuButtonShown) {
      await toggle.click();
      await shot(page, options.shotsDir, `menu-${width}px`, screenshots);
    }
    await page
      .getByRole('navigation', { name: 'Main' })
      .getByRole('link', { name: 'Jobs' })
      .click({ timeout: 5_000 })
      .catch(() => {});
    const menuReached = await page
      .getByRole('heading', { name: 'Jobs' })
      .waitFor({ timeout: 5_000 })
      .then(
        () => true,
        () => false,
      );
    if (menuReached) assert.equal(await page.getByRole('button', { name: 'Close' }).isVisible(), false, 'picking a page folds the menu again');
    return { width, tooWide, lastOrderColumn, lastColumnWhole, sinkShown, menuReached, menuButtonShown, screenshots };
  } finally {
    await context.close();
  }
}

export interface SinkReport {
  /** What the Debug sink tab shows as the raw body, and what its copy buttons put on the clipboard. */
  shownBody: string;
  copiedBody: string;
  shownHeaders: string;
  copiedHeaders: string;
  screenshots: string[];
}

/** The subscription's Debug sink tab: the newest capture's raw body and headers, shown and copied. */
export async function readSink(options: FitOptions, width = 1280): Promise<SinkReport> {
  const { context, page } = await signedInPage(options.browser, options.baseUrl, options.adminToken, width, 900);
  const screenshots: string[] = [];
  try {
    await page.goto(`/admin/accounts/${options.accountId}/webhooks/${options.webhookId}`);
    await page.getByRole('button', { name: 'Debug sink' }).click();
    const capture = page.getByRole('list', { name: 'Captured requests' }).locator('li.capture').first();
    const raw = capture.getByTestId('sink-raw-body');
    await raw.waitFor(WAIT);
    const shownBody = (await raw.textContent()) ?? '';
    const rawPart = capture.getByRole('region', { name: 'Raw body' });
    await rawPart.getByRole('button', { name: 'Copy raw body' }).click();
    await rawPart.getByRole('button', { name: 'Copied' }).waitFor(WAIT);
    const copiedBody = await page.evaluate(() => navigator.clipboard.readText());
    await capture.getByText(/^Headers \(\d+\)$/).click();
    const headers = capture.getByTestId('sink-headers');
    await headers.waitFor(WAIT);
    const shownHeaders = (await headers.textContent()) ?? '';
    const headersPart = capture.getByRole('region', { name: 'Headers' });
    await headersPart.getByRole('button', { name: 'Copy headers' }).click();
    await headersPart.getByRole('button', { name: 'Copied' }).waitFor(WAIT);
    const copiedHeaders = await page.evaluate(() => navigator.clipboard.readText());
    await capture.evaluate((li) => li.scrollIntoView({ block: 'start' }));
    await shot(page, options.shotsDir, 'debug-sink-raw', screenshots);
    return { shownBody, copiedBody, shownHeaders, copiedHeaders, screenshots };
  } finally {
    await context.close();
  }
}

export interface KeyboardReport {
  /** The focused row's index in the orders table after each key, pressed with nothing focused first. */
  rowsAfter: Array<number | null>;
  /** Where Enter led. */
  openedPath: string;
  /** The search box after typing "jk" into it: still focused, holding the letters. */
  searchKept: { focused: boolean; value: string };
}

/** j/k on the orders list right after it is shown, without clicking anything first. */
export async function useKeyboard(options: FitOptions): Promise<KeyboardReport> {
  const { context, page } = await signedInPage(options.browser, options.baseUrl, options.adminToken, 1280, 900);
  try {
    await page.goto(`/admin/accounts/${options.accountId}/orders`);
    await page.locator('table[aria-label="Orders"] tbody tr').nth(2).waitFor(WAIT);
    const focusedRow = () =>
      page.evaluate(() => {
        const rows = [...document.querySelectorAll('table[aria-label="Orders"] tbody tr')];
        const i = rows.indexOf(document.activeElement as Element);
        return i < 0 ? null : i;
      });
    const rowsAfter: Array<number | null> = [];
    for (const key of ['j', 'j', 'j', 'k']) {
      await page.keyboard.press(key);
      rowsAfter.push(await focusedRow());
    }
    await page.keyboard.press('Enter');
    if (rowsAfter.at(-1) !== null) await page.getByRole('heading', { name: /Order #\d+/ }).waitFor(WAIT);
    const openedPath = new URL(page.url()).pathname;

    await page.goto(`/admin/accounts/${options.accountId}/orders`);
    const search = page.getByLabel('Search orders');
    await search.waitFor(WAIT);
    await search.click();
    await page.keyboard.type('jk');
    const searchKept = await search.evaluate((input: HTMLInputElement) => ({ focused: document.activeElement === input, value: input.value }));
    return { rowsAfter, openedPath, searchKept };
  } finally {
    await context.close();
  }
}
