// Issue 41, item 8, in the browser at 1440 and 390 px: answers said in words
// (recording stock, the shipment preview, the created waybill), a slow
// courier's call in progress, "office 104" said once, search boxes as wide as
// their placeholders, the keys table in a line or two, the console's changes
// attributed to the merchant, and an unknown account said once, without tabs.
// `slowCourier` is courier_a behind a proxy that answers late (a real HTTP
// courier, test/console-rough-edges.test.ts). Used by that test and npm run screenshots.
import path from 'node:path';
import assert from 'node:assert/strict';
import type { Browser, Page } from 'playwright-core';
import { operator } from '../helpers/harness.ts';

export interface RoughEdgesOptions {
  browser: Browser;
  baseUrl: string;
  adminToken: string;
  shotsDir: string;
}

const WAIT = { timeout: 30_000 };

async function signIn(page: Page, token: string) {
  await page.goto('/admin');
  await page.getByLabel('Operator token').fill(token);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Accounts', exact: true }).waitFor(WAIT);
}

/** Inputs whose placeholder is wider than the box that shows it. */
async function cutPlaceholders(page: Page) {
  return page.evaluate(() => {
    const canvas = document.createElement('canvas').getContext('2d')!;
    return [...document.querySelectorAll<HTMLInputElement>('input[placeholder]')]
      .filter((input) => input.offsetParent !== null)
      .filter((input) => {
        const style = getComputedStyle(input);
        canvas.font = `${style.fontSize} ${style.fontFamily}`;
        const room = input.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
        return canvas.measureText(input.placeholder).width > room + 1;
      })
      .map((input) => input.placeholder);
  });
}

/** How many lines each cell's content takes, by column header, in the row of a table that holds `text`. */
async function linesOfRow(page: Page, table: string, text: string) {
  return page.getByRole('table', { name: table }).evaluate((el, text) => {
    const headers = [...el.querySelectorAll('thead th')].map((th) => th.textContent.trim());
    const row = [...el.querySelectorAll('tbody tr')].find((tr) => tr.textContent.includes(text))!;
    const cells = [...row.querySelectorAll('td')];
    return Object.fromEntries(
      cells.map((td, i) => {
        const content = (td.firstElementChild ?? td) as HTMLElement;
        const style = getComputedStyle(content);
        const line = parseFloat(style.lineHeight) || parseFloat(style.fontSize) * 1.25;
        return [headers[i], Math.round(content.getBoundingClientRect().height / line)];
      }),
    );
  }, text);
}

export async function walkRoughEdges(options: RoughEdgesOptions) {
  const op = operator(options.baseUrl);
  const account = await op.createAccount({ name: 'Rough Edges Shop' });
  await op.call('PUT', `/accounts/${account.id}/couriers/courier_a`, { enabled: true });
  const product = await op.createProduct(account.id, { name: 'Enamel mug', sku: 'MUG-ENAMEL' });
  await op.issueKey(account.id, { preset: 'fulfilment' });
  await op.issueKey(account.id, { scopes: ['orders:read', 'orders:write', 'products:read'] });
  const screenshots: string[] = [];
  for (const width of [1440, 390]) {
    const order = await op.checkout(account.id);
    const context = await options.browser.newContext({ viewport: { width, height: 900 }, baseURL: options.baseUrl });
    const page = await context.newPage();
    const shot = async (name: string) => {
      const file = path.join(options.shotsDir, `${name}${width === 1440 ? '' : `-${width}px`}.png`);
      await page.screenshot({ path: file });
      screenshots.push(file);
    };
    try {
      await signIn(page, options.adminToken);

      // The order: its office said once; the shipment preview in words; a slow courier's call in progress.
      await page.goto(`/admin/accounts/${account.id}/orders/${order.id}`);
      const facts = page.getByRole('region', { name: 'Order' });
      await facts.getByText('courier_a · office 101').waitFor(WAIT);
      assert.doesNotMatch(await facts.innerText(), /office office/);
      const shipment = page.getByRole('region', { name: 'Shipment' });
      await shipment.getByRole('button', { name: 'Preview' }).click();
      const preview = shipment.getByRole('status').filter({ hasText: 'Preview:' });
      await preview.waitFor(WAIT);
      assert.match(
        await preview.innerText(),
        /^Preview: courier_a would create a waybill, delivered to office 101, .*cash on delivery 12\.50.*Nothing was sent to the courier\.$/,
      );
      assert.equal(await shipment.locator('pre').count(), 0, 'no JSON');
      if (width === 390) await preview.scrollIntoViewIfNeeded().then(() => shot('shipment-preview'));
      await shipment.getByRole('button', { name: 'Create shipment' }).click();
      const progress = shipment.getByRole('status', { name: 'Courier call' });
      await progress.getByText(/Creating the waybill at courier_a…/).waitFor(WAIT);
      await progress.getByText(/\d s/).waitFor(WAIT); // it counts while the courier keeps us waiting
      if (width === 1440) await shot('courier-progress');
      const created = shipment.getByRole('status').filter({ hasText: 'Waybill created' });
      await created.waitFor(WAIT);
      assert.match(await created.innerText(), /^Waybill created: courier_a \S+, delivered to office 101, cash on delivery 12\.50\.$/);
      assert.equal(await progress.count(), 0, 'the progress goes when the answer comes');
      // What the console did is the merchant's, not "api".
      const history = page.getByRole('region', { name: 'History' });
      await history.getByText('merchant').first().waitFor(WAIT);
      assert.doesNotMatch(await history.innerText(), /· api\b/);
      if (width === 1440) await shot('shipment-preview');

      // Stock: the preview and the recording said in words, with the stock before and after.
      await page.goto(`/admin/accounts/${account.id}/stock`);
      const form = page.getByRole('form', { name: 'Record a movement' });
      await form.getByRole('combobox').first().selectOption(product.id);
      await form.getByLabel('Quantity').fill('5');
      await form.getByRole('button', { name: 'Preview' }).click();
      await form.getByRole('status').filter({ hasText: 'Preview:' }).waitFor(WAIT);
      const said = await form.getByRole('status').innerText();
      const was = /goes from (\d+) to (\d+)/.exec(said);
      const expected = was ? `goes from ${was[1]} to ${Number(was[1]) + 5} in stock` : 'starts being tracked with 5 in stock';
      assert.ok(said.includes(`a delivery of 5; Enamel mug ${expected}. Nothing was recorded.`), said);
      await form.getByRole('button', { name: 'Record' }).click();
      // hasText is a case-blind substring: 'Recorded' would match the preview's "Nothing was recorded."
      const recorded = form.getByRole('status').filter({ hasText: /^Recorded / });
      await recorded.waitFor(WAIT);
      assert.match(await recorded.innerText(), /^Recorded a delivery of \+5\. Enamel mug(: \d+ → \d+| is tracked now, 5) in stock\.$/);
      assert.equal(await form.locator('pre').count(), 0, 'no JSON');
      await recorded.evaluate((el) => el.scrollIntoView({ block: 'center' }));
      await shot('stock-recorded');

      // Search boxes show their whole placeholder.
      for (const where of ['/admin/accounts', `/admin/accounts/${account.id}/orders`, `/admin/accounts/${account.id}/requests`]) {
        await page.goto(where);
        await page.locator('input[placeholder]').first().waitFor(WAIT);
        assert.deepEqual(await cutPlaceholders(page), [], `${where} at ${width} px`);
      }

      // The keys table: scopes in a line or two, dates on one line.
      await page.goto(`/admin/accounts/${account.id}/keys`);
      await page.getByRole('table', { name: 'API keys' }).getByText('orders read/write · products read').waitFor(WAIT);
      for (const scopes of ['orders read/write · products read', 'fulfilment preset']) {
        const lines = await linesOfRow(page, 'API keys', scopes);
        assert.ok(lines.Scopes <= 2, `${scopes}: ${lines.Scopes} lines at ${width} px`);
        assert.equal(lines.Created, 1, `created takes ${lines.Created} lines`);
        assert.equal(lines['Last used'], 1);
      }
      await shot('keys');

      // An unknown account: said once, no tabs, no filters.
      await page.goto('/admin/accounts/00000000-0000-4000-8000-000000000000/orders');
      await page.getByRole('heading', { name: 'No such account' }).waitFor(WAIT);
      await page.waitForLoadState('networkidle');
      assert.equal(await page.getByRole('alert').count(), 1, 'the 404 once');
      assert.match(await page.getByRole('alert').innerText(), /not found.*404/);
      assert.equal(await page.getByRole('navigation', { name: 'Account' }).count(), 0, 'no tabs');
      assert.equal(await page.locator('input, select').count(), 0, 'no filters');
      if (width === 1440) await shot('unknown-account');
    } catch (err) {
      await page.screenshot({ path: path.join(options.shotsDir, `failure-rough-edges-${width}.png`) }).catch(() => {});
      throw err;
    } finally {
      await context.close();
    }
  }
  return { screenshots };
}
